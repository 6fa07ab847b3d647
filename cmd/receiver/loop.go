package main

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
	"syscall"
	"time"

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
	// Tally, when not nil, counts the answers (summary.go).
	Tally *tally
}

// Read-ahead: the reader goroutine hands lines over in batches of what
// its input buffer already holds, so that with a stream of requests the
// reader and the loop run side by side and meet once per batch (one
// channel operation, at most one wake-up) instead of once per line; a line
// that arrives alone is handed over at once. At most readAhead batches are
// read before the loop has answered them.
const (
	readAhead = 4
	// batchLines and batchBytes end a batch: this many lines, or this
	// many bytes (plus the line that went over).
	batchLines = 128
	batchBytes = 16 << 10
)

// bigLine is the buffer size above which a batch counts as big (it holds a
// line of more than about bigLine-batchBytes bytes): only one big batch
// is read ahead at a time, so read-ahead holds at most two lines of
// --max-line bytes (one in the loop, one waiting), not readAhead of them.
const bigLine = 64 << 10

// lineBatch is lines read together by the reader goroutine.
type lineBatch struct {
	buf   []byte     // the lines, back to back
	items []lineItem // in order; an error, if any, is the last
	big   bool       // cap(buf) is over bigLine: give the big token back
}

// lineItem is one line read by the reader goroutine.
type lineItem struct {
	line    []byte // the line without its newline, in its batch's buf
	off     int    // where line starts in buf
	tooLong int64  // > 0: the line (this many bytes) was longer than MaxLine and discarded
	err     error  // io.EOF at the end of input, or the read error
}

// runLoop reads request lines from in until EOF and writes one answer line
// per request to out, in order, each with its own write. It returns the
// process' exit status.
//
// The first signal on sigs (SIGTERM, SIGINT) lets the resource in progress
// finish and be answered and then ends the loop with status 0; a second one
// cancels the context of the resource in progress. A panic while decoding
// or encoding becomes an error answer; one in app is app's to answer
// (applier.Engine does). Reading happens in its own goroutine so that a
// signal ends an idle loop at once.
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

	free := make(chan *lineBatch, readAhead)
	for range readAhead {
		free <- &lineBatch{buf: make([]byte, 0, 8<<10), items: make([]lineItem, 0, batchLines)}
	}
	batches := make(chan *lineBatch, readAhead)
	bigTok := make(chan struct{}, 1)
	bigTok <- struct{}{}
	go readLines(in, cfg.MaxLine, free, batches, bigTok, done)

	l := &loop{cfg: cfg, app: app}
	if l.cfg.Decode == nil {
		l.cfg.Decode = l.dec.DecodeLine
	}
	// Whatever ends the loop, the changes answered are made durable first.
	defer cfg.Dirs.Flush(context.WithoutCancel(ctx))
	var (
		ans  []byte
		cur  *lineBatch // the batch being answered
		next int        // its next line
	)
	if cfg.Banner {
		if _, err := io.WriteString(out, protocol.Banner); err != nil {
			return exitOutput
		}
	}
	for {
		if cur == nil || next == len(cur.items) {
			if cur != nil {
				// Done with it: back to the reader before waiting.
				if cur.big {
					cur.buf = make([]byte, 0, 8<<10) // don't keep a huge buffer around
					free <- cur
					bigTok <- struct{}{}
				} else {
					free <- cur
				}
			}
			select {
			case cur = <-batches: // read ahead: no need to watch stop (checked below)
			default:
				select {
				case <-stop:
					return exitOK
				case cur = <-batches:
				}
			}
			next = 0
		}
		it := cur.items[next]
		next++
		if it.err != nil {
			if errors.Is(it.err, io.EOF) {
				return exitOK
			}
			cfg.Log.Error("reading stdin: " + it.err.Error())
			return exitInput
		}
		l.lineNo++
		var start time.Time
		if cfg.Tally != nil {
			start = time.Now()
		}
		res, answer := l.handle(applyCtx, it)
		if answer {
			cfg.Tally.add(&res, start)
			ans = l.encode(ans[:0], &res)
			if _, err := out.Write(ans); err != nil {
				// Nobody reads the answers any more: end quietly.
				return exitOutput
			}
		}
		flushDirs(ctx, cfg.Dirs, next == len(cur.items) && len(batches) == 0)
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
	case syscall.SIGHUP:
		return "HUP"
	}
	return s.String()
}

// readLines reads lines into batches taken from free and sends them on
// batches, until an error (io.EOF included), which ends the last batch. A
// batch takes the lines the input buffer already holds whole, up to
// batchLines or batchBytes; a big batch is sent only with the big token,
// which the loop returns when done with it.
func readLines(in io.Reader, max int, free <-chan *lineBatch, batches chan<- *lineBatch, bigTok <-chan struct{}, done <-chan struct{}) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		var b *lineBatch
		select {
		case b = <-free: // one at hand: no select over done
		default:
			select {
			case b = <-free:
			case <-done:
				return
			}
		}
		b.buf, b.items, b.big = b.buf[:0], b.items[:0], false
		var err error
		for {
			var it lineItem
			it, b.buf = readLine(r, b.buf, max)
			b.items = append(b.items, it)
			if err = it.err; err != nil ||
				len(b.items) == batchLines || len(b.buf) >= batchBytes || !lineWaiting(r) {
				break
			}
		}
		for i := range b.items { // buf may have moved as it grew
			it := &b.items[i]
			it.line = b.buf[it.off : it.off+len(it.line)]
		}
		if cap(b.buf) > bigLine {
			select {
			case <-bigTok:
				b.big = true
			case <-done:
				return
			}
		}
		select {
		case batches <- b:
		default:
			select {
			case batches <- b:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
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
	if l.lineNo == 1 {
		// A UTF-8 byte order mark, as some editors and Windows tools
		// write at the start of a file, is not part of the request.
		it.line = bytes.TrimPrefix(it.line, utf8BOM)
	}
	if protocol.Skip(it.line) {
		return res, false
	}
	req := &l.req
	if p, err := l.decode(it.line, req); p != nil {
		// A panic while decoding: answer, go on.
		ref := ""
		if req.Type != "" && req.Title != "" {
			ref = protocol.Ref(req.Type, req.Title)
		}
		msg := fmt.Sprintf("request line %d: internal error (panic) while decoding: %v", l.lineNo, *p)
		l.cfg.Log.Error(msg)
		return protocol.ErrorResult(ref, msg), true
	} else if err != nil {
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

// decode runs the decoder, returning what it panicked with, if it did.
func (l *loop) decode(line []byte, req *protocol.Request) (panicked *any, err error) {
	defer func() {
		if p := recover(); p != nil {
			l.cfg.Log.Debug(string(debug.Stack()))
			panicked = &p
		}
	}()
	return nil, l.cfg.Decode(line, req)
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

// apply runs the applier and echoes the request's id in its answer (the
// one place that does). A panic inside is the applier's to answer:
// applier.Engine turns one into an error answer naming the resource.
func (l *loop) apply(ctx context.Context, req *protocol.Request) protocol.Result {
	res := l.app.Apply(ctx, req)
	if res.Resource == "" {
		res.Resource = protocol.Ref(req.Type, req.Title)
	}
	res.ID = req.ID
	return res
}
