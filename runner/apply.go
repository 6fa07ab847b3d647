package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pippet/pippet/protocol"
)

// Result is the receiver's answer to one request: the protocol's own
// model of the answer line (one model for both sides of the pipe).
type Result = protocol.Result

// Event is one change in a Result, made or (in noop mode) wanted.
type Event = protocol.Event

// Runner is the pipe to one receiver process that Apply talks through. It
// keeps the shape graph engines already use for Puppet's receiver (lock,
// stdin, stdout), so one written for `puppet yamlresource receive` can
// switch, and adds Lines: the one persistent reader of the output.
//
// Apply holds LockApply for the whole exchange. InputStream, OutputStream
// and Lines are only called under that lock and belong to the same child
// process; a Runner that restarts its child does so in LockApply, never
// while the lock is held by someone else.
type Runner interface {
	// LockApply takes the lock for one request/answer exchange, waiting
	// as long as it takes (the shape of engines written for Puppet's
	// receiver).
	LockApply()
	// LockApplyContext is LockApply giving up when ctx is done, the wait
	// for another apply and a restart of the child included; on an error
	// (wrapping ctx.Err()) the lock is not held. Apply and Check call this.
	LockApplyContext(ctx context.Context) error
	// UnlockApply releases it.
	UnlockApply()
	// InputStream is the child's stdin: Apply writes one line per request.
	InputStream() io.WriteCloser
	// OutputStream is the child's stdout. Apply never reads it directly
	// (see Lines); it is here for engines that want the raw stream's shape.
	OutputStream() io.ReadCloser
	// Lines is the one reader of OutputStream, made once per child. Apply
	// reads answers only through it and calls Break on it when the child
	// can no longer be trusted (no answer, a malformed answer, a dead
	// child), so the Runner replaces the child before the next request.
	Lines() *LineReader
}

// Errors of the pipe itself, as opposed to a resource that did not
// converge (see ResultError). Each one also breaks the child.
var (
	// ErrReceiverDied: the child's output ended (it exited or was killed)
	// before it answered.
	ErrReceiverDied = errors.New("receiver died")
	// ErrNoAnswer: the context ended before an answer arrived.
	ErrNoAnswer = errors.New("no answer from receiver")
	// ErrBadAnswer: the answer was not a well-formed result line.
	ErrBadAnswer = errors.New("malformed answer from receiver")
	// ErrUnavailable: there is no working child to ask (not registered,
	// or it could not be started).
	ErrUnavailable = errors.New("receiver unavailable")

	errReceiverOutputEnded = fmt.Errorf("%w: its output ended", ErrReceiverDied)
)

// ResultError is the error Apply returns for an answer that says the
// resource was not converged: Error (it could not be evaluated) or Failed.
// Result holds the whole answer, events included.
type ResultError struct {
	Ref    string
	Result Result
}

// maxExceptionInError bounds the receiver's message quoted by Error; the
// Result keeps all of it.
const maxExceptionInError = 4 << 10

func (e *ResultError) Error() string {
	msg := clip(e.Result.Exception, maxExceptionInError)
	if msg == "" {
		msg = "no reason given"
	}
	ref := e.Ref
	if len(ref) > maxRefInError+2 {
		ref = clip(ref, maxRefInError) + "]"
	}
	if e.Result.Error {
		return fmt.Sprintf("%s: receiver could not apply it: %s", ref, msg)
	}
	return fmt.Sprintf("%s failed: %s", ref, msg)
}

// Apply sends res to the receiver behind r and reads its answer. It
// returns whether the resource was changed; an answer with error or failed
// set is a *ResultError. A missing, empty, partial or malformed answer, or
// a child that dies, is an error wrapping ErrNoAnswer, ErrBadAnswer or
// ErrReceiverDied; it breaks the child so the Runner replaces it. A
// Resource that cannot be sent as it is (invalid UTF-8, see Resource) is
// refused before anything is written, with an error wrapping
// ErrInvalidRequest.
//
// Apply never waits past ctx: not for another apply holding the lock, not
// for a restart of the child, not for the answer. Without a deadline in
// ctx, a child that neither answers nor dies is waited for.
func Apply(ctx context.Context, r Runner, res *Resource) (changed bool, err error) {
	result, err := ApplyResult(ctx, r, res)
	return result.Changed, err
}

