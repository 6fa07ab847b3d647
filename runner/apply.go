package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/protocol"
)

// Resource is one resource to converge, as a graph engine holds it.
type Resource struct {
	// Type is the resource type's name, e.g. "file" or "exec".
	Type string `json:"type"`
	// Title is the resource's title; it fills the type's namevar unless
	// Params names it.
	Title string `json:"title"`
	// Params is a YAML mapping in a string, e.g. "{ensure: file, mode: '0644'}".
	// JSON is YAML, so a JSON object works too. Empty means "{}".
	Params string `json:"params"`
}

// Ref is the resource's reference as Puppet writes it: the type's name
// capitalized segment by segment, and the title in brackets (File[/tmp/x]).
func (r *Resource) Ref() string {
	segs := strings.Split(r.Type, "::")
	for i, s := range segs {
		if s != "" {
			segs[i] = strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
		}
	}
	return strings.Join(segs, "::") + "[" + r.Title + "]"
}

// Result is the receiver's answer to one request.
type Result struct {
	// Resource is the reference the receiver answered for (File[/tmp/x]);
	// empty when it could not decode the request far enough to name it.
	Resource string `json:"resource,omitempty"`
	// Failed: the resource did not converge (always true when Error is).
	Failed bool `json:"failed"`
	// Changed: at least one change was made.
	Changed bool `json:"changed"`
	// Noop: the resource was evaluated in noop mode.
	Noop bool `json:"noop"`
	// Error: the request could not be evaluated at all.
	Error bool `json:"error"`
	// Exception is the message of an error or failure ("" for none).
	Exception string `json:"exception"`
	// ID is the request's id echoed by the receiver (raw JSON), if any.
	ID json.RawMessage `json:"id,omitempty"`
	// Events lists the changes made or, in noop mode, wanted. Puppet's own
	// receiver sends none.
	Events []protocol.Event `json:"events,omitempty"`
}

// MarshalJSON writes the answer as a receiver does: the six fields in
// Puppet's order, exception null when there is none, then id and events
// when present.
func (r Result) MarshalJSON() ([]byte, error) {
	type wire struct {
		Resource  string           `json:"resource,omitempty"`
		Failed    bool             `json:"failed"`
		Changed   bool             `json:"changed"`
		Noop      bool             `json:"noop"`
		Error     bool             `json:"error"`
		Exception *string          `json:"exception"`
		ID        json.RawMessage  `json:"id,omitempty"`
		Events    []protocol.Event `json:"events,omitempty"`
	}
	w := wire{Resource: r.Resource, Failed: r.Failed, Changed: r.Changed, Noop: r.Noop, Error: r.Error, ID: r.ID, Events: r.Events}
	if r.Exception != "" {
		w.Exception = &r.Exception
	}
	return json.Marshal(&w)
}

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
	// LockApply takes the lock for one request/answer exchange.
	LockApply()
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

func (e *ResultError) Error() string {
	msg := e.Result.Exception
	if msg == "" {
		msg = "no reason given"
	}
	if e.Result.Error {
		return fmt.Sprintf("%s: receiver could not apply it: %s", e.Ref, msg)
	}
	return fmt.Sprintf("%s failed: %s", e.Ref, msg)
}

// Apply sends res to the receiver behind r and reads its answer. It
// returns whether the resource was changed; an answer with error or failed
// set is a *ResultError. A missing, empty, partial or malformed answer, or
// a child that dies, is an error wrapping ErrNoAnswer, ErrBadAnswer or
// ErrReceiverDied; it breaks the child so the Runner replaces it. Apply
// returns when ctx is done at the latest: without a deadline in ctx, a
// child that neither answers nor dies is waited for.
func Apply(ctx context.Context, r Runner, res *Resource) (changed bool, err error) {
	result, err := ApplyResult(ctx, r, res)
	return result.Changed, err
}

