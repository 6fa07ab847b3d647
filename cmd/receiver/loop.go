package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// Exit statuses of the apply loop.
const (
	exitOK     = 0 // end of input, or stopped by SIGTERM/SIGINT
	exitInput  = 1 // reading stdin failed
	exitUsage  = 2 // bad flags
	exitOutput = 3 // stdout closed or failing (EPIPE): nobody reads the answers
)

// loopConfig holds what the apply loop needs besides its streams.
type loopConfig struct {
	// MaxLine is the longest request line in bytes (without its newline).
	MaxLine int
	// Compat prints exactly Puppet's six answer fields.
	Compat bool
	// Banner writes protocol.Banner before the first answer.
	Banner bool
	// Log receives Puppet-style log records.
	Log *slog.Logger
	// Decode decodes one line; nil means the loop's own protocol.Decoder,
	// which reuses the request's Params from line to line (tests replace
	// it).
	Decode func(line []byte, req *protocol.Request) error
	// Dirs, when deferred, is flushed after answers (see durability.go)
	// and before the loop returns.
	Dirs *applier.DirSync
}

// readAhead is how many lines the reader goroutine may read before the
// loop has answered them: with a stream of requests the reader and the
// loop then run side by side instead of waking each other for every line.
const readAhead = 64

// bigLine is the buffer size above which a line counts as big: only one
// big line is read ahead at a time, so read-ahead holds at most two lines
// of --max-line bytes (one in the loop, one waiting), not readAhead of them.
const bigLine = 64 << 10

// lineItem is one line read by the reader goroutine.
type lineItem struct {
	big     bool   // the line's buffer is over bigLine: give the big token back
	line    []byte // the line without its newline; a buffer from free
	tooLong int64  // > 0: the line (this many bytes) was longer than MaxLine and discarded
	err     error  // io.EOF at the end of input, or the read error
}

// runLoop reads request lines from in until EOF and writes one answer line
// per request to out, in order, each with its own write. It returns the
// process' exit status.
//
// The first signal on sigs (SIGTERM, SIGINT) lets the resource in progress
// finish and be answered and then ends the loop with status 0; a second one
// cancels the context of the resource in progress. A panic in app becomes an
// error answer naming the resource. Reading happens in its own goroutine so
// that a signal ends an idle loop at once.
func runLoop(ctx context.Context, cfg loopConfig, app protocol.Applier, in io.Reader, out io.Writer, sigs <-chan os.Signal) int {
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
					cfg.Log.Log(ctx, applier.LevelNotice, fmt.Sprintf("Caught %s; finishing the resource in progress, then exiting", sigName(s)))
					close(stop)
				} else {
					cfg.Log.Log(ctx, applier.LevelNotice, fmt.Sprintf("Caught %s again; cancelling the resource in progress", sigName(s)))
					cancel()
				}
			}
		}
	}()

	free := make(chan []byte, readAhead)
	for range readAhead {
		free <- make([]byte, 0, 4096)
	}
	items := make(chan lineItem, readAhead)
	bigTok := make(chan struct{}, 1)
	bigTok <- struct{}{}
	go readLines(in, cfg.MaxLine, free, items, bigTok, done)

	l := &loop{cfg: cfg, app: app}
	if l.cfg.Decode == nil {
		l.cfg.Decode = l.dec.DecodeLine
	}
	// Whatever ends the loop, the changes answered are made durable first.
	defer cfg.Dirs.Flush(context.WithoutCancel(ctx))
	spare := make([][]byte, 0, readAhead)
	var ans []byte
	if cfg.Banner {
		if _, err := io.WriteString(out, protocol.Banner); err != nil {
			return exitOutput
		}
	}
	for {
		var it lineItem
		select {
		case it = <-items: // read ahead: no need to watch stop (checked below)
		default:
			select {
			case <-stop:
				return exitOK
			case it = <-items:
			}
		}
		if it.err != nil {
			if errors.Is(it.err, io.EOF) {
				return exitOK
			}
			cfg.Log.Error("reading stdin: " + it.err.Error())
			return exitInput
		}
		l.lineNo++
		res, answer := l.handle(applyCtx, it)
		if !it.big {
			// Buffers go back in batches (below): one wake-up of a
			// waiting reader per batch, not per line.
			spare = append(spare, it.line[:0])
		} else {
			free <- make([]byte, 0, 4096) // don't keep a huge buffer around
			bigTok <- struct{}{}
		}
		if answer {
			ans = l.encode(ans[:0], &res)
			if _, err := out.Write(ans); err != nil {
				// Nobody reads the answers any more: end quietly.
				return exitOutput
			}
		}
		if len(spare) >= readAhead/2 || len(items) == 0 {
			// A batch, or the loop is about to wait for the reader (which
			// may be waiting for a buffer): give the buffers back.
			for _, b := range spare {
				free <- b
			}
			spare = spare[:0]
		}
		flushDirs(ctx, cfg.Dirs, len(items) == 0)
		select {
		case <-stop:
			return exitOK
		default:
		}
	}
}

// sigName names a signal as Puppet's messages do ("Caught TERM").
func sigName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGINT:
		return "INT"
	}
	return s.String()
}