// ApplyResult is Apply returning the whole answer, events included. The
// Result is filled whenever the receiver answered, even with an error.
func ApplyResult(ctx context.Context, r Runner, res *Resource) (Result, error) {
	return exchange(ctx, r, res, false)
}

// Check asks whether res is in sync without changing anything, as mgmt's
// CheckApply(apply=false) does: the request goes with the noop
// metaparameter set, and inSync is true when the answer lists no change
// that would be made; events are those changes (status "noop"). Params in
// a string are read here as the receiver reads them, to add noop. Errors
// are Apply's. Puppet's own receiver sends no events: with it, Check
// reports in sync unless the answer says changed.
func Check(ctx context.Context, r Runner, res *Resource) (inSync bool, events []Event, err error) {
	result, err := exchange(ctx, r, res, true)
	if err != nil {
		return false, result.Events, err
	}
	return len(result.Events) == 0 && !result.Changed, result.Events, nil
}

func exchange(ctx context.Context, r Runner, res *Resource, noop bool) (Result, error) {
	line, err := encodeRequest(res, noop)
	if err != nil {
		return Result{}, err
	}
	return exchangeLine(ctx, r, res, res.Ref(), line, nil, nil)
}

// exchangeLine sends one encoded request line and reads its answer.
// check, when not nil, runs once the lock is held and before anything is
// written (the read verbs ask whether the receiver answers them); its
// error is returned as it is. done, when not nil, is told the outcome of
// an exchange that wrote the line, the lock still held (Declare). want
// is the reference the answer must name (see answerKey; "" for any).
func exchangeLine(ctx context.Context, r Runner, res *Resource, want string, line []byte, check func() error, done func(error)) (Result, error) {
	ref := func() string { return shortRef(res) } // built only for an error
	if err := tooLong(r, res, line, idRoom); err != nil {
		return Result{}, err
	}

	if err := r.LockApplyContext(ctx); err != nil {
		return Result{}, fmt.Errorf("%s: not sent: %w", ref(), err)
	}
	defer r.UnlockApply()

	lines := r.Lines()
	if err := lines.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", ref(), unavailable(err))
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: not sent: %w", ref(), err)
	}
	if check != nil {
		if err := check(); err != nil {
			return Result{}, err
		}
	}
	key := answerKey{ref: want}
	line, key.id = withID(r, lines, line)
	in := r.InputStream()
	w := watchExchange(ctx, in, lines)
	if w != nil {
		defer w.end()
	}
	var errTail *tail
	var mark uint64
	if rr, ok := r.(*Receiver); ok {
		if errTail = rr.stderrTail(); errTail != nil {
			mark = errTail.mark()
		}
	}
	if err := writeWatched(ctx, in, line, w != nil); err != nil {
		lines.Break(err)
		err = fmt.Errorf("%s: sending to receiver: %w", ref(), err)
		if done != nil {
			done(err)
		}
		return Result{}, err
	}
	result, err := readAnswerWatched(ctx, lines, res, key, w != nil)
	if done != nil {
		done(err)
	}
	var re *ResultError
	if errTail != nil && errors.As(err, &re) && re.Result.Exception == "" {
		// Puppet's own receiver answers a failure without its reason,
		// which it wrote to stderr (`Error: ...`): the reason is the
		// stderr lines of this request.
		if why := stderrReason(ctx, errTail, mark); why != "" {
			re.Result.Exception = why
			result.Exception = why
		}
	}
	return result, err
}

