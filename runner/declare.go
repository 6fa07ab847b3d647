package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// A graph engine sends one resource at a time, and a resource alone
// cannot know the others of its run: a file's purge would remove what
// other resources manage, a concat_file would find no fragments. Declare
// tells the receiver which resources the run manages, once, before it
// applies them; every request that follows on that receiver is applied
// in that run (docs/protocol.md, Run context), until the next Declare
// replaces it or an empty one clears it.
//
// The declaration belongs to the receiver process, and a Receiver
// replaces a process that died or was broken: it sends the declaration
// in force again to every process that replaces one, before any request,
// so that a purge never runs without it (a replacement that refuses it is
// not used: applies fail with ErrUnavailable, naming why, and the next
// one starts another). It is forgotten when the last user unregisters.
// Any other Runner (mock.Runner) is only sent the line.

// minDeclareLevel is the protocol level of a receiver that takes a
// declaration.
const minDeclareLevel = 3

// Declare sets the run the receiver behind r applies the requests that
// follow in: resources are the resources the run manages (each a Type, a
// Title and, where a type reads them, Params or Values: a concat_fragment's
// target, content and order; a file needs none to be left alone by a
// purge). It replaces any earlier declaration; nil or empty clears it.
// A declaration the receiver refuses (a resource declared twice, params
// it cannot read) is a *ResultError naming the resource, and the run stays
// as it was. A resource that cannot be sent as it is (see Resource; a
// Refresh set, no type or title) is an error wrapping ErrInvalidRequest,
// and a receiver below protocol level 3 (Puppet's, an older one of ours,
// a child started with Options.NoReady) an error wrapping
// ErrUnsupported, both before anything is written. Errors are otherwise
// Apply's.
func Declare(ctx context.Context, r Runner, resources []Resource) error {
	line, err := encodeDeclaration(resources)
	if err != nil {
		return err
	}
	// The reference of the declaration in errors: it names no resource.
	self := &Resource{Type: "Declaration", Title: strconv.Itoa(len(resources)) + " resources"}
	check := func() error {
		if pl, ok := r.(ProtocolLeveler); ok && pl.ProtocolLevel() >= minDeclareLevel {
			return nil
		}
		return fmt.Errorf("%s: %w (a declaration needs protocol level %d)", shortRef(self), ErrUnsupported, minDeclareLevel)
	}
	rec, _ := r.(*Receiver)
	done := func(err error) {
		var re *ResultError
		if rec == nil || errors.As(err, &re) {
			return // refused: the receiver's run is as it was
		}
		// Taken, or the process broke with it in flight: the next
		// process gets it either way (what the caller asked for last).
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(resources) == 0 {
			rec.declared = nil
		} else {
			rec.declared = line
		}
	}
	// The line is kept: the id goes on a copy.
	sent := make([]byte, len(line), len(line)+idRoom)
	copy(sent, line)
	_, err = exchangeLine(ctx, r, self, "", sent, check, done)
	return err
}

// encodeDeclaration writes the declaration's request line:
// {"op":"declare","resources":[{"type":...,"title":...,"params":...},...]}.
func encodeDeclaration(resources []Resource) ([]byte, error) {
	b := make([]byte, 0, 64+64*len(resources))
	b = append(b, `{"op":"declare","resources":[`...)
	for i := range resources {
		res := &resources[i]
		switch {
		case res.Refresh:
			return nil, fmt.Errorf("%s: %w: a declared resource has no refresh (it is not applied by the declaration)", shortRef(res), ErrInvalidRequest)
		case res.Type == "" || res.Title == "":
			return nil, fmt.Errorf("%s: %w: a declared resource needs a type and a title", shortRef(res), ErrInvalidRequest)
		}
		one, err := encodeRequest(res, false)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, one[:len(one)-1]...) // without its newline
	}
	return append(b, ']', '}', '\n'), nil
}

// startDeclared starts a child and sends it the declaration in force, if
// any, before anyone else can use it; a child that does not take it is
// killed, and the error says why.
func (r *Receiver) startDeclared(ctx context.Context) (*child, error) {
	c, err := r.start(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	line := r.declared
	r.mu.Unlock()
	if line == nil {
		return c, nil
	}
	// Bounded as the start is: a child that takes it is ready.
	dctx, cancel := context.WithTimeout(ctx, r.opts.StartTimeout)
	defer cancel()
	if err := c.declare(dctx, line); err != nil {
		c.kill()
		return nil, fmt.Errorf("sending the run's declaration again to the new receiver (pid %d): %w", c.pid, err)
	}
	return c, nil
}

// declare sends a new child the declaration line and reads its answer.
func (c *child) declare(ctx context.Context, line []byte) error {
	if c.protocol < minDeclareLevel {
		return fmt.Errorf("%w (it announced protocol level %d; a declaration needs %d)", ErrUnsupported, c.protocol, minDeclareLevel)
	}
	self := &Resource{Type: "Declaration"}
	sent := make([]byte, len(line), len(line)+idRoom)
	copy(sent, line)
	sent, id := appendID(c.lines, sent)
	if err := write(ctx, c.stdin, sent); err != nil {
		c.lines.Break(err)
		return err
	}
	_, err := readAnswer(ctx, c.lines, self, answerKey{id: id})
	return err
}
