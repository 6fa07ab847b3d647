package integration

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// Commands the receiver runs start with default signal dispositions: the
// receiver catches SIGPIPE rather than ignoring it, since an ignored
// disposition survives exec (and `yes | head -1` would then never end).
func TestCommandsStartWithDefaultSignals(t *testing.T) {
	root := t.TempDir()
	status := filepath.Join(root, "status")
	in := `{"type":"exec","title":"/bin/sh -c 'grep SigIgn /proc/self/status > ` + status + `'","params":"{}"}` + "\n" +
		`{"type":"exec","title":"/bin/sh -c 'yes | head -1'","params":"{timeout: 20}"}` + "\n"
	out, stderr, code := run(t, root, strings.NewReader(in), "--no-banner")
	require.Equal(t, 0, code, stderr)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 2, out)
	for _, a := range as {
		assert.False(t, a.Failed, "%s: %v", a.Resource, a.Exception)
	}
	b, err := os.ReadFile(status)
	require.NoError(t, err)
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "SigIgn:")), 16, 64)
	require.NoError(t, err, "%s", b)
	assert.Zero(t, mask&(1<<(uint(syscall.SIGPIPE)-1)), "SIGPIPE is ignored in the command: %s", b)
}

// pidAlive reports whether pid exists and is not a zombie.
func pidAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	waitFor(t, path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err, "%q", b)
	return pid
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for pidAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.False(t, pidAlive(pid), what)
}

// No command outlives the receiver: killed with SIGKILL while an exec runs,
// the command (in a session of its own) dies with it, so a controller's
// retry on a fresh receiver never runs it twice at once.
func TestCommandDiesWithKilledReceiver(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd, stdin, _, _ := startReceiver(t, "--no-banner")
	_, err := io.WriteString(stdin, `{"type":"exec","title":"/bin/sh -c 'echo $$ > `+pidFile+`.t; mv `+pidFile+`.t `+pidFile+`; exec sleep 60'","params":"{}"}`+"\n")
	require.NoError(t, err)
	pid := readPid(t, pidFile)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	waitGone(t, pid, "the exec's command outlived a SIGKILLed receiver")
}

// SIGHUP is SIGTERM: the resource in progress is finished and answered, the
// receiver exits 0; a second one cancels it and its command is gone.
func TestSIGHUPLikeSIGTERM(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(receiverBin, "--state-dir", t.TempDir(), "--no-banner", "--log-level", "notice")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	_, err = io.WriteString(stdin, `{"type":"exec","title":"/bin/sh -c 'echo $$ > `+pidFile+`.t; mv `+pidFile+`.t `+pidFile+`; sleep 60'","params":"{}"}`+"\n")
	require.NoError(t, err)
	pid := readPid(t, pidFile)
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	// A second signal sent before the first is taken would merge with it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "Caught HUP;") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Contains(t, stderr.String(), "Notice: Caught HUP; finishing the resource in progress, then exiting")
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	out, err := io.ReadAll(bufio.NewReader(stdout))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	_, as := testutil.DecodeAnswers(t, string(out))
	require.Len(t, as, 1, "the resource in progress is answered: %s", out)
	assert.True(t, as[0].Failed)
	waitGone(t, pid, "the cancelled command outlived the receiver")
}
