package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxLine bounds one line of a receiver's output: answerFactor
// times the receiver's default request limit (128 MiB), so that the
// answer to any request the receiver reads can be read. A longer line
// means the stream is not what we think it is.
const DefaultMaxLine = answerFactor * DefaultMaxRequest

// ErrLineTooLong is the end of a LineReader whose input had a line longer
// than its limit.
var ErrLineTooLong = errors.New("receiver output line too long")

// LineReader is the one persistent reader of one child's output.
//
// A receiver answers on a pipe; whoever reads that pipe through a buffer
// owns the bytes the buffer has taken in. Wrapping the pipe in a fresh
// decoder or bufio.Reader for every request loses whatever the previous one
// read ahead (the tail of an answer, a notice line, the next answer), so
// there is exactly one reader per child, made when the child starts and
// dropped with it.
//
// On a pipe the runtime polls (the *os.File of os.Pipe, as the Receiver
// makes), ReadLine reads in the caller's goroutine: an answer goes from the
// read to the caller without waking another goroutine. The caller's
// context interrupts the read through the file's read deadline, so a
// deadline leaves no read behind that could swallow the next answer, and
// the bytes of a line read only in part are kept for the next ReadLine.
// On any other reader a goroutine splits the output into lines and hands
// them over a channel; ReadLine then never blocks in read(2): it waits on
// the channel and on the caller's context. A late answer stays queued in
// this reader; since the caller marks the reader broken (Break) whenever it
// gave up waiting, the child and its reader are replaced before the next
// request and the late answer is never mistaken for the next one's.
type LineReader struct {
	lines chan []byte   // complete lines, newline stripped
	done  chan struct{} // closed when the reading goroutine has ended
	end   error         // why it ended (io.EOF, a read error); set before done closes

	stop      chan struct{} // closed by Break
	breakOnce sync.Once
	broken    error // set before stop closes

	// Direct mode (f is not nil): no goroutine; ReadLine reads f through
	// br, one call at a time (mu).
	f       *os.File
	br      *bufio.Reader
	max     int
	mu      sync.Mutex
	partial []byte       // a line begun when a read was interrupted
	ended   atomic.Value // errBox: why the input ended, once it has

	// seq is the last id given to a request to this child (withID),
	// under the apply lock; ids is whether the child echoes them, learnt
	// from its first answer (answerKey.check): 0 not known yet, 1 it
	// does, -1 it does not (--compat).
	seq uint64
	ids int8
}

// errBox holds an error in an atomic.Value.
type errBox struct{ err error }

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// NewLineReader starts reading r line by line. Lines longer than max bytes
// (DefaultMaxLine when max <= 0) end the reader with ErrLineTooLong. The
// reading goroutine ends at the end of r, on a read error, or after Break
// (the next time it has a line to hand over); closing r ends a read in
// progress.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	if f, ok := r.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		l := &LineReader{
			done: make(chan struct{}),
			stop: make(chan struct{}),
			f:    f,
			br:   bufio.NewReaderSize(f, 64<<10),
			max:  max,
		}
		close(l.done) // no goroutine to wait for
		return l
	}
	l := &LineReader{
		lines: make(chan []byte, 16),
		done:  make(chan struct{}),
		stop:  make(chan struct{}),
	}
	go l.loop(r, max)
	return l
}

// readDirect is ReadLine in direct mode.
func (l *LineReader) readDirect(ctx context.Context, watched bool) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, _ := l.ended.Load().(errBox); e.err != nil {
		return nil, e.err
	}
	var dw *deadlineWatch
	if ctx.Done() != nil && !watched {
		dw = watchDeadlines(ctx, nil, l.f)
	}
	line, err := readLine(l.br, l.max)
	if dw != nil {
		// Should the context have ended during the read, the deadline
		// it set is cleared for the next ReadLine.
		dw.end()
	}
	if len(l.partial) > 0 && (line != nil || err == nil) {
		line = append(l.partial, line...)
		l.partial = nil
		if len(line) > l.max {
			err = fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, l.max)
			l.ended.Store(errBox{err})
			return nil, err
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		select {
		case <-l.stop:
			return nil, l.broken
		default:
		}
		// Interrupted by ctx: keep what was read of the line.
		l.partial = append(l.partial, line...)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			select {
			case <-l.stop:
				return nil, l.broken
			default:
			}
		}
		l.ended.Store(errBox{err})
		if line != nil {
			return line, nil // a partial last line; the end comes next
		}
		return nil, err
	}
	return line, nil
}

// failedLineReader is a reader that has nothing and says why.
func failedLineReader(err error) *LineReader {
	l := &LineReader{
		lines: make(chan []byte),
		done:  make(chan struct{}),
		stop:  make(chan struct{}),
		end:   err,
	}
	close(l.lines)
	close(l.done)
	l.Break(err)
	return l
}

