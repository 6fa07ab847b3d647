package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/runner"
)

// processes lists the pids whose command line contains s.
func processes(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), s) && !pidZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func pidZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || len(b) < i+3 || b[i+2] == 'Z'
}

// The runner drives a receiver on another host through ssh, the fleet
// transport: applies, a connection killed mid-life (the next apply gets a
// fresh one), and Unregister leaving no ssh or receiver process on either
// side. The "other host" is a real sshd on a loopback port.
func TestRunnerOverSSH(t *testing.T) {
	s := testutil.StartSSHD(t)
	// A state directory unique to the test names the remote receiver's
	// processes, so they can be found on the "remote" side.
	state := filepath.Join(s.Workdir, "remote-state")
	rec := runner.New(runner.Options{
		Command:      s.Command(receiverBin, "--state-dir", state),
		StartTimeout: 30 * time.Second,
		StopTimeout:  5 * time.Second,
	})
	require.NoError(t, rec.Register())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	root := t.TempDir()
	for i := 0; i < 5; i++ {
		changed, err := runner.Apply(ctx, rec, &runner.Resource{Type: "file", Title: filepath.Join(root, "f"+strconv.Itoa(i)), Params: "{ensure: file, content: over ssh}"})
		require.NoError(t, err)
		assert.True(t, changed)
	}
	changed, err := runner.Apply(ctx, rec, &runner.Resource{Type: "file", Title: filepath.Join(root, "f0"), Params: "{ensure: file, content: over ssh}"})
	require.NoError(t, err)
	assert.False(t, changed, "unchanged the second time")
	b, err := os.ReadFile(filepath.Join(root, "f4"))
	require.NoError(t, err)
	assert.Equal(t, "over ssh", string(b))
	require.Len(t, processes(state), 2, "the receiver and the ssh client")

	// The connection dies: the ssh client is killed. The next apply runs
	// on a fresh connection and receiver; the old remote receiver ends
	// when sshd sees the connection gone.
	first := rec.Pid()
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	var lastErr error
	for i := 0; i < 3; i++ {
		if _, lastErr = runner.Apply(ctx, rec, &runner.Resource{Type: "file", Title: filepath.Join(root, "after"), Params: "{ensure: file}"}); lastErr == nil {
			break
		}
		assert.ErrorIs(t, lastErr, runner.ErrReceiverDied, "a dead connection is a dead receiver")
	}
	require.NoError(t, lastErr)
	assert.NotEqual(t, first, rec.Pid(), "a fresh child")
	assert.FileExists(t, filepath.Join(root, "after"))

	require.NoError(t, rec.Unregister())
	require.Eventually(t, func() bool { return len(processes(state)) == 0 }, 15*time.Second, 50*time.Millisecond,
		"no ssh client or remote receiver left: %v", processes(state))
}
