package integration

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// The flags that shape answers, against the real binary.
func TestAnswerFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		check  func(t *testing.T, root, out string)
		exists bool
	}{
		{"noop", []string{"--noop"}, func(t *testing.T, root, out string) {
			_, as := testutil.DecodeAnswers(t, out)
			require.Len(t, as, 1)
			assert.True(t, as[0].Noop)
			assert.False(t, as[0].Changed)
			assert.Contains(t, out, `"status":"noop"`)
		}, false},
		{"compat", []string{"--compat", "--no-banner"}, func(t *testing.T, root, out string) {
			assert.Equal(t, `{"resource":"File[`+root+`/a]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}`+"\n", out)
		}, true},
		{"default", nil, func(t *testing.T, root, out string) {
			banner, as := testutil.DecodeAnswers(t, out)
			assert.NotEmpty(t, banner)
			require.Len(t, as, 1)
			assert.Equal(t, `"x"`, string(as[0].ID))
			assert.Contains(t, out, `"events":[{"property":"ensure","previous":"absent","desired":"file"`)
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			in := `{"type":"file","title":"` + root + `/a","params":"{ensure: file}","id":"x"}` + "\n"
			out, stderr, code := run(t, root, strings.NewReader(in), tt.args...)
			assert.Equal(t, 0, code, stderr)
			tt.check(t, root, out)
			_, err := os.Stat(filepath.Join(root, "a"))
			assert.Equal(t, tt.exists, err == nil, "file exists: %v", err)
		})
	}
}

// SIGTERM while a resource runs: it is finished and answered, the next
// line is not read, the exit status is 0.
func TestSIGTERMFinishesResource(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "done")
	cmd, stdin, stdout, stderr := startReceiver(t, "--no-banner", "--log-level", "notice")
	started := filepath.Join(root, "started")
	slow := `{"type":"exec","title":"/bin/sh -c 'touch ` + started + `; sleep 1; touch ` + marker + `'","params":"{}"}` + "\n"
	_, err := io.WriteString(stdin, slow+`{"type":"notify","title":"never","params":"{}"}`+"\n")
	require.NoError(t, err)
	waitFor(t, started) // the exec is running
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	out, err := io.ReadAll(bufio.NewReader(stdout))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 1, "only the resource in progress is answered: %s", out)
	var a testutil.Answer
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &a))
	assert.True(t, a.Changed)
	assert.False(t, a.Failed)
	assert.FileExists(t, marker)
	assert.Contains(t, stderr.String(), "finishing the resource in progress")
}

// A second signal cancels the resource in progress: a long exec ends at
// once, answered as failed, and the receiver exits 0.
func TestSecondSignalCancels(t *testing.T) {
	cmd, stdin, stdout, stderr := startReceiver(t, "--no-banner", "--log-level", "notice")
	started := filepath.Join(t.TempDir(), "started")
	_, err := io.WriteString(stdin, `{"type":"exec","title":"/bin/sh -c 'touch `+started+`; sleep 30'","params":"{}"}`+"\n")
	require.NoError(t, err)
	waitFor(t, started)
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	out, err := io.ReadAll(stdout)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	assert.Less(t, time.Since(start), 10*time.Second)
	_, as := testutil.DecodeAnswers(t, string(out))
	require.Len(t, as, 1)
	assert.True(t, as[0].Failed)
	assert.Contains(t, *as[0].Exception, "cancel")
	assert.Contains(t, stderr.String(), "Notice: Caught TERM; finishing the resource in progress, then exiting")
	assert.Contains(t, stderr.String(), "Notice: Caught TERM again; cancelling the resource in progress")
}

// waitFor waits until path exists (a command under test has started).
func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

// A controller that goes away: the receiver's writes fail with EPIPE and
// it ends quietly with status 3, not killed by SIGPIPE.
func TestClosedStdout(t *testing.T) {
	cmd, stdin, stdout, stderr := startReceiver(t)
	buf := make([]byte, 80)
	_, err := stdout.Read(buf) // the banner
	require.NoError(t, err)
	require.NoError(t, stdout.Close())
	for i := 0; i < 3; i++ {
		if _, err := io.WriteString(stdin, "# keep going\nnotify x {}\n"); err != nil {
			break // it may already have gone
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode(), "exit status 3, not death by SIGPIPE")
	assert.Empty(t, stderr.String())
}
