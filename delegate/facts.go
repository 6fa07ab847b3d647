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
	raw, err := f.ask(ctx, map[string]any{"op": "facts", "dirs": dirs, "id": id}, id, "facts")
	if err != nil {
		return nil, fmt.Errorf("custom facts through %s: %w", f.desc, err)
	}
	return raw, nil
}

// ask sends the bridge one request of its own (not a resource) whose id
// is id, and returns the answer line, which must hold member as a JSON
// object or list. The bridge is started if it is not running; the caller
// checked it is the bridge.
func (f *Fallback) ask(ctx context.Context, req map[string]any, id, member string) ([]byte, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if err := f.recv.LockApplyContext(ctx); err != nil {
		return nil, fmt.Errorf("not sent: %w", err)
	}
	defer f.recv.UnlockApply()
	lines := f.recv.Lines()
	if err := lines.Err(); err != nil {
		return nil, err
	}
	if _, err := f.recv.InputStream().Write(line); err != nil {
		lines.Break(err)
		return nil, fmt.Errorf("sending the request: %w", err)
	}
	for {
		raw, err := lines.ReadLine(ctx)
		if err != nil {
			// Unanswered: the bridge may still be working; it is out of
			// step with the requests to come.
			lines.Break(err)
			return nil, fmt.Errorf("no answer: %w", err)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			continue // a log line
		}
		var a map[string]json.RawMessage
		if err := json.Unmarshal(raw, &a); err != nil {
			err = fmt.Errorf("malformed answer: %w", err)
			lines.Break(err)
			return nil, err
		}
		if string(a["ready"]) == "true" {
			continue
		}
		if string(a["id"]) != strconv.Quote(id) {
			err := fmt.Errorf("an answer out of step (id %s, not %q)", a["id"], id)
			lines.Break(err)
			return nil, err
		}
		if string(a["error"]) == "true" {
			msg := "no reason given"
			var s string
			if json.Unmarshal(a["exception"], &s) == nil && s != "" {
				msg = s
			}
			return nil, errors.New(msg)
		}
		if m := a[member]; len(m) == 0 || (m[0] != '{' && m[0] != '[') {
			return nil, fmt.Errorf("the answer has no %s", member)
		}
		// The answer line itself: its facts and errors members are the
		// object the caller reads (the others it ignores).
		return raw, nil
	}
}
