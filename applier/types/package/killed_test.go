package pkg_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/runner"
)

// slowPackage builds a package whose postinst marks its start, sleeps 3 s
// and marks its end, and serves it from a local repository; it returns
// the two marker files.
func slowPackage(t *testing.T, name string) (started, ended string) {
	t.Helper()
	purgeAfter(t, name)
	dir := kitDir(t)
	started, ended = filepath.Join(dir, "started"), filepath.Join(dir, "ended")
	root := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(
		"Package: "+name+"\nVersion: 1.0\nArchitecture: all\nMaintainer: pippet <pip@example.invalid>\nDescription: pippet test package with a slow postinst\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN", "postinst"), []byte(fmt.Sprintf(
		"#!/bin/sh\nset -e\nif [ \"$1\" = configure ]; then touch %s; sleep 3; touch %s; fi\n", started, ended)), 0o755))
	deb := filepath.Join(dir, name+"_1.0_all.deb")
	sh(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, deb)
	require.NoError(t, os.RemoveAll(root))
	repo(t, dir, deb)
	return started, ended
}

// TestInstallFinishesWhenTheReceiverIsKilled: the receiver is killed
// outright (SIGKILL) while apt-get installs a package whose postinst is
// still running: apt-get and dpkg run on to their end, as they do when
// Puppet dies, and the package ends installed and configured, not
// half-configured.
func TestInstallFinishesWhenTheReceiverIsKilled(t *testing.T) {
	needRoot(t)
	const name = "pipslowpkg"
	started, ended := slowPackage(t, name)
	recv := testutil.Receiver(t)

	cmd := exec.Command(recv, "--no-banner", "--state-dir", t.TempDir())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(stdin, `{"type":"package","title":"`+name+`","params":{"ensure":"installed"}}`+"\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 2*time.Minute, 20*time.Millisecond,
		"the postinst never started")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	assert.Eventually(t, func() bool { return status(t, name) == "ii 1.0" }, time.Minute, 100*time.Millisecond,
		"the package was left %q", status(t, name))
	assert.FileExists(t, ended, "the postinst ran to its end")
}

// TestInstallFinishesWhenApplyTimesOut: runner.Apply gives up on its
// deadline while the postinst runs and the runner replaces the receiver
// (its whole process group killed): the install still runs to its end.
func TestInstallFinishesWhenApplyTimesOut(t *testing.T) {
	needRoot(t)
	const name = "pipslowpkg2"
	started, ended := slowPackage(t, name)
	recv := testutil.Receiver(t)
	r := runner.New(runner.Options{Command: []string{recv, "--state-dir", t.TempDir()}})
	require.NoError(t, r.Register())
	defer r.Unregister()
	first := r.Pid()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				cancel() // the apply's deadline, once the postinst runs
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	_, err := runner.Apply(ctx, r, &runner.Resource{Type: "package", Title: name, Values: map[string]any{"ensure": "installed"}})
	require.ErrorIs(t, err, runner.ErrNoAnswer)

	// The next apply goes to a new receiver; the old one's group is gone.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel2()
	_, err = runner.Apply(ctx2, r, &runner.Resource{Type: "notify", Title: "after"})
	require.NoError(t, err)
	assert.NotEqual(t, first, r.Pid(), "the receiver was replaced")

	assert.Eventually(t, func() bool { return status(t, name) == "ii 1.0" }, time.Minute, 100*time.Millisecond,
		"the package was left %q", status(t, name))
	assert.FileExists(t, ended, "the postinst ran to its end")
}
