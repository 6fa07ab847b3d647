// Package anchor declares stdlib's anchor type: a resource that does
// nothing, kept so that a module's classes can be contained between two
// of them (the pattern that predates Puppet's contain()).
//
// Like the module's, it has one attribute, its name, no properties and no
// providers: every evaluation is unchanged; a refresh does nothing (as the
// module's) and is an event, as Puppet records it. Its place in the graph is the caller's
// business: the receiver orders nothing itself.
package anchor

import (
	"context"

	"github.com/pippet/pippet/applier"
)

// Type is the anchor type's declaration.
var Type = &applier.Type{
	Name: "anchor",
	Doc: "A resource that does nothing, intended as an anchor in a composite class " +
		"(stdlib's anchor; Puppet's contain() replaces it). It is never changed; a " +
		"refresh does nothing but is reported, as Puppet reports it.",
	// A refresh is delivered (and reported), though it does nothing.
	Refreshes: true,
	Attrs: []*applier.Attr{{
		Name:      "name",
		Behaviour: applier.Namevar,
		Kind:      applier.KindString,
		Doc:       "The name of the anchor resource. Defaults to the title.",
	}},
	Providers: []*applier.ProviderSpec{{
		Doc: "Does nothing.",
		New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) { return nothing{}, nil },
	}},
}

func init() { applier.Register(Type) }

// nothing is the anchor's implementation: no state to read, nothing to set.
type nothing struct{}

// Get reads nothing: the type has no properties.
func (nothing) Get(ctx context.Context, cur *applier.State) error { return nil }

// Set is never called: there is no property to sync.
func (nothing) Set(ctx context.Context, c *applier.Change) error { return nil }

// Refresh does nothing, as the module's refresh does; the refresh is still
// an event, as Puppet's transaction records it (Triggered 'refresh' from 1
// event) whatever the type's refresh did.
func (nothing) Refresh(ctx context.Context) (string, error) { return "nothing to do", nil }
