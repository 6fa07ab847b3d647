package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// runBounded runs the receiver with args and stdin, and fails the test
// (killing it) when it has not finished within limit.
func runBounded(t *testing.T, limit time.Duration, stdin string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	_ = cmd.Run()
	require.NoError(t, ctx.Err(), "the receiver was still running after %v: stderr %s", limit, e.String())
	return o.String(), e.String()
}

// TestFIFOsAreRefused (issue 36 item 5): a FIFO where a file_line,
// ini_setting or ini_subsetting edits a file, or as a concat_fragment's
// source, is refused at once ("not a regular file") as host and mount
// refuse one, instead of a read that waits for a writer forever (a user
// who can place a FIFO where root's run reads a file stalled root's
// run); the stream goes on to the next request.
func TestFIFOsAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o666))
	ok := filepath.Join(dir, "ok.ini")
	lines := []string{
		`{"type":"file_line","title":"l","params":{"path":"` + fifo + `","line":"x=1"}}`,
		`{"type":"ini_setting","title":"s","params":{"path":"` + fifo + `","section":"main","setting":"x","value":"1"}}`,
		`{"type":"ini_subsetting","title":"ss","params":{"path":"` + fifo + `","section":"main","setting":"x","subsetting":"-a"}}`,
		`{"type":"ini_setting","title":"after","params":{"path":"` + ok + `","section":"main","setting":"x","value":"1"}}`,
	}
	out, stderr := runBounded(t, 30*time.Second, strings.Join(lines, "\n")+"\n", "--no-banner", "--state-dir", t.TempDir())
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 4, stderr)
	for _, a := range as[:3] {
		assert.True(t, a.Failed, "%+v", a)
		require.NotNil(t, a.Exception)
		assert.Contains(t, *a.Exception, fifo+": not a regular file")
	}
	assert.True(t, as[3].Changed, "the stream goes on: %+v", as[3])

	target := filepath.Join(dir, "motd")
	cat := handCatalog(t,
		[3]any{"Concat_file", target, map[string]any{"path": target}},
		[3]any{"Concat_fragment", "a", map[string]any{"target": target, "source": fifo, "order": "1"}},
	)
	_, stderr = runBounded(t, 30*time.Second, "", "apply", "--state-dir", t.TempDir(), cat)
	assert.Contains(t, stderr, fifo+": not a regular file")
	assert.NoFileExists(t, target)
	_, err := os.Stat(fifo)
	require.NoError(t, err, "the FIFO is left alone")
}
