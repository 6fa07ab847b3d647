package applier

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/pippet/pippet/protocol"
)

// The read verbs: find, search and describe (Puppet's indirector find and
// search, `puppet resource` being their face, and `puppet describe`).
// They read through the providers apply uses and change nothing.

// Reporter is a current value a provider reports in a form its
// attribute's InSync compares cheaply (a handle on a file's mode or
// content): Report gives the plain value find and search print, as
// `puppet resource` prints it.
type Reporter interface {
	Report() any
}

// verb answers a request whose op is not apply.
func (e *Engine) verb(ctx context.Context, req *protocol.Request) protocol.Result {
	switch req.Op {
	case protocol.OpFind:
		return e.Find(ctx, req)
	case protocol.OpSearch:
		return e.Search(ctx, req)
	case protocol.OpDescribe:
		return e.Describe(req)
	}
	return protocol.ErrorResult(protocol.Ref(req.Type, req.Title), fmt.Sprintf("unknown op %q (expected apply, find, search or describe)", req.Op.String()))
}

// recoverVerb turns a panic in a type or provider into an error answer.
func (e *Engine) recoverVerb(req *protocol.Request, res *protocol.Result) {
	if p := recover(); p != nil {
		ref := protocol.Ref(req.Type, req.Title)
		if t, ok := e.reg.Lookup(req.Type); ok {
			ref = protocol.Ref(t.Name, req.Title)
		}
		e.env.Logger().Error("panic while reading "+ref, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		*res = protocol.ErrorResult(ref, fmt.Sprintf("%s: internal error: %v", ref, p))
	}
}

// Find reads one resource's current state through the provider apply
// would choose, changing nothing: the resource is built from the title and
// the optional params as apply builds it (nothing is required beyond the
// title), the provider's Resolve (if any) and Get run, nothing is synced.
// The answer's State lists every property Get reported, ensure first, the
// rest sorted by name, the provider last among them in its place; a
// resource that does not exist has ensure absent and nothing else. Params
// is the same as a YAML flow mapping, read-only attributes left out, that
// applied leaves the resource unchanged.
func (e *Engine) Find(ctx context.Context, req *protocol.Request) (res protocol.Result) {
	defer e.recoverVerb(req, &res)
	t, ok := e.reg.Lookup(req.Type)
	if !ok {
		return protocol.ErrorResult(protocol.Ref(req.Type, req.Title), fmt.Sprintf("unknown resource type '%s'%s", req.Type, e.reg.suggestType(req.Type)))
	}
	if req.Title == "" {
		return protocol.ErrorResult(protocol.RefType(t.Name), fmt.Sprintf("find of %s needs a title", protocol.RefType(t.Name)))
	}
	r, p, fail := e.bindRead(t, req.Title, req.Params)
	if fail != nil {
		return *fail
	}
	ref := r.Ref()
	res = protocol.Result{Resource: ref}
	if rs, ok := p.(Resolver); ok {
		if err := rs.Resolve(ctx); err != nil {
			res.Failed = true
			res.Exception = fmt.Sprintf("Could not evaluate %s: %v", ref, err)
			return res
		}
	}
	r.frozen = true
	cur := &r.cur
	cur.reset(r.ix, ref)
	if err := p.Get(ctx, cur); err != nil {
		res.Failed = true
		res.Exception = fmt.Sprintf("Could not evaluate %s: %v", ref, err)
		return res
	}
	res.State = stateOf(cur, r.spec, nil)
	res.Params = ParamsYAML(r.Type, withScope(r.Type, res.State, req.Params))
	return res
}

// withScope adds to a find's state, for its params only, what the request
// gave that the state does not show, so that the round trip reaches the
// same resource: the namevar where it differs from the title (a package
// named apart from its title), parameters, and for a resource that is
// absent every given attribute (the user or target an absent key was
// looked for in; with ensure absent apply syncs nothing else). A present
// resource's properties come from its state alone.
func withScope(t *Type, st protocol.State, given map[string]any) protocol.State {
	if len(given) == 0 {
		return st
	}
	ix, err := t.index()
	if err != nil {
		return st
	}
	absent := false
	if v, ok := st.Get("ensure"); ok && v == "absent" {
		absent = true
	}
	var extra []string
	for k := range given {
		a := ix.attr(k)
		if a == nil || k != a.Name {
			continue
		}
		if _, shown := st.Get(k); shown {
			continue
		}
		if a.Behaviour == Property && !absent {
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

// bindRead builds a resource (or a search's scope, title "") for reading
// and binds its provider; fail is the error answer when it can't.
func (e *Engine) bindRead(t *Type, title string, params map[string]any) (*Resource, Provider, *protocol.Result) {
	errRef := protocol.Ref(t.Name, title)
	if title == "" {
		errRef = protocol.RefType(t.Name)
	}
	failed := func(msg string) (*Resource, Provider, *protocol.Result) {
		res := protocol.ErrorResult(errRef, msg)
		return nil, nil, &res
	}
	r, err := t.buildResource(nil, title, params, true, buildRead)
	if err != nil {
		return failed(err.Error())
	}
	r.readAll = true
	if title != "" {
		errRef = r.Ref()
	}
	spec, err := e.SelectProvider(r)
	if err != nil {
		return failed(err.Error())
	}
	r.spec = spec
	if title == "" {
		return r, nil, nil
	}
	p, err := spec.New(r, e.env)
	if err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			if pe.Resource == "" {
				pe.Resource = errRef
			}
			return failed(err.Error())
		}
		return failed(fmt.Sprintf("%s: provider %s: %v", errRef, spec.Name, err))
	}
	return r, p, nil
}

// Search lists every instance of a type that the provider apply would
// choose can see, changing nothing. The request's params build the
// search's scope, validated as an apply's (title empty, nothing
// required): a provider that lists per user or per target reads them from
// it. The properties among the params given also filter: an instance is
// listed when each such value is in sync with the instance's (as apply
// would compare them). Instances are sorted by title, as `puppet
// resource` lists them. A type whose provider cannot list answers an error
// naming the type and the provider.
func (e *Engine) Search(ctx context.Context, req *protocol.Request) (res protocol.Result) {
	defer e.recoverVerb(req, &res)
	t, ok := e.reg.Lookup(req.Type)
	if !ok {
		return protocol.ErrorResult(protocol.RefType(req.Type), fmt.Sprintf("unknown resource type '%s'%s", req.Type, e.reg.suggestType(req.Type)))
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
	scope, _, fail := e.bindRead(t, "", req.Params)
	if fail != nil {
		return *fail
	}
	spec := scope.spec
	if spec.Instances == nil {
		name := "type " + t.Name
		if spec.Name != "" {
			name = "provider " + spec.Name + " of type " + t.Name
		}
		return protocol.ErrorResult(typeRef, fmt.Sprintf("cannot search %s: %s cannot list instances", typeRef, name))
	}
	ix := scope.ix
	// The filter: the properties the search gave, by slot.
	var filter []int
	for s, a := range ix.attrs {
		if scope.flags[s]&slotGiven != 0 && (a.Behaviour == Property || a.Behaviour == ReadOnly) {
			filter = append(filter, s)
		}
	}
	type found struct {
		title string
		cur   *State
	}
	var list []found
	// The instances' States and their slots come from slabs, a few
	// allocations per hundred instances rather than three each.
	n := ix.slots()
	var states []State
	var vals []any
	var flags []uint8
	add := func(title string) *State {
		if len(states) == cap(states) {
			const chunk = 128
			states = make([]State, 0, chunk)
			vals = make([]any, chunk*n)
			flags = make([]uint8, chunk*n)
		}
		// The type's reference alone: a provider's mistake (an undeclared
		// name) panics naming the type, and the engine answers an error.
		states = append(states, State{ix: ix, ref: ix.display, vals: vals[:n:n], flags: flags[:n:n]})
		vals, flags = vals[n:], flags[n:]
		st := &states[len(states)-1]
		list = append(list, found{title, st})
		return st
	}
	scope.frozen = true
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
		for _, s := range filter {
			is := f.cur.vals[s]
			if r, ok := is.(Reporter); ok {
				is = r.Report()
			}
			if f.cur.flags[s]&slotSet == 0 || !insync(ix.attrs[s], is, scope.vals[s]) {
				continue next
			}
		}
		st := stateOf(f.cur, spec, &slab)
		res.Instances = append(res.Instances, protocol.Instance{Title: f.title, State: st})
	}
	return res
}

// stateOf is a Get's report as find answers it: ensure first, then every
// other reported attribute but the namevar, and the provider, by name.
func stateOf(cur *State, spec *ProviderSpec, slab *protocol.State) protocol.State {
	ix := cur.ix
	var out protocol.State
	if slab == nil {
		out = make(protocol.State, 0, 8)
	} else {
		// Taken from the caller's slab: a state is at most every slot and
		// the provider, and the three-index slice keeps appends within it.
		max := len(ix.attrs) + 1
		if len(*slab) < max {
			*slab = make(protocol.State, 64*max)
		}
		out = (*slab)[:0:max]
		defer func() { *slab = (*slab)[len(out):] }()
	}
	absent := false
	if s := ix.ensureSlot; s >= 0 && cur.flags[s]&slotSet != 0 {
		v := reportValue(ix.attrs[s], cur.vals[s])
		out = append(out, protocol.Property{Name: "ensure", Value: v})
		absent = v == "absent"
	}
	for _, s := range ix.reportOrder {
		a := ix.attrs[s]
		if a == ix.providerAttr {
			if spec != nil && spec.Name != "" {
				out = append(out, protocol.Property{Name: "provider", Value: spec.Name})
			}
			continue
		}
		if absent || cur.flags[s]&slotSet == 0 {
			continue
		}
		v := reportValue(a, cur.vals[s])
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
func reportValue(a *Attr, v any) any {
	if r, ok := v.(Reporter); ok {
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
func ParamsYAML(t *Type, st protocol.State) string {
	ix, err := t.index()
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
	if len(st) > 0 && st[0].Name == "ensure" && ix.ensure != nil {
		if _, err := mungeAttr(ix.ensure, st[0].Value); err != nil {
			noProps = true
		}
	}
	for _, p := range st {
		a := ix.attr(p.Name)
		if a == nil || a.Behaviour == ReadOnly || a.StateOnly || noProps && a.Behaviour == Property {
			continue
		}
		if _, err := mungeAttr(a, p.Value); err != nil {
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
		b = AppendYAML(b, p.Value)
	}
	return string(append(b, '}'))
}

func appendYAMLKey(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return AppendYAML(b, k)
		}
	}
	if k == "" {
		return append(b, "''"...)
	}
	return append(b, k...)
}

// AppendYAML appends v as a YAML flow value the receiver's params reader
// reads back as v: strings quoted (single quotes, or double quotes with
// escapes when they hold control characters), integers, floats and
// booleans plain, lists and maps in flow style.
func AppendYAML(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, '~')
	case string:
		for i := 0; i < len(x); i++ {
			if x[i] < 0x20 || x[i] == 0x7f {
				return protocol.AppendString(b, x) // JSON's escapes are YAML's
			}
		}
		b = append(b, '\'')
		b = append(b, strings.ReplaceAll(x, "'", "''")...)
		return append(b, '\'')
	case bool:
		return strconv.AppendBool(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		switch {
		case math.IsNaN(x):
			return append(b, ".nan"...)
		case math.IsInf(x, 1):
			return append(b, ".inf"...)
		case math.IsInf(x, -1):
			return append(b, "-.inf"...)
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return append(b, s...)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendYAML(b, e)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendYAML(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendYAML(b, k)
			b = append(b, ": "...)
			b = AppendYAML(b, x[k])
		}
		return append(b, '}')
	}
	return AppendYAML(b, fmt.Sprint(v))
}

// Describe answers a type's declaration as JSON (see DescribeJSON).
func (e *Engine) Describe(req *protocol.Request) (res protocol.Result) {
	defer e.recoverVerb(req, &res)
	t, ok := e.reg.Lookup(req.Type)
	if !ok {
		return protocol.ErrorResult(protocol.RefType(req.Type), fmt.Sprintf("unknown resource type '%s'%s", req.Type, e.reg.suggestType(req.Type)))
	}
	b, err := e.DescribeJSON(t)
	if err != nil {
		return protocol.ErrorResult(protocol.RefType(t.Name), err.Error())
	}
	return protocol.Result{Resource: protocol.RefType(t.Name), Declaration: b}
}
