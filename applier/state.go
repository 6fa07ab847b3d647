package applier

import "fmt"

// State is what a provider's Get reports: the current value of each
// property of its resource that it could read, in the same slots as the
// Resource's values. A property left unset is unknown and compared as
// absent. The engine owns a State and reuses its storage from request to
// request, so a Get allocates nothing for it; a provider must not keep it
// after Get returns.
type State struct {
	ix    *typeIndex
	ref   string
	vals  []any
	flags []uint8
}

// reset empties s for a resource of the type indexed by ix.
func (s *State) reset(ix *typeIndex, ref string) {
	n := ix.slots()
	if cap(s.vals) < n {
		s.vals, s.flags = make([]any, n), make([]uint8, n)
	} else {
		s.vals, s.flags = s.vals[:n], s.flags[:n]
		clear(s.vals)
		clear(s.flags)
	}
	s.ix, s.ref = ix, ref
}

// NewState returns an empty State for a resource of r's type, for tests
// and for callers driving a provider without the engine.
func NewState(r *Resource) *State {
	s := &State{}
	if r.ix != nil {
		s.reset(r.ix, r.Ref())
	}
	return s
}

// Set records the current value of a declared attribute. Setting one the
// type does not declare is a programming error and panics (the engine
// turns it into an error answer).
func (s *State) Set(name string, v any) {
	i := -1
	if s.ix != nil {
		i = s.ix.names.find(name)
	}
	if i < 0 {
		panic(fmt.Sprintf("%s: provider reports %q, which the type does not declare", s.ref, name))
	}
	s.vals[i] = v
	s.flags[i] = slotSet
}

// Get returns the recorded value and whether there is one.
func (s *State) Get(name string) (any, bool) {
	if s.ix == nil {
		return nil, false
	}
	i := s.ix.names.find(name)
	if i < 0 || s.flags[i]&slotSet == 0 {
		return nil, false
	}
	return s.vals[i], true
}

// Value returns the recorded value, nil when there is none.
func (s *State) Value(name string) any { v, _ := s.Get(name); return v }

// at returns slot i's value (nil when unset).
func (s *State) at(i int) any { return s.vals[i] }

// Reporter is a current value a provider reports in a form its
// attribute's InSync compares cheaply (a handle on a file's mode or
// content): Report gives the plain value find and search print, as
// `puppet resource` prints it.
type Reporter interface {
	Report() any
}
