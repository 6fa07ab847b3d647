package delegate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	json "github.com/goccy/go-json"
)

// An agent's run needs Ruby twice: for the custom facts pluginsync
// brought (only Facter can evaluate them) and for the resources of the
// types pippet lacks. CustomFacts asks the bridge that will apply those
// resources to evaluate the facts too, so that a run starts Ruby and
// loads Puppet once, as Puppet's own agent does, and the facts that
// consult Puppet (its settings, its providers) see it loaded.

// ErrNoFacts is wrapped by CustomFacts' error when this fallback cannot
// evaluate facts: it is a command line, not pippet's bridge.
var ErrNoFacts = errors.New("the fallback does not evaluate facts")

// factsSeq numbers the facts requests (their ids).
var factsSeq atomic.Uint64

// CustomFacts has the bridge's Facter evaluate the custom facts of dirs,
// starting the bridge if it is not running, and returns its answer: a
// JSON object whose members facts ({NAME: {"value": V, "weight": W}})
// and errors ([...]) agent/facts reads, as from its Facter process. The bridge starts Facter
// afresh for each request, so files changed since an earlier one are
// read again. ctx bounds the wait: when it ends first, or the bridge
// dies or answers out of step, the bridge is replaced before its next
// request and the error says why.
func (f *Fallback) CustomFacts(ctx context.Context, dirs []string) ([]byte, error) {
	if f == nil || f.command {
		return nil, ErrNoFacts
	}
	if err := f.register(ctx); err != nil {
		return nil, fmt.Errorf("custom facts through %s: %w", f.desc, err)
	}
	if dirs == nil {
		dirs = []string{}
	}
	id := "facts-" + strconv.FormatUint(factsSeq.Add(1), 10)
	line, err := json.Marshal(map[string]any{"op": "facts", "dirs": dirs, "id": id})
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if err := f.recv.LockApplyContext(ctx); err != nil {
		return nil, fmt.Errorf("custom facts through %s: not sent: %w", f.desc, err)
	}
	defer f.recv.UnlockApply()
	lines := f.recv.Lines()
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("custom facts through %s: %w", f.desc, err)
	}
	if _, err := f.recv.InputStream().Write(line); err != nil {
		lines.Break(err)
		return nil, fmt.Errorf("custom facts through %s: sending the request: %w", f.desc, err)
	}
	for {
		raw, err := lines.ReadLine(ctx)
		if err != nil {
			// Unanswered: the bridge may still be evaluating; it is out
			// of step with the requests to come.
			lines.Break(err)
			return nil, fmt.Errorf("custom facts through %s: no answer: %w", f.desc, err)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			continue // a log line
		}
		var a struct {
			Ready     bool            `json:"ready"`
			ID        json.RawMessage `json:"id"`
			Error     bool            `json:"error"`
			Exception *string         `json:"exception"`
			Facts     json.RawMessage `json:"facts"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			err = fmt.Errorf("malformed answer: %w", err)
			lines.Break(err)
			return nil, fmt.Errorf("custom facts through %s: %w", f.desc, err)
		}
		if a.Ready {
			continue
		}
		if string(a.ID) != strconv.Quote(id) {
			err := fmt.Errorf("an answer out of step (id %s, not %q)", a.ID, id)
			lines.Break(err)
			return nil, fmt.Errorf("custom facts through %s: %w", f.desc, err)
		}
		if a.Error {
			msg := "no reason given"
			if a.Exception != nil {
				msg = *a.Exception
			}
			return nil, fmt.Errorf("custom facts through %s: %s", f.desc, msg)
		}
		if len(a.Facts) == 0 || a.Facts[0] != '{' {
			return nil, fmt.Errorf("custom facts through %s: the answer has no facts", f.desc)
		}
		// The answer line itself: its facts and errors members are the
		// object the caller reads (the others it ignores).
		return raw, nil
	}
}
