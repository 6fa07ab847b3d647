package mock

// This file: a scripted runner.Runner standing in for a receiver process,
// so the controller side is tested without one.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

// Reply is what the scripted child writes on its stdout for one request.
// The zero Reply writes nothing: a request that is never answered.
type Reply struct {
	// Wait, when set, holds the reply until it is closed: the request is
	// in flight (received, unanswered) until the test says so.
	Wait <-chan struct{}
	// Delay comes before anything is written (a slow receiver).
	Delay time.Duration
	// Noise lines come first, as Puppet's `Notice:`/`Error:` lines do.
	Noise []string
	// Answer, when set, is written as one JSON line. An empty Resource is
	// filled with the request's reference.
	Answer *runner.Result
	// Raw is written verbatim after the answer (or instead of one): a
	// partial line, garbage, a second line.
	Raw string
	// EOF closes the output after the rest is written: the child died.
	EOF bool
}

// Changed answers that the resource was changed.
func Changed() Reply { return Reply{Answer: &runner.Result{Changed: true}} }

// Unchanged answers that the resource was already in sync.
func Unchanged() Reply { return Reply{Answer: &runner.Result{}} }

// Failed answers that the resource did not converge, for reason msg.
func Failed(msg string) Reply {
	return Reply{Answer: &runner.Result{Failed: true, Exception: msg}}
}

// Errored answers that the request could not be evaluated, for reason msg.
func Errored(msg string) Reply {
	return Reply{Answer: &runner.Result{Failed: true, Error: true, Exception: msg}}
}

// InSync answers a noop request (runner.Check) with nothing to change.
func InSync() Reply { return Reply{Answer: &runner.Result{Noop: true}} }

// WouldChange answers a noop request (runner.Check) with the changes that
// would be made; their status is set to noop.
func WouldChange(events ...runner.Event) Reply {
	for i := range events {
		events[i].Status = protocol.StatusNoop
	}
	return Reply{Answer: &runner.Result{Noop: true, Events: events}}
}

// Runner is a scripted runner.Runner. The zero value answers every request
// Unchanged. Set the fields before first use.
//
// It behaves as a Receiver does towards Apply: one persistent LineReader
// per (fake) child, and a child whose reader Apply broke, or whose output
// ended, is replaced at the next LockApply (counted by Starts). The apply
// lock honours LockApplyContext's context. Requests are decoded as the
// receiver reads them: params sent as a JSON object (Resource.Values)
// come back in Values, params in a string in Params, and a request of
// runner.Check has Values["noop"] == true.
type Runner struct {
	// Script holds the replies to the first requests, in order.
	Script []Reply
	// Respond computes the reply to each request after the script; nil
	// means Unchanged.
	Respond func(req runner.Resource) Reply
	// Banner, when set, is written by every child as it starts, like the
	// receiver's ready line.
	Banner string
	// Protocol is the protocol level the runner reports (ProtocolLevel):
	// 2 or more answers runner.Find, Search and Describe, as our receiver
	// does; 0, the zero value, stands for Puppet's receiver, with which
	// they fail with runner.ErrUnsupported and write nothing.
	Protocol int
	// RespondVerb, when set, computes the reply to each find, search,
	// describe or declare request after the script (op is "find",
	// "search", "describe" or "declare"; a declaration's req is empty:
	// see Declarations); nil leaves them to Respond, and a declaration to
	// its default answer, taken.
	RespondVerb func(op string, req runner.Resource) Reply

	lockOnce sync.Once
	applyMu  chan struct{} // the apply lock's token

	mu       sync.Mutex
	cur      *fakeChild
	starts   int
	served   int
	requests []runner.Resource
	ops      []string
	lines    []string
	declared [][]runner.Resource
}

// ProtocolLevel reports Protocol (see runner.ProtocolLeveler).
func (m *Runner) ProtocolLevel() int { return m.Protocol }

// Ops returns each request's op ("apply", "find", "search", "describe"
// or "declare"), in the order of Requests.
func (m *Runner) Ops() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.ops...)
}

// Declarations returns the resources of every declaration sent
// (runner.Declare), in order, decoded as requests are (params in a string
// in Params, a JSON object in Values); an empty one cleared the run. A
// Protocol of 3 or more takes them.
func (m *Runner) Declarations() [][]runner.Resource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]runner.Resource(nil), m.declared...)
}

