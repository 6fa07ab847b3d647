package puppetserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The TERM environment: a resource that would run for a minute, then one
// after it.
const atermEnv = "aterm"

const atermSite = `node default {
  $r = $facts['acore_root']
  exec { 'long': command => '/bin/sleep 60' }
  -> file { "${r}/after": content => "after\n" }
}
`

func init() {
	fixtures = append(fixtures, func(s *server) error {
		return write(filepath.Join(s.dir, "code", "environments", atermEnv, "manifests", "site.pp"), atermSite)
	})
}

// TestAgentTermDuringARun (issue 36 item 5): `receiver agent -t` told
// SIGTERM while a resource runs stops that resource, skips the rest,
// still writes and sends its report, removes its run lock and exits
// within seconds, not after the minute the resource would take.
func TestAgentTermDuringARun(t *testing.T) {
	s := need(t)
	n := newNode(t, s, uniqueName("aterm"))
	n.env = atermEnv
	require.NoError(t, os.MkdirAll(n.root, 0o755))
	vardir := filepath.Join(n.dir, "var")
	confdir := n.puppetConf(t, s, "receiver", vardir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, "agent", "-t", "--no-pluginsync", "--confdir", confdir,
		"--state-dir", filepath.Join(n.dir, "pippet-state"))
	cmd.Env = append(os.Environ(), "FACTER_acore_root="+n.root, "HOME="+n.dir)
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	lock := filepath.Join(vardir, "state", "agent_catalog_run.lock")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if b, err := exec.Command("pgrep", "-f", "-P", itoa(cmd.Process.Pid), "sleep 60").Output(); err == nil && len(b) > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the exec never started: %s", out.String())
		time.Sleep(100 * time.Millisecond)
	}
	_, err := os.Stat(lock)
	require.NoError(t, err, "the run holds its lock")
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	took := time.Since(start)
	assert.Less(t, took, 20*time.Second, "the run went on after TERM: %s", out.String())
	if ee, ok := err.(*exec.ExitError); ok {
		assert.NotEqual(t, -1, ee.ExitCode(), "killed by the signal: %s", out.String())
	}
	assert.NoFileExists(t, lock, out.String())
	assert.NoFileExists(t, filepath.Join(n.root, "after"), "the rest is skipped")
	report, err := os.ReadFile(filepath.Join(vardir, "state", "last_run_report.yaml"))
	require.NoError(t, err, out.String())
	assert.Contains(t, string(report), "Exec[long]")
}

func itoa(n int) string { return strconv.Itoa(n) }