func (l *LineReader) loop(r io.Reader, max int) {
	// done closes first, so that whoever sees lines closed sees Err too.
	defer close(l.lines)
	defer close(l.done)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, max)
		if line != nil {
			select {
			case <-l.stop: // broken: nobody wants more lines
				l.end = errors.New("reader stopped")
				return
			default:
			}
			select {
			case l.lines <- line:
			case <-l.stop:
				l.end = errors.New("reader stopped")
				return
			}
		}
		if err != nil {
			l.end = err
			return
		}
	}
}

// readLine returns the next line without its line ending (a partial last
// line is returned with io.EOF). The returned slice is the caller's.
//
// A line longer than br's buffer is kept in pieces (lineChunks) and
// joined once it ends: a line that never ends is refused after max bytes
// with about max bytes held, where a slice grown by append would have held
// two or three times that (the old arrays and the next one) by then.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	if err == nil {
		return bytes.Clone(trimEOL(frag)), nil
	}
	var lc lineChunks
	for err == bufio.ErrBufferFull {
		if lc.n+len(frag) > max {
			return nil, fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, max)
		}
		lc.add(frag)
		frag, err = br.ReadSlice('\n')
	}
	if lc.n+len(frag) > max {
		return nil, fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, max)
	}
	lc.add(frag)
	line := lc.join()
	if err == nil {
		return trimEOL(line), nil
	}
	if len(line) == 0 {
		return nil, err
	}
	return line, err
}

// lineChunks holds a long line in pieces of growing size (64 KiB to
// 4 MiB), so that nothing is copied before the line ends and at most one
// piece's room is unused.
type lineChunks struct {
	chunks [][]byte
	n      int
}

func (lc *lineChunks) add(b []byte) {
	lc.n += len(b)
	for len(b) > 0 {
		last := len(lc.chunks) - 1
		if last < 0 || len(lc.chunks[last]) == cap(lc.chunks[last]) {
			size := 64 << 10
			if last >= 0 {
				size = min(2*cap(lc.chunks[last]), 4<<20)
			}
			lc.chunks = append(lc.chunks, make([]byte, 0, size))
			last++
		}
		c := lc.chunks[last]
		k := min(len(b), cap(c)-len(c))
		lc.chunks[last] = append(c, b[:k]...)
		b = b[k:]
	}
}

// join is the line in one slice; nil when it is empty.
func (lc *lineChunks) join() []byte {
	switch len(lc.chunks) {
	case 0:
		return nil
	case 1:
		return lc.chunks[0]
	}
	line := make([]byte, 0, lc.n)
	for i, c := range lc.chunks {
		line = append(line, c...)
		lc.chunks[i] = nil // each piece may go once copied
	}
	return line
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// ReadLine returns the next line, waiting at most until ctx is done. It
// returns the Break error once the reader is broken, and the end of the
// input (io.EOF or the read error) after the last line.
func (l *LineReader) ReadLine(ctx context.Context) ([]byte, error) {
	return l.readLine(ctx, false)
}

// readLine is ReadLine; watched: the caller's deadlineWatch interrupts a
// direct read when ctx ends (ReadLine then registers nothing of its own).
func (l *LineReader) readLine(ctx context.Context, watched bool) ([]byte, error) {
	select {
	case <-l.stop:
		return nil, l.broken
	default:
	}
	if l.f != nil {
		return l.readDirect(ctx, watched)
	}
	select {
	case line, ok := <-l.lines:
		if !ok {
			return nil, l.end
		}
		return line, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.stop:
		return nil, l.broken
	}
}

// Break marks the child behind this reader as unusable: its stream is out
// of step (a request went unanswered, an answer was malformed) or it is
// gone. Only the first call counts. The owner of the child replaces it
// before the next request.
func (l *LineReader) Break(err error) {
	if err == nil {
		err = errors.New("receiver marked broken")
	}
	l.breakOnce.Do(func() {
		l.broken = err
		close(l.stop)
		if l.f != nil {
			l.f.SetReadDeadline(aLongTimeAgo) // wake a ReadLine waiting in a read
		}
	})
}

// Err says why the reader can no longer be trusted with a new request: the
// Break error, or the end of the input once the output has ended. It is nil
// while the child is usable.
func (l *LineReader) Err() error {
	select {
	case <-l.stop:
		return l.broken
	default:
	}
	if l.f != nil {
		e, _ := l.ended.Load().(errBox)
		return endError(e.err)
	}
	select {
	case <-l.done:
		return endError(l.end)
	default:
		return nil
	}
}

// endError is Err for an input that ended with end (nil: not ended).
func endError(end error) error {
	switch {
	case end == nil:
		return nil
	case end == io.EOF:
		return errReceiverOutputEnded
	}
	return fmt.Errorf("%w: reading its output: %w", ErrReceiverDied, end)
}

// Done is closed when the reading goroutine has ended (end of input, read
// error, or Break followed by a pending line); in direct mode, where there
// is none, it is closed from the start.
func (l *LineReader) Done() <-chan struct{} { return l.done }
