package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/internal/hook"
	"github.com/pippet/pippet/protocol"
)

// The read verbs: find, search and describe (Puppet's indirector find and
// search, `puppet resource` being their face, and `puppet describe`).
// They read through the providers apply uses and change nothing.

// find reads one resource's current state through the provider apply
// would choose, changing nothing: the resource is built from the title and
// the optional params as apply builds it (nothing is required beyond the
// title), the provider's Resolve (if any) and Get run, nothing is synced.
// The answer's State lists every property Get reported, ensure first, the
// rest sorted by name, the provider last among them in its place; a
// resource that does not exist has ensure absent and nothing else. Params
// is the same as a YAML flow mapping, read-only attributes left out, that
// applied leaves the resource unchanged.
func (e *Engine) find(ctx context.Context, req *protocol.Request) protocol.Result {
	t, fail := e.lookup(req, false)
	if fail != nil {
		return *fail
	}
	if req.Title == "" {
		return protocol.ErrorResult(protocol.RefType(t.Name), fmt.Sprintf("find of %s needs a title", protocol.RefType(t.Name)))
	}
	r, p, fail := e.prepare(t, req.Title, req.Params, true, true, nil)
	if fail != nil {
		return *fail
	}
	res := protocol.Result{Resource: r.Ref()}
	cur, _, err := read(ctx, r, p)
	if err != nil {
		couldNotEvaluate(&res, err)
		return res
	}
	ly, err := layoutOf(t)
	if err != nil {
		return protocol.ErrorResult(res.Resource, err.Error())
	}
	res.State = stateOf(ly, cur, r.Provider(), nil)
	res.Params = ParamsYAML(t, withScope(ly, res.State, req.Params))
	return res
}

// withScope adds to a find's state, for its params only, what the request
// gave that the state does not show, so that the round trip reaches the
// same resource: the namevar where it differs from the title (a package
// named apart from its title), parameters, and for a resource that is
// absent every given attribute (the user or target an absent key was
// looked for in; with ensure absent apply syncs nothing else). A present
// resource's properties come from its state alone.
func withScope(ly *hook.Layout[*applier.Attr], st protocol.State, given map[string]any) protocol.State {
	if len(given) == 0 {
		return st
	}
	absent := false
	if v, ok := st.Get("ensure"); ok && v == "absent" {
		absent = true
	}
	var extra []string
	for k := range given {
		a := attrNamed(ly, k)
		if a == nil {
			continue
		}
		if _, shown := st.Get(k); shown {
			continue
		}
		if a.Behaviour == applier.Property && !absent {
			continue
		}
		extra = append(extra, k)
	}
	if len(extra) == 0 {
		return st
	}
	slices.Sort(extra)
	out := make(protocol.State, 0, len(st)+len(extra))
	out = append(out, st...)
	for _, k := range extra {
		out = append(out, protocol.Property{Name: k, Value: given[k]})
	}
	return out
}

