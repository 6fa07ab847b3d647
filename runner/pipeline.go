package runner

import (
	"context"
	"fmt"
)

// PipelineWindow is how many bytes of requests a Pipeline has on the
// child's stdin at most while their answers are unread. A pipe holds at
// least one page (4 KiB, the least Linux gives a pipe even past the
// user's pipe limits), so within the window a write never blocks, whether
// or not the child is reading: it cannot be blocked writing answers that
// nobody reads while the Pipeline is blocked writing requests it does not
// read.
const PipelineWindow = 4 << 10

// Pipeline sends requests to one receiver without waiting for each
// answer before the next request: the answers come back in the order the
// requests were sent (a receiver applies one request after the other) and
// are read with Receive. A stream of requests then keeps the child busy,
// instead of idle for a round trip of the pipe between requests.
//
// A Pipeline holds the Runner's apply lock from its first Send until
// Receive has read the last answer owed (or Abort), so no Apply comes
// between. It is for one goroutine; its zero value is not usable (see
// NewPipeline). Errors are Apply's: a child that dies or answers badly is
// broken, and every answer still owed is then an error.
type Pipeline struct {
	r      Runner
	lines  *LineReader
	owed   []owed
	bytes  int // request bytes of owed
	locked bool
}

type owed struct {
	res  *Resource
	size int
	key  answerKey // what its answer must carry
}

// NewPipeline makes a Pipeline over r.
func NewPipeline(r Runner) *Pipeline { return &Pipeline{r: r} }

// Owed is how many answers Receive has still to read.
func (p *Pipeline) Owed() int { return len(p.owed) }

// Send writes res's request line. When answers are owed and the line
// would take the requests on the child's stdin past PipelineWindow, it
// sends nothing and returns false: Receive an answer first. With no answer
// owed it always sends (the write then waits for the child as Apply's
// does, never past ctx). Once the child is broken (an answer owed was
// missing or bad) nothing more is sent until every answer owed was
// received: then the next Send goes to its replacement. An error means
// nothing was sent: a Resource that cannot be sent (ErrInvalidRequest), no working child (ErrUnavailable),
// ctx ended waiting for the lock, or a write that failed (the child is
// broken; what was owed stays owed, and Receive reports why).
func (p *Pipeline) Send(ctx context.Context, res *Resource) (sent bool, err error) {
	line, err := encodeRequest(res, false)
	if err != nil {
		return false, err
	}
	if len(p.owed) > 0 && p.bytes+len(line)+idRoom > PipelineWindow {
		return false, nil
	}
	if err := tooLong(p.r, res, line, idRoom); err != nil {
		return false, err
	}
	if !p.locked {
		if err := p.r.LockApplyContext(ctx); err != nil {
			return false, fmt.Errorf("%s: not sent: %w", shortRef(res), err)
		}
		p.locked = true
		p.lines = p.r.Lines()
		if err := p.lines.Err(); err != nil {
			p.unlock()
			return false, fmt.Errorf("%s: %w", shortRef(res), unavailable(err))
		}
	} else if err := p.lines.Err(); err != nil {
		// The child broke while answers were owed (they will say why):
		// nothing more goes to it, even where its input still takes
		// bytes (a grandchild holding the pipe open).
		return false, fmt.Errorf("%s: %w", shortRef(res), unavailable(err))
	}
	if err := ctx.Err(); err != nil {
		p.unlockIdle()
		return false, fmt.Errorf("%s: not sent: %w", shortRef(res), err)
	}
	key := answerKey{ref: res.Ref()}
	line, key.id = withID(p.r, p.lines, line)
	if err := write(ctx, p.r.InputStream(), line); err != nil {
		p.lines.Break(err)
		p.unlockIdle()
		return false, fmt.Errorf("%s: sending to receiver: %w", shortRef(res), err)
	}
	p.owed = append(p.owed, owed{res: res, size: len(line), key: key})
	p.bytes += len(line)
	return true, nil
}

// Receive reads the answer to the oldest request sent, with Apply's
// result and errors; the Resource is the one given to Send. With nothing
// owed it returns an error and no Resource.
func (p *Pipeline) Receive(ctx context.Context) (*Resource, Result, error) {
	if len(p.owed) == 0 {
		return nil, Result{}, fmt.Errorf("runner: Pipeline.Receive with no answer owed")
	}
	o := p.owed[0]
	p.owed[0] = owed{}
	p.owed = p.owed[1:]
	p.bytes -= o.size
	result, err := readAnswer(ctx, p.lines, o.res, o.key)
	p.unlockIdle()
	return o.res, result, err
}

// Abort gives up the answers owed: the child is broken (its stream is out
// of step with whoever asks next) and the lock released.
func (p *Pipeline) Abort(err error) {
	if len(p.owed) > 0 && p.lines != nil {
		p.lines.Break(fmt.Errorf("%w: %d answers abandoned: %w", ErrNoAnswer, len(p.owed), err))
	}
	p.owed = p.owed[:0]
	p.bytes = 0
	p.unlock()
}

func (p *Pipeline) unlockIdle() {
	if len(p.owed) == 0 {
		p.unlock()
	}
}

func (p *Pipeline) unlock() {
	if p.locked {
		p.locked = false
		p.lines = nil
		p.owed = p.owed[:0]
		p.bytes = 0
		p.r.UnlockApply()
	}
}
