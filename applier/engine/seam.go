package engine

import (
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/internal/hook"
)

// What package applier hands the engine and no type (see
// applier/internal/hook and applier/seam.go), converted once to its
// types. applier is initialised before this package, so the hooks are set.
var (
	build = hook.Build.(func(t *applier.Type, reuse *applier.Resource, title string, params map[string]any, noop, read bool) (*applier.Resource, error))
	// layoutOf is the type's slots as the transaction and find walk them.
	layoutOf   = hook.LayoutOf.(func(t *applier.Type) (*hook.Layout[*applier.Attr], error))
	view       = hook.View.(func(r *applier.Resource) (*hook.Layout[*applier.Attr], []any, []uint8))
	slots      = hook.Slots.(func(r *applier.Resource) ([]any, []uint8))
	stateSlots = hook.StateSlots.(func(s *applier.State) ([]any, []uint8))
	newState   = hook.NewState.(func(scope *applier.Resource, vals []any, flags []uint8) applier.State)
	freeze     = hook.Freeze.(func(r *applier.Resource) (*applier.State, []any))
	choose     = hook.Choose.(func(r *applier.Resource, spec *applier.ProviderSpec, readAll bool))
	named      = hook.Named.(func(r *applier.Resource, err error) (error, bool))
	keep       = hook.Keep.(func(r *applier.Resource) any)
	restore    = hook.Restore.(func(k any, t *applier.Type, reuse *applier.Resource) *applier.Resource)
	suggest    = hook.SuggestType.(func(g *applier.Registry, name string) string)
	munge      = hook.Munge.(func(a *applier.Attr, v any) (any, error))
)

// Slot flags (hook.Set, hook.Given).
const (
	slotSet   = hook.Set
	slotGiven = hook.Given
)