// search lists every instance of a type that the provider apply would
// choose can see, changing nothing. The request's params build the
// search's scope, validated as an apply's (title empty, nothing
// required): a provider that lists per user or per target reads them from
// it. The properties among the params given also filter: an instance is
// listed when each such value is in sync with the instance's (as apply
// would compare them). Instances are sorted by title, as `puppet
// resource` lists them. A type whose provider cannot list answers an error
// naming the type and the provider.
func (e *Engine) search(ctx context.Context, req *protocol.Request) (res protocol.Result) {
	t, fail := e.lookup(req, true)
	if fail != nil {
		return *fail
	}
	typeRef := protocol.RefType(t.Name)
	if req.Title != "" {
		return protocol.ErrorResult(typeRef, fmt.Sprintf("search of %s takes no title (found %q); use find for one resource", typeRef, req.Title))
	}
	canList := false
	for _, p := range t.Providers {
		canList = canList || p.Instances != nil
	}
	if !canList {
		return protocol.ErrorResult(typeRef, fmt.Sprintf("cannot search %s: type %s cannot list instances", typeRef, t.Name))
	}
	scope, _, fail := e.prepare(t, "", req.Params, true, false, nil)
	if fail != nil {
		return *fail
	}
	spec := scope.Provider()
	if spec.Instances == nil {
		name := "type " + t.Name
		if spec.Name != "" {
			name = "provider " + spec.Name + " of type " + t.Name
		}
		return protocol.ErrorResult(typeRef, fmt.Sprintf("cannot search %s: %s cannot list instances", typeRef, name))
	}
	ly, err := layoutOf(t)
	if err != nil {
		return protocol.ErrorResult(typeRef, err.Error())
	}
	scopeVals, scopeFlags := slots(scope)
	// The filter: the properties the search gave, by slot.
	var filter []int
	for s, a := range ly.Attrs {
		if scopeFlags[s]&slotGiven != 0 && (a.Behaviour == applier.Property || a.Behaviour == applier.ReadOnly) {
			filter = append(filter, s)
		}
	}
	type found struct {
		title string
		cur   *applier.State
	}
	var list []found
	// The instances' States and their slots come from slabs, a few
	// allocations per hundred instances rather than three each.
	n := len(ly.Attrs)
	var states []applier.State
	var vals []any
	var flags []uint8
	add := func(title string) *applier.State {
		if len(states) == cap(states) {
			const chunk = 128
			states = make([]applier.State, 0, chunk)
			vals = make([]any, chunk*n)
			flags = make([]uint8, chunk*n)
		}
		// The type's reference alone: a provider's mistake (an undeclared
		// name) panics naming the type, and the engine answers an error.
		states = append(states, newState(scope, vals[:n:n], flags[:n:n]))
		vals, flags = vals[n:], flags[n:]
		st := &states[len(states)-1]
		list = append(list, found{title, st})
		return st
	}
	freeze(scope)
	if err := spec.Instances(ctx, e.env, scope, add); err != nil {
		res = protocol.ErrorResult(typeRef, fmt.Sprintf("Could not list %s instances: %v", typeRef, err))
		return res
	}
	// In order of title (bytes), as `puppet resource` lists them.
	slices.SortStableFunc(list, func(a, b found) int { return strings.Compare(a.title, b.title) })
	res = protocol.Result{Resource: typeRef, Instances: make([]protocol.Instance, 0, len(list))}
	// The instances' states share one slab too.
	var slab protocol.State
next:
	for _, f := range list {
		curVals, curFlags := stateSlots(f.cur)
		for _, s := range filter {
			is := curVals[s]
			if r, ok := is.(applier.Reporter); ok {
				is = r.Report()
			}
			if curFlags[s]&slotSet == 0 || !insync(ly.Attrs[s], is, scopeVals[s]) {
				continue next
			}
		}
		st := stateOf(ly, f.cur, spec, &slab)
		res.Instances = append(res.Instances, protocol.Instance{Title: f.title, State: st})
	}
	return res
}

// stateOf is a Get's report as find answers it: ensure first, then every
// other reported attribute but the namevar, and the provider, by name.
func stateOf(ly *hook.Layout[*applier.Attr], cur *applier.State, spec *applier.ProviderSpec, slab *protocol.State) protocol.State {
	vals, flags := stateSlots(cur)
	var out protocol.State
	if slab == nil {
		out = make(protocol.State, 0, 8)
	} else {
		// Taken from the caller's slab: a state is at most every slot and
		// the provider, and the three-index slice keeps appends within it.
		max := len(ly.Attrs) + 1
		if len(*slab) < max {
			*slab = make(protocol.State, 64*max)
		}
		out = (*slab)[:0:max]
		defer func() { *slab = (*slab)[len(out):] }()
	}
	absent := false
	if s := ly.Ensure; s >= 0 && flags[s]&slotSet != 0 {
		v := reportValue(ly.Attrs[s], vals[s])
		out = append(out, protocol.Property{Name: "ensure", Value: v})
		absent = v == "absent"
	}
	for _, s := range ly.Report {
		a := ly.Attrs[s]
		if s == ly.Provider {
			if spec != nil && spec.Name != "" {
				out = append(out, protocol.Property{Name: "provider", Value: spec.Name})
			}
			continue
		}
		if absent || flags[s]&slotSet == 0 {
			continue
		}
		v := reportValue(a, vals[s])
		if skipReported(v) {
			continue
		}
		out = append(out, protocol.Property{Name: a.Name, Value: v})
	}
	return out
}

