package stream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
)

// Exit statuses of the apply loop.
const (
	ExitOK     = 0 // end of input, or stopped by SIGTERM/SIGINT
	ExitInput  = 1 // reading stdin failed
	ExitUsage  = 2 // bad flags
	ExitOutput = 3 // stdout closed or failing (EPIPE): nobody reads the answers
)

// Config holds what the apply loop needs besides its streams.
type Config struct {
	// MaxLine is the longest request line in bytes (without its newline).
	MaxLine int
	// Compat prints exactly Puppet's six answer fields.
	Compat bool
	// Banner writes protocol.Banner before the first answer.
	Banner bool
	// Log receives Puppet-style log records.
	Log *slog.Logger
	// Decode makes one line into its request, valid until the next line,
	// and the id its answer echoes (an engine session's Decode, which
	// remembers lines sent again: a kept request may carry another copy's
	// id); nil means a protocol.Decoder of the loop's own.
	Decode func(line []byte) (req *protocol.Request, id []byte, err error)
	// Dirs, when deferred, is flushed after answers (see durability.go)
	// and before the loop returns.
	Dirs *dirsync.Syncer
	// Tally, when not nil, counts the answers (summary.go).
	Tally *Tally
	// Declare makes a declaration's resources into the run the requests
	// that follow are applied in (an engine session's Declare, which
	// knows its types' namevars); nil means applier.NewRunSet without
	// types. Its error answers the declaration (a *applier.RunError
	// names the resource).
	Declare func(resources []protocol.RunResource) (applier.Run, error)
}

// One goroutine reads, applies and answers, line after line: a lone
// request goes from the read to the provider to the write without waiting
// for another goroutine to be scheduled, and a stream of requests is read
// 64 KiB at a time into the input buffer, so that most lines are taken
// from it without a system call. While it waits in a read that may block,
// it is "reading"; a first signal (or the end of ctx) then ends Run at
// once and the goroutine is abandoned where it waits: when its read
// returns it finds that out and touches nothing more.
const (
	stateBusy      = iota // deciding, applying, answering
	stateReading          // in a read that may block
	stateAbandoned        // Run returned while it was reading
)

// bigLine is the line buffer size above which the buffer is dropped after
// its line, so that one request of --max-line bytes does not keep that
// much memory for the rest of the run.
const bigLine = 64 << 10

// lineItem is one line read from the input.
type lineItem struct {
	line    []byte // the line without its newline
	off     int    // where line starts in the buffer readLine appended it to
	tooLong int64  // > 0: the line (this many bytes) was longer than MaxLine and discarded
	err     error  // io.EOF at the end of input, or the read error
}

// Run reads request lines from in until EOF and writes one answer line
// per request to out, in order, each with its own write. It returns the
// process' exit status.
//
// The first signal on sigs (SIGTERM, SIGINT) lets the resource in progress
// finish and be answered and then ends the loop with status 0; a second one
// cancels the context of the resource in progress. A panic while decoding
// or encoding becomes an error answer; one in app is app's to answer
// (engine.Engine does). A signal ends an idle loop (waiting for input) at
// once.
func Run(ctx context.Context, cfg Config, app protocol.Applier, in io.Reader, out io.Writer, sigs <-chan os.Signal) int {
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = 16 << 20
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	done := make(chan struct{})
	defer close(done)

	applyCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				if n == 0 {
					close(stop)
				}
				return
			case s := <-sigs:
				n++
				if n == 1 {
					cfg.Log.Log(ctx, applier.LevelNotice, fmt.Sprintf("Caught %s; finishing the resource in progress, then exiting", puppetlog.SignalName(s)))
					close(stop)
				} else {
					cfg.Log.Log(ctx, applier.LevelNotice, fmt.Sprintf("Caught %s again; cancelling the resource in progress", puppetlog.SignalName(s)))
					cancel()
				}
			}
		}
	}()

	l := &loop{cfg: cfg, app: app}
	if l.cfg.Decode == nil {
		l.cfg.Decode = func(line []byte) (*protocol.Request, []byte, error) {
			err := l.dec.DecodeLine(line, &l.req)
			return &l.req, l.req.ID, err
		}
	}
	// Whatever ends the loop, the changes answered are made durable first
	// (an abandoned serve is in a read: it has nothing pending).
	defer cfg.Dirs.Flush(context.WithoutCancel(ctx))
	if cfg.Banner {
		if _, err := io.WriteString(out, protocol.Banner); err != nil {
			return ExitOutput
		}
	}
	served := make(chan int, 1)
	go func() { served <- l.serve(ctx, applyCtx, in, out, stop) }()
	select {
	case code := <-served:
		return code
	case <-stop:
		if l.state.CompareAndSwap(stateReading, stateAbandoned) {
			return ExitOK
		}
		// Busy: it sees stop once the resource in progress is answered,
		// or just before its next read.
		return <-served
	}
}