// stderrWait bounds how long a failed answer without a reason waits for
// the stderr lines its child wrote before it (they travel another pipe,
// read by another goroutine); stderrQuiet is the pause that ends the wait
// once some have come.
const (
	stderrWait  = 200 * time.Millisecond
	stderrQuiet = 20 * time.Millisecond
)

// stderrReason is the child's stderr lines since mark (its `Error:` lines
// when there are any), joined, waiting at most stderrWait for them.
func stderrReason(ctx context.Context, t *tail, mark uint64) string {
	deadline := time.Now().Add(stderrWait)
	seen := t.mark()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(stderrQuiet)
		now := t.mark()
		if now > mark && now == seen {
			break
		}
		seen = now
	}
	lines := t.since(mark)
	var errs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Error:") {
			errs = append(errs, l)
		}
	}
	if len(errs) > 0 {
		lines = errs
	}
	return strings.Join(lines, "\n")
}

// deadlineWatch makes the end of a context interrupt a write to in and a
// read from out (either may be nil), pipes the runtime polls, through
// their deadlines: one registration on the context (a context.AfterFunc)
// covers both, so an exchange registers once for its write and its read.
type deadlineWatch struct {
	in, out *os.File
	stop    func() bool
	fired   chan struct{}
}

func watchDeadlines(ctx context.Context, in, out *os.File) *deadlineWatch {
	w := &deadlineWatch{in: in, out: out, fired: make(chan struct{})}
	w.stop = context.AfterFunc(ctx, func() {
		w.set(aLongTimeAgo)
		close(w.fired)
	})
	return w
}

func (w *deadlineWatch) set(t time.Time) {
	if w.in != nil {
		w.in.SetWriteDeadline(t)
	}
	if w.out != nil {
		w.out.SetReadDeadline(t)
	}
}

// end stops the watch and reports whether the context ended during it;
// the deadlines it then set are cleared for the next exchange.
func (w *deadlineWatch) end() bool {
	if w.stop() {
		return false
	}
	<-w.fired
	w.set(time.Time{})
	return true
}

// watchExchange watches ctx for an exchange over in and lines; nil when
// there is nothing to watch (ctx cannot end) or either side is not a pipe
// the runtime polls, which write and ReadLine then handle.
func watchExchange(ctx context.Context, in io.Writer, lines *LineReader) *deadlineWatch {
	if ctx.Done() == nil || lines.f == nil {
		return nil
	}
	f, ok := in.(*os.File)
	if !ok || f.SetWriteDeadline(time.Time{}) != nil {
		return nil
	}
	return watchDeadlines(ctx, f, lines.f)
}

// tooLong refuses a request line longer than the receiver behind r reads
// (when r knows: Options.MaxRequest), before anything is written; room is
// what may still be added to the line (the id: idRoom).
func tooLong(r Runner, res *Resource, line []byte, room int) error {
	if m, ok := r.(interface{ maxRequest() int }); ok && len(line)-1+room > m.maxRequest() {
		return fmt.Errorf("%s: %w: the request line is %d bytes, more than the %d the receiver reads (Options.MaxRequest)",
			shortRef(res), ErrInvalidRequest, len(line)-1+room, m.maxRequest())
	}
	return nil
}

// answerKey is what an answer must carry to be the answer to the request
// it is read for: the request's reference (its type's alone for search
// and describe), and, when the child echoes ids, the id the runner gave
// the request. A child that prints one answer too many (or too few) is
// then caught at the next answer, which names another resource or id,
// instead of shifting every later answer by one: the mismatch breaks the
// child (ErrBadAnswer), as a malformed answer does. An answer naming no
// resource is taken on its id alone (or as it is without ids: Puppet's
// receiver, protocol level 0, echoes none).
type answerKey struct {
	ref string
	id  []byte // nil: the child does not echo ids
}

// idRoom is the most withID adds to a request line: `,"id":` and a
// uint64.
const idRoom = len(`,"id":`) + 20

