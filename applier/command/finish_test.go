package command_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/command"
)

// TestFinishOutlivesItsContext: a Finish command is not killed when its
// context ends: Run stops waiting and says so (ErrLeftRunning, naming the
// command and its pid), and the command runs to its end.
func TestFinishOutlivesItsContext(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "done")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := command.Run(ctx, &command.Cmd{Argv: []string{"sh", "-c", "sleep 1; echo finished > " + marker}, Finish: true})
	require.ErrorIs(t, err, command.ErrLeftRunning)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "(pid ")
	assert.Less(t, time.Since(start), 900*time.Millisecond, "Run stopped waiting at the context's end")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(marker)
		return string(b) == "finished\n"
	}, 10*time.Second, 20*time.Millisecond, "the command ran to its end")
}

// TestFinishRuns: a Finish command gets its input, its output (stdout
// apart when asked), its exit status, and its Timeout still ends it.
func TestFinishRuns(t *testing.T) {
	ctx := context.Background()
	res, err := command.Run(ctx, &command.Cmd{Argv: []string{"sh", "-c", "cat; echo err >&2; exit 3"}, Stdin: []byte("fed\n"), Finish: true})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Code)
	assert.Equal(t, "fed\nerr\n", string(res.Output))

	var stdout bytes.Buffer
	res, err = command.Run(ctx, &command.Cmd{Argv: []string{"sh", "-c", "echo listing; echo warning >&2"}, Stdout: &stdout, Finish: true})
	require.NoError(t, err)
	assert.Equal(t, "listing\n", stdout.String())
	assert.Equal(t, "warning\n", string(res.Output))

	res, err = command.Run(ctx, &command.Cmd{Argv: []string{"sh", "-c", "yes x | head -c 100000; echo END"}, MaxOutput: 10, Finish: true})
	require.NoError(t, err)
	assert.Equal(t, "x\nx\nx\nEND\n", string(res.Output))
	assert.True(t, res.Truncated)

	start := time.Now()
	_, err = command.Run(ctx, &command.Cmd{Argv: []string{"sleep", "30"}, Timeout: 200 * time.Millisecond, Finish: true})
	assert.True(t, errors.Is(err, command.ErrTimeout), "%v", err)
	assert.Less(t, time.Since(start), 5*time.Second)
}