// serve is the loop itself: read a line, apply it, answer, until the end
// of input, a failed write, or stop.
func (l *loop) serve(ctx, applyCtx context.Context, in io.Reader, out io.Writer, stop <-chan struct{}) int {
	cfg := &l.cfg
	r := bufio.NewReaderSize(in, 64<<10)
	var (
		buf []byte // the current line
		it  lineItem
	)
	l.out = out
	l.stop = stop
	if p, ok := l.app.(pipeliner); ok {
		l.pipe = p
	}
	for {
		if lineWaiting(r) {
			it, buf = readLine(r, buf[:0], cfg.MaxLine)
		} else {
			// Delegated requests sent ahead are answered before a read
			// that may wait for the client (which may be waiting for
			// them).
			if !l.drain(applyCtx) {
				return ExitOutput
			}
			// The read may block: from now on a signal may end Run
			// without us.
			l.state.Store(stateReading)
			select {
			case <-stop:
				if l.state.CompareAndSwap(stateReading, stateBusy) {
					return ExitOK
				}
				return ExitOK // abandoned already
			default:
			}
			it, buf = readLine(r, buf[:0], cfg.MaxLine)
			if !l.state.CompareAndSwap(stateReading, stateBusy) {
				return ExitOK // abandoned: Run has returned
			}
		}
		if it.err != nil {
			if !l.drain(applyCtx) {
				return ExitOutput
			}
			if errors.Is(it.err, io.EOF) {
				return ExitOK
			}
			cfg.Log.Error("reading stdin: " + it.err.Error())
			return ExitInput
		}
		l.lineNo++
		if cfg.Tally != nil {
			l.start = time.Now()
		}
		res, answer := l.handle(applyCtx, it)
		if answer && !(l.drain(applyCtx) && l.write(&res, l.lineNo, l.start, !l.declaration || res.Failed)) || l.outFailed {
			// Nobody reads the answers any more: end quietly.
			return ExitOutput
		}
		if cap(buf) > bigLine {
			buf = nil // don't keep a huge buffer around
		}
		if cfg.Dirs.Pending() > 0 {
			flushDirs(ctx, cfg.Dirs, !inputWaiting(r, in))
		}
		select {
		case <-stop:
			if !l.drain(applyCtx) {
				return ExitOutput
			}
			return ExitOK
		default:
		}
	}
}

// pipeliner is an Applier that can take a request and answer it later
// (delegate.Applier: a request forwarded to Puppet is sent without
// waiting for Puppet's answer). The loop sends a delegated request ahead
// when more lines wait in its buffer, so that a stream of them keeps
// Puppet busy instead of idle for a round trip of the relay between
// requests; the answers are written in the order of the requests, and
// everything owed is answered before a request that is not delegated is
// applied (it may depend on them), before a read that may wait for the
// client, and before the loop ends.
type pipeliner interface {
	Delegates(req *protocol.Request) bool
	// ApplyNative applies a request Delegates refused (Apply, without
	// asking Delegates again).
	ApplyNative(ctx context.Context, req *protocol.Request) protocol.Result
	Send(ctx context.Context, req *protocol.Request) (delegate.SendStatus, protocol.Result)
	Receive(ctx context.Context) protocol.Result
}

// owedAnswer is what the loop keeps of a request sent ahead: its id, its
// line (for a message about its answer) and when it was read (for the
// summary's times).
type owedAnswer struct {
	id     []byte
	lineNo int
	start  time.Time
}

// send forwards req ahead; queued is false when the answer is res, to be
// written now (after everything owed).
func (l *loop) send(ctx context.Context, req *protocol.Request) (res protocol.Result, queued bool) {
	for {
		st, res := l.pipe.Send(ctx, req)
		switch {
		case st == delegate.Sent:
			l.owed = append(l.owed, owedAnswer{id: bytes.Clone(l.idOf(req)), lineNo: l.lineNo, start: l.start})
			return res, true
		case st == delegate.Full && len(l.owed) > 0:
			if !l.finishOne(ctx) || l.stopped() {
				// The output failed, or a signal came while waiting
				// for room: serve ends without evaluating req.
				return res, true
			}
			continue
		case st == delegate.Full:
			res = protocol.Result{Failed: true, Exception: "internal error: the fallback refused a request with no answer owed"}
		}
		if !l.drain(ctx) {
			return res, true
		}
		if res.Resource == "" {
			res.Resource = protocol.Ref(req.Type, req.Title)
		}
		res.ID = l.idOf(req)
		return res, false
	}
}

