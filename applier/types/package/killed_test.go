package pkg_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildReceiver builds the receiver binary into dir.
func buildReceiver(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "receiver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pippet/pippet/cmd/receiver").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestInstallFinishesWhenTheReceiverIsKilled: the receiver is killed
// outright (SIGKILL) while apt-get installs a package whose postinst is
// still running: apt-get and dpkg run on to their end, as they do when
// Puppet dies, and the package ends installed and configured, not
// half-configured.
func TestInstallFinishesWhenTheReceiverIsKilled(t *testing.T) {
	needRoot(t)
	const name = "pipslowpkg"
	purgeAfter(t, name)
	dir := kitDir(t)
	started, ended := filepath.Join(dir, "started"), filepath.Join(dir, "ended")

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
	recv := buildReceiver(t, t.TempDir())

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