// readLines reads lines into buffers taken from free and sends them on
// items, until an error (io.EOF included), which it sends last. A big line
// is sent only with the big token, which the loop returns when done with it.
func readLines(in io.Reader, max int, free <-chan []byte, items chan<- lineItem, bigTok <-chan struct{}, done <-chan struct{}) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		var buf []byte
		select {
		case buf = <-free: // a buffer at hand: no select over done
		default:
			select {
			case buf = <-free:
			case <-done:
				return
			}
		}
		it := readLine(r, buf, max)
		if cap(it.line) > bigLine {
			select {
			case <-bigTok:
				it.big = true
			case <-done:
				return
			}
		}
		select {
		case items <- it:
		default:
			select {
			case items <- it:
			case <-done:
				return
			}
		}
		if it.err != nil {
			return
		}
	}
}

// readLine reads one line into buf without holding more than max+2 bytes
// of it (the line, CR, LF): a longer line is read to its end and dropped,
// and reported by its length. A last line without a newline is a line;
// io.EOF comes after it.
func readLine(r *bufio.Reader, buf []byte, max int) lineItem {
	buf = buf[:0]
	var total int64
	long := false
	for {
		frag, err := r.ReadSlice('\n')
		total += int64(len(frag))
		if !long {
			if len(buf)+len(frag) > max+2 { // the line, CR, LF
				long = true
				buf = buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return lineItem{line: buf, err: fmt.Errorf("line of %d bytes: %w", total, err)}
		}
		if err != nil && total == 0 {
			return lineItem{line: buf, err: io.EOF}
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		// A CR before the newline does not count against the limit.
		if !long && len(buf) > max && !(len(buf) == max+1 && buf[max] == '\r') {
			long = true
			buf = buf[:0]
		}
		if long {
			if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				total--
			}
			return lineItem{line: buf, tooLong: total}
		}
		return lineItem{line: buf}
	}
}

// loop holds the apply loop's state between lines.
type loop struct {
	cfg    loopConfig
	app    protocol.Applier
	lineNo int
	// req and dec are reused from line to line: the Applier must not keep
	// req or its Params (protocol.Applier says so).
	req protocol.Request
	dec protocol.Decoder
}

// handle turns one line into its answer; answer is false for blank and
// comment lines.
func (l *loop) handle(ctx context.Context, it lineItem) (res protocol.Result, answer bool) {
	if it.tooLong > 0 {
		msg := fmt.Sprintf("request line %d: line of %d bytes is longer than the limit of %d bytes (--max-line); it was skipped",
			l.lineNo, it.tooLong, l.cfg.MaxLine)
		l.cfg.Log.Error(msg)
		return protocol.ErrorResult("", msg), true
	}
	if protocol.Skip(it.line) {
		return res, false
	}
	req := &l.req
	defer func() {
		// A panic while decoding (apply has its own recover): answer, go on.
		if p := recover(); p != nil {
			ref := ""
			if req.Type != "" && req.Title != "" {
				ref = applier.Ref(req.Type, req.Title)
			}
			msg := fmt.Sprintf("request line %d: internal error (panic) while decoding: %v", l.lineNo, p)
			l.cfg.Log.Debug(string(debug.Stack()))
			l.cfg.Log.Error(msg)
			res, answer = protocol.ErrorResult(ref, msg), true
		}
	}()
	if err := l.cfg.Decode(it.line, req); err != nil {
		var de *protocol.DecodeError
		ref := ""
		var id []byte
		if errors.As(err, &de) {
			if de.Type != "" && de.Title != "" {
				ref = applier.Ref(de.Type, de.Title)
			}
			id = de.ID
		}
		msg := fmt.Sprintf("request line %d: %s", l.lineNo, err.Error())
		if ref != "" {
			l.cfg.Log.Error(msg, "resource", ref)
		} else {
			l.cfg.Log.Error(msg)
		}
		res = protocol.ErrorResult(ref, msg)
		res.ID = id
		return res, true
	}
	res = l.apply(ctx, req)
	// A request that could not be evaluated is logged here; a failure while
	// applying was logged by the engine where it happened.
	if res.Error && res.Exception != "" {
		l.cfg.Log.Error(res.Exception, "resource", res.Resource)
	}
	return res, true
}

// encode appends the answer line; should encoding panic (an event value it
// cannot handle), the answer is an error naming the resource instead.
func (l *loop) encode(dst []byte, res *protocol.Result) (out []byte) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("request line %d: internal error (panic) while encoding the answer: %v", l.lineNo, p)
			l.cfg.Log.Error(msg)
			r := protocol.ErrorResult(res.Resource, msg)
			r.ID = res.ID
			out = protocol.AppendResult(dst[:0], &r, l.cfg.Compat)
		}
	}()
	return protocol.AppendResult(dst, res, l.cfg.Compat)
}

// apply runs the applier, turning a panic into an error answer.
func (l *loop) apply(ctx context.Context, req *protocol.Request) (res protocol.Result) {
	defer func() {
		if p := recover(); p != nil {
			ref := applier.Ref(req.Type, req.Title)
			l.cfg.Log.Debug(fmt.Sprintf("panic: %v\n%s", p, debug.Stack()), "resource", ref)
			res = protocol.ErrorResult(ref, fmt.Sprintf("internal error (panic): %v", p))
			res.ID = req.ID
		}
	}()
	res = l.app.Apply(ctx, req)
	if res.Resource == "" {
		res.Resource = applier.Ref(req.Type, req.Title)
	}
	res.ID = req.ID
	return res
}