// skipReported: values `puppet resource` leaves out: an unset one
// (absent), an empty string, an empty list.
func skipReported(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "absent" || x == ""
	case []any:
		return len(x) == 0
	}
	return false
}

// reportValue is a current value as find prints it: a Reporter's plain
// value; strings, numbers, booleans, lists and maps as they are; anything
// else through the attribute's Format, or as a string.
func reportValue(a *applier.Attr, v any) any {
	if r, ok := v.(applier.Reporter); ok {
		v = r.Report()
	}
	switch x := v.(type) {
	case nil, string, bool, int64, float64, map[string]any:
		return v
	case int:
		return int64(x)
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = reportValue(a, e)
		}
		return out
	}
	if a.Format != nil {
		return a.Format(v)
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprint(v)
}

// ParamsYAML renders a find's state as the params of an apply request that
// leaves the resource as it is: a YAML flow mapping of every settable
// attribute in st (read-only ones, those the type marks StateOnly and
// values the attribute would refuse left out; after an ensure apply
// cannot ask for, such as a mount's ghost, every property), strings quoted so that the receiver reads them back as they are.
func ParamsYAML(t *applier.Type, st protocol.State) string {
	ly, err := layoutOf(t)
	if err != nil {
		return "{}"
	}
	b := make([]byte, 0, 128)
	b = append(b, '{')
	n := 0
	// An ensure apply cannot ask for (a mount's ghost: mounted, in no
	// table) is a state no request reproduces: the params then manage no
	// property at all, which leaves the resource as it is.
	noProps := false
	if len(st) > 0 && st[0].Name == "ensure" && ly.Ensure >= 0 {
		if _, err := munge(ly.Attrs[ly.Ensure], st[0].Value); err != nil {
			noProps = true
		}
	}
	for _, p := range st {
		a := attrNamed(ly, p.Name)
		if a == nil || a.Behaviour == applier.ReadOnly || a.StateOnly || noProps && a.Behaviour == applier.Property {
			continue
		}
		if _, err := munge(a, p.Value); err != nil {
			// A value apply would refuse: leaving it out leaves it
			// unmanaged.
			continue
		}
		if n > 0 {
			b = append(b, ", "...)
		}
		n++
		b = appendYAMLKey(b, p.Name)
		b = append(b, ": "...)
		b = protocol.AppendYAML(b, p.Value)
	}
	return string(append(b, '}'))
}

func appendYAMLKey(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return protocol.AppendYAML(b, k)
		}
	}
	if k == "" {
		return append(b, "''"...)
	}
	return append(b, k...)
}

// describe answers a type's declaration as JSON (see DescribeJSON).
func (e *Engine) describe(req *protocol.Request) protocol.Result {
	t, fail := e.lookup(req, true)
	if fail != nil {
		return *fail
	}
	b, err := e.DescribeJSON(t)
	if err != nil {
		return protocol.ErrorResult(protocol.RefType(t.Name), err.Error())
	}
	return protocol.Result{Resource: protocol.RefType(t.Name), Declaration: b}
}

// DescribeJSON is t's declaration as one JSON object with what this
// engine says of its providers here (see applier.DescribeJSON): the data
// `receiver describe` prints and the describe verb answers.
func (e *Engine) DescribeJSON(t *applier.Type) ([]byte, error) {
	var chosen *applier.ProviderSpec
	if len(t.Providers) > 0 && t.Providers[0].Name == "" {
		chosen = t.Providers[0]
	} else {
		for _, p := range e.preference(t) {
			if dynamicConfine(&p.Confine, e.env) == "" {
				chosen = p
				break
			}
		}
	}
	return applier.DescribeJSON(t, e.Suitable, chosen, chosen != nil && chosen.Name != "" && e.info(chosen).score > 0)
}

// attrNamed is the attribute called name, the implicit provider
// parameter included; nil when the type declares none.
func attrNamed(ly *hook.Layout[*applier.Attr], name string) *applier.Attr {
	for _, a := range ly.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}