// stopped reports whether a signal (or the end of the loop's context)
// asked the loop to stop: a line read but not yet evaluated is then left
// alone.
func (l *loop) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// drain answers every request sent ahead; false when the output failed.
func (l *loop) drain(ctx context.Context) bool {
	for len(l.owed) > 0 {
		if !l.finishOne(ctx) {
			return false
		}
	}
	return !l.outFailed
}

// finishOne reads the oldest owed answer and writes it.
func (l *loop) finishOne(ctx context.Context) bool {
	o := l.owed[0]
	l.owed = l.owed[1:]
	res := l.pipe.Receive(ctx)
	res.ID = o.id
	if res.Error && res.Exception != "" {
		l.cfg.Log.Error(res.Exception, "resource", res.Resource)
	}
	if l.outFailed {
		return false
	}
	return l.write(&res, o.lineNo, o.start, true)
}

// write encodes and writes the answer to request line lineNo; false (and
// outFailed) when the output failed. count: the Tally counts it (a
// declaration taken is not a resource).
func (l *loop) write(res *protocol.Result, lineNo int, start time.Time, count bool) bool {
	if count {
		l.cfg.Tally.Add(res, start)
	}
	l.ans = l.encode(l.ans[:0], res, lineNo)
	if _, err := l.out.Write(l.ans); err != nil {
		l.outFailed = true
		return false
	}
	return true
}

// lineWaiting reports whether r's buffer holds the whole next line, so
// that reading it cannot block.
func lineWaiting(r *bufio.Reader) bool {
	n := r.Buffered()
	if n == 0 {
		return false
	}
	p, _ := r.Peek(n)
	return bytes.IndexByte(p, '\n') >= 0
}

