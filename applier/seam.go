package applier

import "github.com/pippet/pippet/applier/internal/hook"

// What the engine (applier/engine) may do to a Resource that a type may
// not, handed over through applier/internal/hook: see that package.
func init() {
	// Build validates a request into reuse (nil: a new Resource); read
	// builds it for find or search (nothing required, an empty title
	// leaves the namevar unset).
	hook.Build = func(t *Type, reuse *Resource, title string, params map[string]any, noop, read bool) (*Resource, error) {
		mode := buildApply
		if read {
			mode = buildRead
		}
		return t.buildResource(reuse, title, params, noop, mode)
	}
	// Layout is the type's slots as the engine walks them.
	hook.LayoutOf = func(t *Type) (*hook.Layout[*Attr], error) {
		ix, err := t.index()
		if err != nil {
			return nil, err
		}
		return &ix.layout, nil
	}
	// View is what the transaction walks: the layout of r's type and r's
	// values and flags by slot.
	hook.View = func(r *Resource) (*hook.Layout[*Attr], []any, []uint8) {
		return &r.ix.layout, r.vals, r.flags
	}
	// Slots are a Resource's values and flags by slot, StateSlots a
	// State's.
	hook.Slots = func(r *Resource) ([]any, []uint8) { return r.vals, r.flags }
	hook.StateSlots = func(s *State) ([]any, []uint8) { return s.vals, s.flags }
	// NewState is a State of scope's type over the given slot storage,
	// for one instance a search lists.
	hook.NewState = func(scope *Resource, vals []any, flags []uint8) State {
		return State{ix: scope.ix, ref: scope.ix.display, vals: vals, flags: flags}
	}
	// Freeze settles r's desired values (setting one panics from now on)
	// and returns the emptied State its provider's Get reports into, and
	// that State's values by slot.
	hook.Freeze = func(r *Resource) (*State, []any) {
		r.frozen = true
		r.cur.reset(r.ix, r.Ref())
		return &r.cur, r.cur.vals
	}
	// Choose records the provider chosen for r, and whether r is read
	// for find or search (see Resource.ReadAll).
	hook.Choose = func(r *Resource, spec *ProviderSpec, readAll bool) {
		r.spec, r.readAll = spec, readAll
	}
	// Named names the resource in err when err is a ParamError that does
	// not name one yet.
	hook.Named = named
	// Keep and Restore: see memo.go.
	hook.Keep = keep
	hook.Restore = restore
	// SuggestType is " (did you mean 'x'?)" for an unknown type's name,
	// or "".
	hook.SuggestType = func(g *Registry, name string) string { return g.suggestType(name) }
	// Munge munges one value as the attribute's declaration says.
	hook.Munge = mungeAttr
}
