package applier

import (
	"log/slog"

	"github.com/pippet/pippet/protocol"
)

// A Stable request (protocol.Request.Stable) comes back, the same value,
// every time its line is sent again: a converging engine re-sends its
// resources on every pass. Building its Resource (munging, defaults, the
// title, the type's Validate) is a function of the request and of what is
// fixed for the process (the type's declaration, the global noop), so the
// engine keeps the built values in the request's Memo and copies them
// into the next Resource instead of building again. What depends on the
// system is not part of the build: the provider's Resolve (names resolved
// to ids, a source's metadata), its Get (the current state) and the
// provider's selection run afresh for every request.
//
// Values are kept only when a copy is cheap and safe: scalars are shared
// (nothing can change them), lists of scalars and Cloners are copied for
// each request (a provider's Resolve may change its own resource's
// values). A resource holding anything else, or built from an attribute
// declared Volatile (one whose validation reads the system), is built
// afresh every time.

// Cloner is a munged value that is not a scalar (file's content): kept in
// a Stable request's memo, it is cloned for every request built from it,
// so that what one request's provider works out in it never reaches the
// next.
type Cloner interface {
	Clone() any
}

// built is a Stable request's validated resource, kept in its Memo.
type built struct {
	e *Engine // the engine that built it: another (tests) builds its own
	// skip: the request is not kept (see keep); it is built each time.
	skip     bool
	t        *Type
	ix       *typeIndex
	title    string
	noop     bool
	logLevel slog.Level
	ignored  []string
	vals     []any
	flags    []uint8
	// deep lists the slots whose values are copied for each request.
	deep []int
	ref  string
}

// memoBuild returns the Resource for req built into reuse: from req's
// Memo when the request is Stable and this engine kept it there, else
// built afresh (and kept, when Stable).
func (e *Engine) memoBuild(t *Type, reuse *Resource, req *protocol.Request) (*Resource, error) {
	if !req.Stable {
		return t.buildResource(reuse, req.Title, req.Params, e.env.Options.Noop, buildApply)
	}
	b, ok := req.Memo.(*built)
	ok = ok && b.e == e && b.t == t
	if ok && !b.skip {
		return b.resource(reuse), nil
	}
	r, err := t.buildResource(reuse, req.Title, req.Params, e.env.Options.Noop, buildApply)
	if err != nil {
		return nil, err // an invalid request is answered afresh each time
	}
	if !ok { // not yet looked at (a request found not to be kept stays so)
		req.Memo = e.keep(r)
	}
	return r, nil
}

// keep copies what building r gave, or says it is not to be kept.
func (e *Engine) keep(r *Resource) *built {
	b := &built{e: e, t: r.Type}
	for s, f := range r.flags {
		if f == 0 {
			continue
		}
		if f&slotGiven != 0 && r.ix.attrs[s].Volatile {
			b.skip = true
			return b
		}
		switch v := r.vals[s].(type) {
		case string, int64, int, float64, bool, nil:
		case []any:
			for _, x := range v {
				switch x.(type) {
				case string, int64, int, float64, bool, nil, Cloner:
				default:
					b.skip = true
					return b
				}
			}
			b.deep = append(b.deep, s)
		case Cloner:
			b.deep = append(b.deep, s)
		default:
			b.skip = true
			return b
		}
	}
	b.ix, b.title, b.noop, b.logLevel = r.ix, r.Title, r.Noop, r.LogLevel
	b.ignored = r.Ignored
	b.vals = append([]any(nil), r.vals...)
	b.flags = append([]uint8(nil), r.flags...)
	for _, s := range b.deep {
		b.vals[s] = copyValue(b.vals[s])
	}
	b.ref = r.Ref()
	return b
}

// resource builds the kept resource into reuse (nil: a new one).
func (b *built) resource(reuse *Resource) *Resource {
	r := reuse
	if r == nil {
		r = &Resource{}
	}
	r.reset(b.t, b.ix, b.title, b.noop)
	copy(r.vals, b.vals)
	copy(r.flags, b.flags)
	for _, s := range b.deep {
		r.vals[s] = copyValue(b.vals[s])
	}
	r.LogLevel = b.logLevel
	r.Ignored = b.ignored
	r.ref = b.ref
	return r
}

// copyValue copies a list (of scalars and Cloners) or clones a Cloner.
func copyValue(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			if c, ok := x.(Cloner); ok {
				x = c.Clone()
			}
			out[i] = x
		}
		return out
	case Cloner:
		return v.Clone()
	}
	return v
}
