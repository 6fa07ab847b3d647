// Package hook is the one door between package applier, what a type's
// author uses, and applier/engine, which drives the types. The engine
// needs a few things of a Resource that no type may touch (its slots, the
// freeze before Get, the provider chosen for it); rather than export them
// from applier, where every type would see them, applier hands them over
// here when it is initialised, as functions the engine converts back to
// their types once (applier/engine/seam.go). Nothing else imports this
// package.
//
// The functions are held as values of type any because their signatures
// name applier's types, which this package cannot import (applier imports
// it). Layout is generic over the attribute type for the same reason.
package hook

// The functions package applier installs (see applier/seam.go for each
// one's signature and meaning).
var (
	Build       any
	LayoutOf    any
	View        any
	Slots       any
	StateSlots  any
	NewState    any
	Freeze      any
	Choose      any
	Named       any
	Keep        any
	Restore     any
	SuggestType any
	Munge       any
)

// Layout is a type's attributes as the engine walks them: by slot (an
// attribute's position in the declaration; the implicit `provider`
// parameter takes the slot after the last one).
type Layout[A any] struct {
	// Attrs by slot, the implicit provider parameter last.
	Attrs []A
	// Ensure, Namevar and Provider are slots, -1 when the type has none
	// (Provider: the implicit parameter).
	Ensure, Namevar, Provider int
	// Props are the slots of the properties other than ensure, in
	// declaration order (the order they are synced in).
	Props []int
	// Report are the slots find reports after ensure, by name: every
	// slot but ensure's and the namevar's.
	Report []int
	// Defaults are each attribute's munged static default, by name.
	Defaults map[string]any
	// Display is the type's name as references print it (Exec).
	Display string
}

// Slot flags of a Resource's or a State's values.
const (
	Set   uint8 = 1 << iota // the slot holds a value
	Given                   // the request gave it (a Resource's)
)