// ApplyResult is Apply returning the whole answer, events included. The
// Result is filled whenever the receiver answered, even with an error.
func ApplyResult(ctx context.Context, r Runner, res *Resource) (Result, error) {
	line, err := encodeRequest(res)
	if err != nil {
		return Result{}, err
	}
	ref := res.Ref // built only for an error

	r.LockApply()
	defer r.UnlockApply()

	lines := r.Lines()
	if err := lines.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", ref(), unavailable(err))
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: not sent: %w", ref(), err)
	}
	if err := write(ctx, r.InputStream(), line); err != nil {
		lines.Break(err)
		return Result{}, fmt.Errorf("%s: sending to receiver: %w", ref(), err)
	}
	for {
		raw, err := lines.ReadLine(ctx)
		if err != nil {
			err = readError(err)
			lines.Break(err)
			return Result{}, fmt.Errorf("%s: %w", ref(), err)
		}
		result, kind, err := decodeAnswer(raw)
		switch kind {
		case lineNoise, lineReady:
			continue
		case lineBad:
			lines.Break(err)
			return Result{}, fmt.Errorf("%s: %w", ref(), err)
		}
		if result.Error || result.Failed {
			return result, &ResultError{Ref: ref(), Result: result}
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

func encodeRequest(res *Resource) ([]byte, error) {
	req := *res
	if strings.TrimSpace(req.Params) == "" {
		req.Params = "{}"
	}
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding request: %w", res.Ref(), err)
	}
	return append(b, '\n'), nil
}

// write sends one request line. A pipe whose reader has stopped reading
// blocks a write once its buffer is full, so the write runs aside and the
// wait honours ctx; a write left behind ends when the Runner replaces the
// (then broken) child and closes its stdin.
func write(ctx context.Context, w io.Writer, line []byte) error {
	if w == nil {
		return fmt.Errorf("%w: no input stream", ErrUnavailable)
	}
	if ctx.Done() == nil { // nothing to wait for besides the write
		_, err := w.Write(line)
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(line)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrNoAnswer, ctx.Err())
	}
}

type lineKind int

const (
	lineAnswer lineKind = iota
	lineNoise           // not a JSON object: Puppet's Notice:/Error: lines
	lineReady           // the ready banner
	lineBad             // looks like JSON but is not a result
)

// optBool is a JSON boolean that remembers whether it was present.
type optBool struct{ set, v bool }

func (b *optBool) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &b.v); err != nil {
		return err
	}
	b.set = true
	return nil
}

type wireResult struct {
	Resource  string           `json:"resource"`
	Failed    optBool          `json:"failed"`
	Changed   optBool          `json:"changed"`
	Noop      bool             `json:"noop"`
	Error     optBool          `json:"error"`
	Exception *string          `json:"exception"`
	ID        json.RawMessage  `json:"id"`
	Events    []protocol.Event `json:"events"`
	Ready     optBool          `json:"ready"`
}

// decodeAnswer classifies one output line and decodes it when it is an
// answer. A line is an answer candidate when it starts with '{' (after
// colour codes and blanks); one that does not decode, or lacks the failed,
// changed and error members every receiver sends, is lineBad.
func decodeAnswer(raw []byte) (Result, lineKind, error) {
	line := bytes.TrimSpace(stripANSI(raw))
	if len(line) == 0 || line[0] != '{' {
		return Result{}, lineNoise, nil
	}
	var w wireResult
	if err := json.Unmarshal(line, &w); err != nil {
		return Result{}, lineBad, fmt.Errorf("%w %s: %v", ErrBadAnswer, quote(line), err)
	}
	if w.Ready.set && !w.Failed.set {
		return Result{}, lineReady, nil
	}
	if !w.Failed.set || !w.Changed.set || !w.Error.set {
		return Result{}, lineBad, fmt.Errorf("%w %s: lacks failed, changed or error", ErrBadAnswer, quote(line))
	}
	r := Result{
		Resource: w.Resource,
		Failed:   w.Failed.v,
		Changed:  w.Changed.v,
		Noop:     w.Noop,
		Error:    w.Error.v,
		ID:       w.ID,
		Events:   w.Events,
	}
	if w.Exception != nil {
		r.Exception = *w.Exception
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