// Found answers a find with the state (ensure first) and its params.
func Found(state protocol.State, params string) Reply {
	return Reply{Answer: &runner.Result{State: state, Params: params}}
}

// Listed answers a search with instances (sorted by title, as the
// receiver sorts them, is the caller's business).
func Listed(instances ...protocol.Instance) Reply {
	if instances == nil {
		instances = []protocol.Instance{}
	}
	return Reply{Answer: &runner.Result{Instances: instances}}
}

// Declared answers a describe with a declaration (a JSON object).
func Declared(declaration string) Reply {
	return Reply{Answer: &runner.Result{Declaration: []byte(declaration)}}
}

// LockApply takes the apply lock and replaces a broken or dead child.
func (m *Runner) LockApply() { _ = m.LockApplyContext(context.Background()) }

// LockApplyContext is LockApply giving up when ctx is done.
func (m *Runner) LockApplyContext(ctx context.Context) error {
	m.lockOnce.Do(func() { m.applyMu = make(chan struct{}, 1) })
	select {
	case m.applyMu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil && m.cur.lines.Err() == nil {
		return nil
	}
	if m.cur != nil {
		m.cur.kill()
	}
	m.cur = m.startLocked()
	return nil
}

// UnlockApply releases the apply lock.
func (m *Runner) UnlockApply() { <-m.applyMu }

// InputStream is the current child's stdin.
func (m *Runner) InputStream() io.WriteCloser { return m.child().in }

// OutputStream is the current child's stdout.
func (m *Runner) OutputStream() io.ReadCloser { return m.child().outR }

// Lines is the current child's persistent line reader.
func (m *Runner) Lines() *runner.LineReader { return m.child().lines }

// Requests returns every request decoded so far, in order.
func (m *Runner) Requests() []runner.Resource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]runner.Resource(nil), m.requests...)
}

// RawLines returns every line written to the children's stdin, in order.
func (m *Runner) RawLines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.lines...)
}

// Starts is how many children were started (1 + the restarts).
func (m *Runner) Starts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.starts
}

// Close ends the current child.
func (m *Runner) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil {
		m.cur.kill()
		m.cur = nil
	}
	return nil
}

func (m *Runner) child() *fakeChild {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		m.cur = m.startLocked()
	}
	return m.cur
}

func (m *Runner) startLocked() *fakeChild {
	m.starts++
	outR, outW := io.Pipe()
	c := &fakeChild{
		m:       m,
		outR:    outR,
		outW:    outW,
		lines:   runner.NewLineReader(outR, 0),
		replies: make(chan pending, 1024),
		dead:    make(chan struct{}),
	}
	c.in = &fakeStdin{c: c}
	go c.respond(m.Banner)
	return c
}

// reply picks the reply to one request line and records it.
func (m *Runner) reply(line []byte) (pending, Reply) {
	req, op, id := decodeRequest(line)
	p := pending{req: req, op: op, id: id}
	m.mu.Lock()
	m.lines = append(m.lines, string(line))
	m.requests = append(m.requests, req)
	m.ops = append(m.ops, op)
	if op == "declare" {
		m.declared = append(m.declared, decodeDeclaration(line))
	}
	n := m.served
	m.served++
	m.mu.Unlock()
	if n < len(m.Script) {
		return p, m.Script[n]
	}
	if m.RespondVerb != nil && op != "apply" {
		return p, m.RespondVerb(op, req)
	}
	if op == "declare" {
		return p, Unchanged()
	}
	if m.Respond != nil {
		return p, m.Respond(req)
	}
	return p, Unchanged()
}

// decodeDeclaration reads a declaration's resources back as Resources.
func decodeDeclaration(line []byte) []runner.Resource {
	var w struct {
		Resources []struct {
			Type   string          `json:"type"`
			Title  string          `json:"title"`
			Params json.RawMessage `json:"params"`
		} `json:"resources"`
	}
	_ = json.Unmarshal(line, &w)
	var r protocol.Request
	decoded := protocol.DecodeLine(line, &r) == nil && len(r.Resources) == len(w.Resources)
	out := []runner.Resource{}
	for i, x := range w.Resources {
		res := runner.Resource{Type: x.Type, Title: x.Title}
		switch p := bytes.TrimSpace(x.Params); {
		case len(p) > 0 && p[0] == '"':
			_ = json.Unmarshal(p, &res.Params)
		case len(p) > 0 && p[0] == '{' && decoded:
			res.Values = r.Resources[i].Params
		}
		out = append(out, res)
	}
	return out
}