// withID gives the request line the child's next id when the child echoes
// ids (a receiver of ours, or the fallback's bridge: protocol level 1 or
// more); it returns the line and the id (nil when none was added).
func withID(r Runner, lines *LineReader, line []byte) ([]byte, []byte) {
	pl, ok := r.(ProtocolLeveler)
	if !ok || pl.ProtocolLevel() < 1 || len(line) < 2 || line[len(line)-2] != '}' {
		return line, nil
	}
	return appendID(lines, line)
}

// appendID gives the request line (ending in "}\n") the child's next id.
func appendID(lines *LineReader, line []byte) ([]byte, []byte) {
	lines.seq++
	// In place when the line has room (encodeRequest leaves it); the id
	// returned is a slice of the line.
	out := append(line[:len(line)-2], `,"id":`...)
	start := len(out)
	out = strconv.AppendUint(out, lines.seq, 10)
	end := len(out)
	out = append(out, '}', '\n')
	return out, out[start:end:end]
}

// check is nil when result answers the request k stands for. Whether
// the child echoes ids is learnt from its first answer to a request that
// had one (lines.ids): a receiver run with --compat leaves the id out of
// every answer, and is then checked by resource alone; once a child has
// echoed an id, an answer without one is out of step.
func (k *answerKey) check(lines *LineReader, result *Result) error {
	if result.Resource != "" && k.ref != "" && !sameRef(result.Resource, k.ref) {
		return fmt.Errorf("%w: the answer names %s where the answer to %s was due (the receiver's answers are out of step with the requests)",
			ErrBadAnswer, clip(result.Resource, maxRefInError), clip(k.ref, maxRefInError))
	}
	if k.id == nil {
		return nil
	}
	if len(result.ID) == 0 && lines.ids <= 0 {
		lines.ids = -1 // it echoes none
		return nil
	}
	lines.ids = 1
	if !bytes.Equal(bytes.TrimSpace(result.ID), k.id) {
		got := "no id"
		if len(result.ID) > 0 {
			got = "id " + clip(string(result.ID), 64)
		}
		return fmt.Errorf("%w: the answer to %s carries %s where id %s was due (the receiver's answers are out of step with the requests)",
			ErrBadAnswer, clip(k.ref, maxRefInError), got, k.id)
	}
	return nil
}

// sameRef compares two references: the type's name without regard to
// case (Ruby's and Go's capitalisation differ beyond ASCII), the title
// exactly.
func sameRef(a, b string) bool {
	if a == b {
		return true
	}
	i, j := strings.IndexByte(a, '['), strings.IndexByte(b, '[')
	if i < 0 || j < 0 {
		return strings.EqualFold(a, b)
	}
	return strings.EqualFold(a[:i], b[:j]) && a[i:] == b[j:]
}

// readAnswer reads the answer to res, skipping Puppet's log lines and the
// ready banner; a missing, malformed or mismatched (key) answer breaks the
// child.
func readAnswer(ctx context.Context, lines *LineReader, res *Resource, key answerKey) (Result, error) {
	return readAnswerWatched(ctx, lines, res, key, false)
}

// readAnswerWatched is readAnswer; watched: a deadlineWatch interrupts
// the read when ctx ends.
func readAnswerWatched(ctx context.Context, lines *LineReader, res *Resource, key answerKey, watched bool) (Result, error) {
	for {
		raw, err := lines.readLine(ctx, watched)
		if err != nil {
			err = readError(err)
			lines.Break(err)
			return Result{}, fmt.Errorf("%s: %w", shortRef(res), err)
		}
		result, kind, err := decodeAnswer(raw)
		switch kind {
		case lineNoise, lineReady:
			continue
		case lineBad:
			lines.Break(err)
			return Result{}, fmt.Errorf("%s: %w", shortRef(res), err)
		}
		if err := key.check(lines, &result); err != nil {
			lines.Break(err)
			return Result{}, fmt.Errorf("%s: %w", shortRef(res), err)
		}
		if result.Error || result.Failed {
			return result, &ResultError{Ref: res.Ref(), Result: result}
		}
		return result, nil
	}
}

