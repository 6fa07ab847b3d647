package applier

import (
	"log/slog"
)

// A request sent again byte for byte (a converging engine re-sends its
// resources on every pass) builds the same Resource every time: building
// (munging, defaults, the title, the type's Validate) is a function of the
// request and of what is fixed for the process (the type's declaration,
// the global noop). The engine's session (applier/engine) keeps what a
// build gave, by keep, and makes the next Resource from it, by restore,
// instead of building again. What depends on the system is not part of
// the build: the provider's Resolve (names resolved to ids, a source's
// metadata), its Get (the current state) and the provider's selection run
// afresh for every request.
//
// Values are kept only when a copy is cheap and safe: scalars are shared
// (nothing can change them), lists of scalars and Cloners are copied for
// each request (a provider's Resolve may change its own resource's
// values). A resource holding anything else, or built from an attribute
// declared Volatile (one whose validation reads the system), is not kept.

// Cloner is a munged value that is not a scalar (file's content): kept
// for a request sent again, it is cloned for every request built from it,
// so that what one request's provider works out in it never reaches the
// next.
type Cloner interface {
	Clone() any
}

// built is what building a resource gave, kept.
type built struct {
	t         *Type
	ix        *typeIndex
	title     string
	noop      bool
	logLevel  slog.Level
	ignored   []string
	sensitive []string
	vals      []any
	flags     []uint8
	// deep lists the slots whose values are copied for each request.
	deep []int
	ref  string
}

// keep copies what building r gave: a *built, or nil when r is not to
// be kept.
func keep(r *Resource) any {
	b := &built{t: r.Type}
	for s, f := range r.flags {
		if f == 0 {
			continue
		}
		if f&slotGiven != 0 && r.ix.attrs[s].Volatile {
			return nil
		}
		switch v := r.vals[s].(type) {
		case string, int64, int, float64, bool, nil:
		case []any:
			for _, x := range v {
				switch x.(type) {
				case string, int64, int, float64, bool, nil, Cloner:
				default:
					return nil
				}
			}
			b.deep = append(b.deep, s)
		case Cloner:
			b.deep = append(b.deep, s)
		default:
			return nil
		}
	}
	b.ix, b.title, b.noop, b.logLevel = r.ix, r.Title, r.Noop, r.LogLevel
	b.ignored = r.Ignored
	b.sensitive = r.Sensitive
	b.vals = append([]any(nil), r.vals...)
	b.flags = append([]uint8(nil), r.flags...)
	for _, s := range b.deep {
		b.vals[s] = copyValue(b.vals[s])
	}
	b.ref = r.Ref()
	return b
}

// restore makes the kept resource k (from keep) into reuse (nil: a new
// one); it returns nil when k is not a kept resource of type t.
func restore(k any, t *Type, reuse *Resource) *Resource {
	b, ok := k.(*built)
	if !ok || b.t != t {
		return nil
	}
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
	r.Sensitive = b.sensitive
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