// decodeRequest reads a request line back into a Resource: params in a
// string into Params, a JSON object (as the receiver reads it) into Values.
func decodeRequest(line []byte) (runner.Resource, string, []byte) {
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '{' {
		// The legacy form: TYPE TITLE YAML.
		parts := strings.SplitN(string(t), " ", 3)
		req := runner.Resource{Type: parts[0]}
		if len(parts) > 1 {
			req.Title = parts[1]
		}
		if len(parts) > 2 {
			req.Params = parts[2]
		}
		return req, "apply", nil
	}
	var w struct {
		Op      string          `json:"op"`
		Type    string          `json:"type"`
		Title   string          `json:"title"`
		Params  json.RawMessage `json:"params"`
		Refresh bool            `json:"refresh"`
		ID      json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &w)
	req := runner.Resource{Type: w.Type, Title: w.Title, Refresh: w.Refresh}
	switch p := bytes.TrimSpace(w.Params); {
	case len(p) > 0 && p[0] == '"':
		_ = json.Unmarshal(p, &req.Params)
	case len(p) > 0 && p[0] == '{':
		var r protocol.Request
		if protocol.DecodeLine(line, &r) == nil {
			req.Values = r.Params
		}
	}
	if w.Op == "" {
		w.Op = "apply"
	}
	return req, w.Op, w.ID
}

type pending struct {
	req   runner.Resource
	op    string
	id    []byte // the request's id, echoed in the answer as the receiver does
	reply Reply
}

// fakeChild is one scripted receiver process.
type fakeChild struct {
	m        *Runner
	in       *fakeStdin
	outR     *io.PipeReader
	outW     *io.PipeWriter
	lines    *runner.LineReader
	replies  chan pending
	dead     chan struct{}
	killOnce sync.Once
}

// respond writes the replies in order, as a receiver would.
func (c *fakeChild) respond(banner string) {
	if banner != "" {
		if _, err := io.WriteString(c.outW, strings.TrimSuffix(banner, "\n")+"\n"); err != nil {
			return
		}
	}
	for {
		var p pending
		select {
		case p = <-c.replies:
		case <-c.dead:
			return
		}
		if p.reply.Wait != nil {
			select {
			case <-p.reply.Wait:
			case <-c.dead:
				return
			}
		}
		if p.reply.Delay > 0 {
			select {
			case <-time.After(p.reply.Delay):
			case <-c.dead:
				return
			}
		}
		if _, err := c.outW.Write(render(p)); err != nil {
			return
		}
		if p.reply.EOF {
			c.outW.Close()
			return
		}
	}
}

func render(p pending) []byte {
	var b bytes.Buffer
	for _, n := range p.reply.Noise {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	if a := p.reply.Answer; a != nil {
		ans := *a
		if ans.Resource == "" && p.op != "declare" { // a declaration names no resource
			// As the receiver names them: search and describe by the
			// type alone.
			ans.Resource = p.req.Ref()
			if p.op == "search" || p.op == "describe" {
				ans.Resource = protocol.RefType(p.req.Type)
			}
		}
		if ans.ID == nil && p.id != nil {
			ans.ID = p.id
		}
		b.Write(protocol.AppendResult(nil, &ans, false))
	}
	b.WriteString(p.reply.Raw)
	return b.Bytes()
}

func (c *fakeChild) kill() {
	c.killOnce.Do(func() {
		close(c.dead)
		c.lines.Break(errors.New("mock child replaced"))
		c.outR.CloseWithError(errors.New("mock child killed"))
		c.outW.Close()
	})
}

// fakeStdin splits what Apply writes into request lines.
type fakeStdin struct {
	c   *fakeChild
	mu  sync.Mutex
	buf []byte
}

func (s *fakeStdin) Write(p []byte) (int, error) {
	select {
	case <-s.c.dead:
		return 0, io.ErrClosedPipe
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.Clone(s.buf[:i])
		s.buf = s.buf[i+1:]
		p, reply := s.c.m.reply(line)
		p.reply = reply
		select {
		case s.c.replies <- p:
		case <-s.c.dead:
			return 0, io.ErrClosedPipe
		}
	}
}

func (s *fakeStdin) Close() error { return nil }