func unavailable(err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrReceiverDied) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// readError names what went wrong while waiting for an answer.
func readError(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	case err == io.EOF:
		return fmt.Errorf("%w before answering (its output ended)", ErrReceiverDied)
	case errors.Is(err, ErrReceiverDied), errors.Is(err, ErrNoAnswer), errors.Is(err, ErrBadAnswer):
		return err
	case errors.Is(err, ErrLineTooLong):
		return fmt.Errorf("%w: %w", ErrBadAnswer, err)
	default:
		return fmt.Errorf("%w: reading its output: %w", ErrReceiverDied, err)
	}
}

// write sends one request line. A pipe whose reader has stopped reading
// blocks a write once its buffer is full, so the wait honours ctx: on a
// pipe the runtime polls (the *os.File of os.Pipe, as the Receiver makes),
// through the file's write deadline, in this goroutine; on any other
// writer the write runs aside, and a write left behind ends when the
// Runner replaces the (then broken) child and closes its stdin.
func write(ctx context.Context, w io.Writer, line []byte) error {
	return writeWatched(ctx, w, line, false)
}

// writeWatched is write; watched: a deadlineWatch interrupts the write
// when ctx ends.
func writeWatched(ctx context.Context, w io.Writer, line []byte, watched bool) error {
	if w == nil {
		return fmt.Errorf("%w: no input stream", ErrUnavailable)
	}
	if watched || ctx.Done() == nil { // nothing to wait for besides the write
		_, err := w.Write(line)
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrNoAnswer, ctx.Err())
		}
		return writeError(err)
	}
	if f, ok := w.(*os.File); ok && f.SetWriteDeadline(time.Time{}) == nil {
		dw := watchDeadlines(ctx, f, nil)
		_, err := f.Write(line)
		if dw.end() && err != nil {
			return fmt.Errorf("%w: %w", ErrNoAnswer, ctx.Err())
		}
		return writeError(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(line)
		done <- err
	}()
	select {
	case err := <-done:
		return writeError(err)
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNoAnswer, ctx.Err())
	}
}

// writeError names a failed write: the child's input is gone (a broken
// pipe, a closed stream), so it is ErrReceiverDied, unless there was no
// child to write to.
func writeError(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrReceiverDied) {
		return err
	}
	return fmt.Errorf("%w: writing its input: %w", ErrReceiverDied, err)
}

type lineKind int

const (
	lineAnswer lineKind = iota
	lineNoise           // not a JSON object: Puppet's Notice:/Error: lines
	lineReady           // the ready banner
	lineBad             // looks like JSON but is not a result
)

// decodeAnswer classifies one output line and decodes it when it is an
// answer. A line is an answer candidate when it starts with '{' (after
// colour codes and blanks); the ready banner is skipped; one that does not
// decode as a protocol.Result is lineBad.
func decodeAnswer(raw []byte) (Result, lineKind, error) {
	line := bytes.TrimSpace(stripANSI(raw))
	if len(line) == 0 || line[0] != '{' {
		return Result{}, lineNoise, nil
	}
	var r Result
	if err := protocol.DecodeResult(line, &r); err != nil {
		if isReadyLine(line) {
			return Result{}, lineReady, nil
		}
		return Result{}, lineBad, fmt.Errorf("%w %s: %v", ErrBadAnswer, quote(line), err)
	}
	return r, lineAnswer, nil
}

// quote shows at most 200 bytes of a bad line in an error.
func quote(b []byte) string {
	const max = 200
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}

// stripANSI drops terminal colour sequences (ESC [ ... letter), which
// Puppet prints around its log lines unless --color=no.
func stripANSI(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		out = append(out, b[i])
	}
	return out
}
