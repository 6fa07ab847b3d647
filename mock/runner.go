package mock

// This file: a scripted runner.Runner standing in for a receiver process,
// so the controller side is tested without one.

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/runner"
)

// Reply is what the scripted child writes on its stdout for one request.
// The zero Reply writes nothing: a request that is never answered.
type Reply struct {
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

// Runner is a scripted runner.Runner. The zero value answers every request
// Unchanged. Set the fields before first use.
//
// It behaves as a Receiver does towards Apply: one persistent LineReader
// per (fake) child, and a child whose reader Apply broke, or whose output
// ended, is replaced at the next LockApply (counted by Starts).
type Runner struct {
	// Script holds the replies to the first requests, in order.
	Script []Reply
	// Respond computes the reply to each request after the script; nil
	// means Unchanged.
	Respond func(req runner.Resource) Reply
	// Banner, when set, is written by every child as it starts, like the
	// receiver's ready line.
	Banner string

	applyMu sync.Mutex

	mu       sync.Mutex
	cur      *fakeChild
	starts   int
	served   int
	requests []runner.Resource
	lines    []string
}

// LockApply takes the apply lock and replaces a broken or dead child.
func (m *Runner) LockApply() {
	m.applyMu.Lock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil && m.cur.lines.Err() == nil {
		return
	}
	if m.cur != nil {
		m.cur.kill()
	}
	m.cur = m.startLocked()
}

// UnlockApply releases the apply lock.
func (m *Runner) UnlockApply() { m.applyMu.Unlock() }

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
func (m *Runner) reply(line []byte) (runner.Resource, Reply) {
	var req runner.Resource
	_ = json.Unmarshal(line, &req)
	m.mu.Lock()
	m.lines = append(m.lines, string(line))
	m.requests = append(m.requests, req)
	n := m.served
	m.served++
	m.mu.Unlock()
	if n < len(m.Script) {
		return req, m.Script[n]
	}
	if m.Respond != nil {
		return req, m.Respond(req)
	}
	return req, Unchanged()
}

type pending struct {
	req   runner.Resource
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
		if ans.Resource == "" {
			ans.Resource = p.req.Ref()
		}
		enc, _ := json.Marshal(&ans)
		b.Write(enc)
		b.WriteByte('\n')
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
		req, reply := s.c.m.reply(line)
		select {
		case s.c.replies <- pending{req: req, reply: reply}:
		case <-s.c.dead:
			return 0, io.ErrClosedPipe
		}
	}
}

func (s *fakeStdin) Close() error { return nil }
