package runner

import (
	"context"
	"errors"
	"io"
	"os"
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

// On an os.Pipe the reader reads in the caller's goroutine: a ReadLine
// that gives up, even with a line read in part, loses nothing, and the
// next ReadLine gets the whole line.
func TestLineReaderDirectTimeoutLosesNothing(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	l := NewLineReader(pr, 0)
	require.NotNil(t, l.f, "an os.Pipe is read directly")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = l.ReadLine(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, l.Err())

	_, err = pw.WriteString("fir")
	require.NoError(t, err)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = l.ReadLine(ctx2)
	require.ErrorIs(t, err, context.DeadlineExceeded, "half a line is not a line")

	_, err = pw.WriteString("st\nsecond\r\nthird")
	require.NoError(t, err)
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	for _, want := range []string{"first", "second"} {
		line, err := l.ReadLine(ctx3)
		require.NoError(t, err)
		assert.Equal(t, want, string(line))
	}
	pw.Close()
	line, err := l.ReadLine(ctx3)
	require.NoError(t, err)
	assert.Equal(t, "third", string(line), "a partial last line")
	_, err = l.ReadLine(ctx3)
	assert.ErrorIs(t, err, io.EOF)
	assert.ErrorIs(t, l.Err(), ErrReceiverDied, "an ended reader is not usable")
}

// Break wakes a ReadLine waiting in a read on an os.Pipe.
func TestLineReaderDirectBreak(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	l := NewLineReader(pr, 0)
	boom := errors.New("boom")
	done := make(chan error)
	go func() {
		_, err := l.ReadLine(context.Background())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	l.Break(boom)
	select {
	case err := <-done:
		assert.ErrorIs(t, err, boom)
	case <-time.After(2 * time.Second):
		t.Fatal("Break did not wake a waiting ReadLine")
	}
	assert.ErrorIs(t, l.Err(), boom)
	select {
	case <-l.Done():
	default:
		t.Fatal("Done must be closed: there is no goroutine")
	}
}

// A line over the limit ends a direct reader, also when it was begun in
// an interrupted read.
func TestLineReaderDirectTooLong(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	l := NewLineReader(pr, 100)
	_, err = pw.WriteString(strings.Repeat("x", 80))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = l.ReadLine(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = pw.WriteString(strings.Repeat("x", 80) + "\n")
	require.NoError(t, err)
	_, err = l.ReadLine(context.Background())
	assert.ErrorIs(t, err, ErrLineTooLong)
	assert.Error(t, l.Err())
}

// A write to a pipe nobody reads gives up when the context ends, in the
// caller's goroutine, and the next write to a pipe that drains works.
func TestWriteDirectHonoursContext(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	big := make([]byte, 1<<20) // more than a pipe holds
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = write(ctx, pw, big)
	require.ErrorIs(t, err, ErrNoAnswer)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	go io.Copy(io.Discard, pr)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	require.NoError(t, write(ctx2, pw, []byte("line\n")), "the deadline of the first write is gone")
}

// One watch covers an exchange's write and read: the end of the context
// interrupts either, in the caller's goroutine, and once the exchange is
// over the deadlines it set are gone, so the next exchange on the same
// pipes works.
func TestExchangeWatch(t *testing.T) {
	inR, inW, err := os.Pipe() // the child's stdin
	require.NoError(t, err)
	defer inR.Close()
	defer inW.Close()
	outR, outW, err := os.Pipe() // the child's stdout
	require.NoError(t, err)
	defer outR.Close()
	defer outW.Close()
	lines := NewLineReader(outR, 0)

	// The read: no answer comes; the deadline ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	w := watchExchange(ctx, inW, lines)
	require.NotNil(t, w)
	require.NoError(t, writeWatched(ctx, inW, []byte("request\n"), true))
	_, err = lines.readLine(ctx, true)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	w.end()
	cancel()

	// The write: a pipe nobody reads, filled; the cancel ends it.
	ctx, cancel = context.WithCancel(context.Background())
	w = watchExchange(ctx, inW, lines)
	require.NotNil(t, w)
	time.AfterFunc(50*time.Millisecond, cancel)
	err = writeWatched(ctx, inW, make([]byte, 1<<20), true)
	require.ErrorIs(t, err, ErrNoAnswer)
	require.ErrorIs(t, err, context.Canceled)
	w.end()

	// A context that ends after its exchange: nothing is left behind.
	go io.Copy(io.Discard, inR)
	ctx, cancel = context.WithCancel(context.Background())
	w = watchExchange(ctx, inW, lines)
	require.NoError(t, writeWatched(ctx, inW, []byte("request\n"), true))
	_, err = outW.Write([]byte("answer\n"))
	require.NoError(t, err)
	got, err := lines.readLine(ctx, true)
	require.NoError(t, err)
	assert.Equal(t, "answer", string(got))
	cancel()
	w.end()

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w = watchExchange(ctx, inW, lines)
	require.NoError(t, writeWatched(ctx, inW, []byte("next\n"), true), "the write deadline is gone")
	_, err = outW.Write([]byte("next answer\n"))
	require.NoError(t, err)
	got, err = lines.readLine(ctx, true)
	require.NoError(t, err, "the read deadline is gone")
	assert.Equal(t, "next answer", string(got))
	w.end()

	assert.Nil(t, watchExchange(context.Background(), inW, lines), "a context that cannot end is not watched")
}
