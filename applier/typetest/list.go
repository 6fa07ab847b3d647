package typetest

import (
	"context"
	"testing"

	"github.com/pippet/pippet/applier"
)

// Listed is one instance a provider's Instances reported: its title and
// the state it filled.
type Listed struct {
	Title string
	State *applier.State
}

// List calls spec's Instances directly, its scope a resource of typ built
// from params (its title, which no listing reads, a placeholder), and
// returns what it listed, in order. It tests a listing without the
// engine's search (no provider selection, no filter).
func List(t testing.TB, typ *applier.Type, spec *applier.ProviderSpec, params map[string]any) []Listed {
	t.Helper()
	list, err := TryList(typ, spec, params)
	if err != nil {
		t.Fatalf("listing %s instances: %v", typ.Name, err)
	}
	return list
}

// TryList is List returning the listing's error.
func TryList(typ *applier.Type, spec *applier.ProviderSpec, params map[string]any) ([]Listed, error) {
	if params == nil {
		params = map[string]any{}
	}
	params["provider"] = spec.Name
	scope, err := typ.NewResource("listing-scope", params, false)
	if err != nil {
		return nil, err
	}
	var list []Listed
	add := func(title string) *applier.State {
		st := applier.NewState(scope)
		list = append(list, Listed{Title: title, State: st})
		return st
	}
	err = spec.Instances(context.Background(), &applier.Env{}, scope, add)
	return list, err
}

// FindListed returns the listed instance titled title, nil when none.
func FindListed(list []Listed, title string) *applier.State {
	for _, l := range list {
		if l.Title == title {
			return l.State
		}
	}
	return nil
}
