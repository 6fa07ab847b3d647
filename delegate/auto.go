package delegate

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	json "github.com/goccy/go-json"
)

// A type's Ruby may declare autorelationships (`autorequire(:package)
// { ... }`, autobefore, autosubscribe, autonotify): blocks of Ruby,
// evaluated by Puppet against the whole catalog. Puppet's relationship
// graph adds them before its walk; a delegated type's must be in the
// graph the caller walks too, or its resource is applied wherever the
// walk happens to put it. AutoRelations asks the bridge for them: it
// makes the catalog's resources into Puppet's and has each delegated
// resource whose type declares any say its edges, with Puppet's own
// code. Only the types whose Ruby mentions an autorelationship are asked
// about, so a catalog without them starts no Ruby for it.

// AutoResource is one resource of a catalog as the bridge makes it into
// Puppet's: its type, title and params; Ask when its autorelationships
// are wanted.
type AutoResource struct {
	Type   string         `json:"type"`
	Title  string         `json:"title"`
	Params map[string]any `json:"params"`
	Ask    bool           `json:"ask,omitempty"`
}

// AutoEdge is an autorelationship Puppet found: Source comes before
// Target; Refresh when Target hears Source's events (autosubscribe,
// autonotify); Kind is require, subscribe, before or notify.
type AutoEdge struct {
	Source  string `json:"source"`
	Target  string `json:"target"`
	Refresh bool   `json:"refresh"`
	Kind    string `json:"kind"`
}

var (
	autoSeq  atomic.Uint64
	autoDecl = regexp.MustCompile(`(?m)^[^#\n]*\bauto(require|before|subscribe|notify)\b`)
)

// DeclaresAuto reports whether Puppet's type name, as the fallback would
// load it, declares an autorelationship (false for a command fallback,
// which is asked nothing but resources).
func (f *Fallback) DeclaresAuto(name string) bool {
	if f == nil || f.command {
		return false
	}
	f.typesOnce.Do(f.scan)
	name = strings.ToLower(name)
	f.autoMu.Lock()
	defer f.autoMu.Unlock()
	if v, ok := f.auto[name]; ok {
		return v
	}
	v := false
	if p := f.paths[name]; p != "" {
		if b, err := os.ReadFile(p); err == nil {
			v = autoDecl.Match(b)
		}
	}
	if f.auto == nil {
		f.auto = map[string]bool{}
	}
	f.auto[name] = v
	return v
}

// AutoRelations has the bridge evaluate the autorelationships of the
// resources marked Ask against the catalog res, starting the bridge if it
// is not running.
func (f *Fallback) AutoRelations(ctx context.Context, res []AutoResource) ([]AutoEdge, error) {
	if f == nil || f.command {
		return nil, fmt.Errorf("autorelationships: the fallback is not Puppet")
	}
	if err := f.register(ctx); err != nil {
		return nil, fmt.Errorf("autorelationships through %s: %w", f.desc, err)
	}
	id := "auto-" + strconv.FormatUint(autoSeq.Add(1), 10)
	raw, err := f.ask(ctx, map[string]any{"op": "autorelations", "resources": res, "id": id}, id, "edges")
	if err != nil {
		return nil, fmt.Errorf("autorelationships through %s: %w", f.desc, err)
	}
	var a struct {
		Edges []AutoEdge `json:"edges"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("autorelationships through %s: malformed answer: %w", f.desc, err)
	}
	return a.Edges, nil
}
