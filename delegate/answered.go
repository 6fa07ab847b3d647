package delegate

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// The bridge's log comes on its stderr, read by the runner's own
// goroutine, and its answers on stdout: without a rendezvous a
// resource's lines could be relayed after its answer was taken, after
// the next resource's lines, after the run's summary, out of the report.
// The bridge writes "Pippet-Answered: ID" on stderr after the request's
// last line and before its answer; answered intercepts those lines, and
// Apply and Receive wait for the one of each answer before returning it.

// answeredPrefix starts the line that closes a request's log.
const answeredPrefix = "Pippet-Answered: "

// answeredWait bounds the wait for a request's last log line, which the
// bridge wrote before its answer: only a stalled stderr reader waits it.
const answeredWait = 5 * time.Second

type answered struct {
	next slog.Handler
	*answerState
}

type answerState struct {
	mu   sync.Mutex
	seen map[string]bool
	ch   chan struct{} // closed when a line is seen
}

func newAnswered(next slog.Handler) *answered {
	return &answered{next: next, answerState: &answerState{seen: map[string]bool{}, ch: make(chan struct{})}}
}

func (a *answered) Enabled(ctx context.Context, l slog.Level) bool { return true }

func (a *answered) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == stderrMessage {
		var line string
		r.Attrs(func(at slog.Attr) bool {
			if at.Key == "line" {
				line = at.Value.String()
				return false
			}
			return true
		})
		if id, ok := strings.CutPrefix(line, answeredPrefix); ok {
			a.mu.Lock()
			if len(a.seen) > 4096 {
				a.seen = map[string]bool{} // ids nobody waited for (custom facts)
			}
			a.seen[strings.TrimSpace(id)] = true
			close(a.ch)
			a.ch = make(chan struct{})
			a.mu.Unlock()
			return nil
		}
	}
	if r.Message != stderrMessage && !a.next.Enabled(ctx, r.Level) {
		return nil
	}
	return a.next.Handle(ctx, r)
}

func (a *answered) WithAttrs(as []slog.Attr) slog.Handler {
	return &answered{next: a.next.WithAttrs(as), answerState: a.answerState}
}

func (a *answered) WithGroup(name string) slog.Handler {
	return &answered{next: a.next.WithGroup(name), answerState: a.answerState}
}

// wait returns once the line closing the log of the request whose raw id
// is id was relayed, ctx ended, or answeredWait passed.
func (a *answered) wait(ctx context.Context, id []byte) {
	key := strings.TrimSpace(string(id))
	if a == nil || key == "" {
		return
	}
	t := time.NewTimer(answeredWait)
	defer t.Stop()
	for {
		a.mu.Lock()
		if a.seen[key] {
			delete(a.seen, key)
			a.mu.Unlock()
			return
		}
		ch := a.ch
		a.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}
