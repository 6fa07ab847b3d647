package runner

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, l *LineReader) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got []string
	for {
		line, err := l.ReadLine(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, string(line))
	}
}

func TestLineReaderSplitsLines(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		want  []string
		end   error
	}{
		{"lines", "a\nbb\n\nccc\n", 0, []string{"a", "bb", "", "ccc"}, io.EOF},
		{"CRLF", "a\r\nb\r\n", 0, []string{"a", "b"}, io.EOF},
		{"partial last line", "a\n{\"resource\":", 0, []string{"a", `{"resource":`}, io.EOF},
		{"long line within the limit", strings.Repeat("x", 200_000) + "\nz\n", 300_000, []string{strings.Repeat("x", 200_000), "z"}, io.EOF},
		{"too long", "ok\n" + strings.Repeat("x", 100_000) + "\nnever\n", 70_000, []string{"ok"}, ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.input), iotest.OneByteReader(strings.NewReader(tt.input))} {
				l := NewLineReader(r, tt.max)
				got, err := readAll(t, l)
				assert.Equal(t, tt.want, got)
				assert.ErrorIs(t, err, tt.end)
				assert.Error(t, l.Err(), "an ended reader is not usable")
			}
		})
	}
}

// A ReadLine that gives up leaves nothing behind: the line that arrives
// later is there for the next ReadLine.
func TestLineReaderTimeoutLosesNothing(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	l := NewLineReader(pr, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := l.ReadLine(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, l.Err())

	go io.WriteString(pw, "late\n")
	line, err := l.ReadLine(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "late", string(line))
}

func TestLineReaderBreak(t *testing.T) {
	pr, pw := io.Pipe()
	l := NewLineReader(pr, 0)
	boom := errors.New("boom")
	done := make(chan error)
	go func() {
		_, err := l.ReadLine(context.Background())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	l.Break(boom)
	l.Break(errors.New("second")) // only the first counts
	select {
	case err := <-done:
		assert.ErrorIs(t, err, boom)
	case <-time.After(2 * time.Second):
		t.Fatal("Break did not wake a waiting ReadLine")
	}
	assert.ErrorIs(t, l.Err(), boom)

	// The reading goroutine ends once it has a line nobody will take...
	go io.WriteString(pw, "unwanted\n")
	select {
	case <-l.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the reading goroutine outlived Break")
	}
	// ...and closing the input ends a read in progress.
	pr2, pw2 := io.Pipe()
	l2 := NewLineReader(pr2, 0)
	pr2.CloseWithError(errors.New("closed"))
	select {
	case <-l2.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("closing the input did not end the reader")
	}
	_ = pw2
}