// readLine appends one line to buf without holding more than max+2 bytes
// of it (the line, CR, LF): a longer line is read to its end and dropped,
// and reported by its length. A last line without a newline is a line;
// io.EOF comes after it. The item's line is in the returned buf, at off.
func readLine(r *bufio.Reader, buf []byte, max int) (lineItem, []byte) {
	off := len(buf)
	var total int64
	long := false
	for {
		frag, err := r.ReadSlice('\n')
		total += int64(len(frag))
		if !long {
			if len(buf)-off+len(frag) > max+2 { // the line, CR, LF
				long = true
				buf = buf[:off]
			} else {
				buf = append(buf, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line := buf[off:]
		if err != nil && !errors.Is(err, io.EOF) {
			return lineItem{line: line, off: off, err: fmt.Errorf("line of %d bytes: %w", total, err)}, buf
		}
		if err != nil && total == 0 {
			return lineItem{line: line, off: off, err: io.EOF}, buf
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
			buf = buf[:len(buf)-1]
		}
		// A CR before the newline does not count against the limit.
		if !long && len(line) > max && !(len(line) == max+1 && line[max] == '\r') {
			long = true
			buf = buf[:off]
			line = buf[off:]
		}
		if long {
			if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				total--
			}
			return lineItem{line: line, off: off, tooLong: total}, buf
		}
		return lineItem{line: line, off: off}, buf
	}
}

// utf8BOM is U+FEFF encoded, skipped at the start of the input.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// loop holds the apply loop's state between lines.
type loop struct {
	cfg    Config
	app    protocol.Applier
	lineNo int
	// state is serve's: stateBusy, stateReading or stateAbandoned.
	state atomic.Int32
	// req and dec are reused from line to line when no Decode is given:
	// the Applier must not keep req or its Params (protocol.Applier says
	// so).
	req protocol.Request
	dec protocol.Decoder
	// out receives the answers, ans is the buffer they are encoded in,
	// outFailed is set once a write failed.
	out       io.Writer
	ans       []byte
	outFailed bool
	// start is when the current line was read (with a Tally).
	start time.Time
	// pipe is app when it can send requests ahead (pipeliner); owed are
	// the requests sent ahead, oldest first.
	pipe pipeliner
	owed []owedAnswer
	// stop is closed by the first signal (serve's).
	stop <-chan struct{}
	// lineID is the current line's id as Decode gave it: a request the
	// session kept from a copy of the line with another id answers with
	// this one (idOf).
	lineID []byte
	// runCtx is the apply context with the run the controller declared
	// last (declare.go), nil when there is none: the context every
	// request is applied in until the next declaration.
	runCtx context.Context
	// declaration: the line handled last was a declaration.
	declaration bool
}

// handle turns one line into its answer; answer is false for blank and
// comment lines.
func (l *loop) handle(ctx context.Context, it lineItem) (res protocol.Result, answer bool) {
	l.declaration = false
	if it.tooLong > 0 {
		msg := fmt.Sprintf("request line %d: line of %d bytes is longer than the limit of %d bytes (--max-line); it was skipped",
			l.lineNo, it.tooLong, l.cfg.MaxLine)
		l.cfg.Log.Error(msg)
		return protocol.ErrorResult("", msg), true
	}
	if l.lineNo == 1 {
		// A UTF-8 byte order mark, as some editors and Windows tools
		// write at the start of a file, is not part of the request.
		it.line = bytes.TrimPrefix(it.line, utf8BOM)
	}
	if protocol.Skip(it.line) {
		return res, false
	}
	req, id, p, err := l.decode(it.line)
	l.lineID = id
	if p != nil {
		// A panic while decoding: answer, go on.
		ref := ""
		if req != nil && req.Type != "" && req.Title != "" {
			ref = protocol.Ref(req.Type, req.Title)
		}
		msg := fmt.Sprintf("request line %d: internal error (panic) while decoding: %v", l.lineNo, *p)
		l.cfg.Log.Error(msg)
		return protocol.ErrorResult(ref, msg), true
	} else if err != nil {
		return l.decodeError(err), true
	}
	if req.Op == protocol.OpDeclare {
		l.declaration = true
		return l.declare(ctx, req), true
	}
	if l.runCtx != nil {
		ctx = l.runCtx
	}
	switch {
	case l.pipe == nil:
		res = l.answered(req, l.app.Apply(ctx, req))
	case l.pipe.Delegates(req):
		var queued bool
		if res, queued = l.send(ctx, req); queued {
			return res, false
		}
	default:
		// What was sent ahead is applied before this request, which
		// may depend on it.
		// A signal while waiting for them ends the loop before this
		// request, as it does before the next line without delegation.
		if !l.drain(ctx) || l.stopped() {
			return res, false
		}
		res = l.answered(req, l.pipe.ApplyNative(ctx, req))
	}
	// A request that could not be evaluated is logged here; a failure while
	// applying was logged by the engine where it happened.
	if res.Error && res.Exception != "" {
		l.cfg.Log.Error(res.Exception, "resource", res.Resource)
	}
	return res, true
}

// decode runs the decoder, returning what it panicked with, if it did.
func (l *loop) decode(line []byte) (req *protocol.Request, id []byte, panicked *any, err error) {
	defer func() {
		if p := recover(); p != nil {
			l.cfg.Log.Debug(string(debug.Stack()))
			panicked = &p
		}
	}()
	req, id, err = l.cfg.Decode(line)
	return req, id, nil, err
}

// decodeError is the answer to a line the decoder refused, naming the
// resource and echoing the id when the line got that far.
func (l *loop) decodeError(err error) protocol.Result {
	var de *protocol.DecodeError
	ref := ""
	var id []byte
	if errors.As(err, &de) {
		if de.Type != "" && de.Title != "" {
			ref = protocol.Ref(de.Type, de.Title)
		}
		id = de.ID
	}
	msg := fmt.Sprintf("request line %d: %s", l.lineNo, err.Error())
	if ref != "" {
		l.cfg.Log.Error(msg, "resource", ref)
	} else {
		l.cfg.Log.Error(msg)
	}
	res := protocol.ErrorResult(ref, msg)
	res.ID = id
	return res
}

// encode appends the answer line; should encoding panic (an event value it
// cannot handle), the answer is an error naming the resource instead.
func (l *loop) encode(dst []byte, res *protocol.Result, lineNo int) (out []byte) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("request line %d: internal error (panic) while encoding the answer: %v", lineNo, p)
			l.cfg.Log.Error(msg)
			r := protocol.ErrorResult(res.Resource, msg)
			r.ID = res.ID
			out = protocol.AppendResult(dst[:0], &r, l.cfg.Compat)
		}
	}()
	return protocol.AppendResult(dst, res, l.cfg.Compat)
}

// answered echoes the request's id in its answer (the one place that
// does), names the resource where the applier did not, and adds the
// decoder's hints to an error about a parameter it has one for. A panic in
// the applier is the applier's to answer: engine.Engine turns one into an
// error answer naming the resource.
func (l *loop) answered(req *protocol.Request, res protocol.Result) protocol.Result {
	if res.Resource == "" {
		res.Resource = protocol.Ref(req.Type, req.Title)
	}
	res.ID = l.idOf(req)
	if req.Hints != nil {
		req.Explain(&res)
	}
	return res
}

// idOf is the id of the line being handled: the line's own, which differs
// from req's when the session kept req from a copy of the line with
// another id.
func (l *loop) idOf(req *protocol.Request) []byte {
	if l.lineID != nil {
		return l.lineID
	}
	return req.ID
}

// inputWaiting reports whether more input is at hand: a whole line in r's
// buffer, or bytes in the pipe or socket behind it (when in is one).
func inputWaiting(r *bufio.Reader, in io.Reader) bool {
	if lineWaiting(r) {
		return true
	}
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var n int32
	var errno syscall.Errno
	if rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}) != nil || errno != 0 {
		return false
	}
	return n > 0
}
