package catalog

import (
	"container/heap"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Types finds the declaration of a native type (its autorequires and
// whether it refreshes); applier.Registry is one. Types it does not know
// are applied all the same (the Applier may delegate them) without
// autorequires.
type Types interface {
	Lookup(name string) (*applier.Type, bool)
}

type vkind uint8

const (
	leaf vkind = iota
	admissible
	completed
)

// vertex is a resource to apply, or one of a container's sentinels.
type vertex struct {
	kind vkind
	res  *Resource
	// prio is the catalog position of the resource (of the container for
	// its sentinels); seq breaks ties between a container's two sentinels.
	prio, seq int
	out, in   []*edge
	// path is the containment path: /Stage[main]/Main/File[/x]; elems its
	// elements.
	path  string
	elems []string
	// typ is the native declaration, nil for a delegated type.
	typ *applier.Type
	// parent is the resource's container (nil for the top).
	parent *Resource
}

type edge struct {
	from, to *vertex
	refresh  bool
}

// Graph is a catalog's relationship graph, ready to walk.
type Graph struct {
	Catalog *Catalog
	// order is the walk order.
	order []*vertex
	// leaves are the resources to apply, in catalog order.
	leaves []*vertex
	// byKey finds a resource by reference key, by its namevar and by its
	// aliases (resources of concrete types only).
	byKey map[string]*vertex
	// run is what each resource sees of the run.
	run *run
}

// Len is the number of resources to apply.
func (g *Graph) Len() int { return len(g.leaves) }

// Order returns the references of the resources to apply, in walk order.
func (g *Graph) Order() []string {
	var out []string
	for _, v := range g.order {
		if v.kind == leaf {
			out = append(out, v.res.Ref())
		}
	}
	return out
}

// CycleError is a catalog refused for a dependency cycle.
type CycleError struct {
	// Cycles lists each cycle found, as references (the first repeated at
	// the end).
	Cycles [][]string
}

func (e *CycleError) Error() string {
	var b strings.Builder
	if len(e.Cycles) == 1 {
		b.WriteString("Found 1 dependency cycle:")
	} else {
		fmt.Fprintf(&b, "Found %d dependency cycles:", len(e.Cycles))
	}
	for _, c := range e.Cycles {
		b.WriteString("\n(" + strings.Join(c, " => ") + ")")
	}
	return b.String()
}

// metaparameters a catalog uses for ordering.
var relations = []struct {
	name    string
	forward bool // the resource comes first
	refresh bool
}{
	{"before", true, false},
	{"notify", true, true},
	{"require", false, false},
	{"subscribe", false, true},
}

// Build turns a catalog into its relationship graph. types gives the
// native types' declarations (nil: none known).
func Build(c *Catalog, types Types) (*Graph, error) {
	return BuildAuto(c, types, nil)
}

// AutoEdge is an autorelationship the graph cannot derive from a
// declaration of its own: one a delegated type's Ruby declares, found by
// Puppet (delegate.Fallback.AutoRelations). Source is applied before
// Target; Refresh sends Source's events to Target (autosubscribe,
// autonotify).
type AutoEdge struct {
	Source, Target string
	Refresh        bool
}

// BuildAuto is Build with the delegated types' autorelationships, added
// as Puppet adds every autorelationship: after the written relationships,
// never against one (an edge either way between the two already there
// wins), between a resource and a resource or a container (a class
// required comes whole before). An edge naming a resource the catalog
// does not hold is left out.
func BuildAuto(c *Catalog, types Types, auto []AutoEdge) (*Graph, error) {
	g := &Graph{Catalog: c, byKey: map[string]*vertex{}}
	adm := map[*Resource]*vertex{}
	cmp := map[*Resource]*vertex{}
	all := map[string]*Resource{}
	seq := 0
	newV := func(k vkind, r *Resource) *vertex {
		seq++
		return &vertex{kind: k, res: r, prio: r.index, seq: seq}
	}
	if err := checkFilePaths(c); err != nil {
		return nil, err
	}
	if err := checkSchedules(c); err != nil {
		return nil, err
	}
	for _, r := range c.Resources {
		key := refKey(r.Type, r.Title)
		if _, dup := all[key]; dup {
			return nil, fmt.Errorf("the catalog declares %s twice", r.Ref())
		}
		all[key] = r
		if r.IsContainer() {
			adm[r], cmp[r] = newV(admissible, r), newV(completed, r)
			continue
		}
		// An exported resource is applied as any other, as Puppet's agent
		// does: the server sends only the exports a collector collected.
		if strings.EqualFold(r.Type, "schedule") {
			continue // schedules are the walk's data, not work
		}
		v := newV(leaf, r)
		if types != nil {
			if t, ok := types.Lookup(strings.ToLower(r.Type)); ok {
				v.typ = t
			}
		}
		adm[r], cmp[r] = v, v
		g.leaves = append(g.leaves, v)
		g.byKey[key] = v
	}
	// Names and aliases, after titles (a title wins).
	for _, v := range g.leaves {
		lt := strings.ToLower(v.res.Type)
		for _, n := range namesOf(v) {
			k := refKey(lt, n)
			if _, taken := g.byKey[k]; !taken {
				g.byKey[k] = v
			}
		}
	}
	// An alias another resource of the type already has (its title, or
	// its own alias) is refused, as Puppet's catalog refuses it, instead
	// of the reference finding one of the two.
	for _, v := range g.leaves {
		lt := strings.ToLower(v.res.Type)
		for _, n := range stringsOf(v.res.Params["alias"]) {
			if other := g.byKey[refKey(lt, n)]; other != nil && other != v {
				return nil, fmt.Errorf("Cannot alias %s to %q; resource %s already declared", v.res.Ref(), n, other.res.Ref())
			}
		}
	}
	// Containment.
	parent := map[*Resource]*Resource{}
	children := map[*Resource][]*Resource{}
	for _, e := range c.Edges {
		s, ok := all[refKeyOf(e.Source)]
		if !ok {
			return nil, fmt.Errorf("the catalog's containment edge names %s, which it does not declare", e.Source)
		}
		t, ok := all[refKeyOf(e.Target)]
		if !ok {
			return nil, fmt.Errorf("the catalog's containment edge names %s, which it does not declare", e.Target)
		}
		if _, ok := adm[t]; !ok {
			continue // a schedule
		}
		// A class both included at the top and contained by another class
		// has two containers; its path names the first.
		if _, ok := parent[t]; !ok {
			parent[t] = s
		}
		children[s] = append(children[s], t)
	}
	es := &edges{seen: map[[2]*vertex]*edge{}}
	for _, r := range c.Resources {
		if !r.IsContainer() {
			continue
		}
		kids := children[r]
		if len(kids) == 0 {
			es.add(adm[r], cmp[r], false)
		}
		for _, k := range kids {
			es.add(adm[r], adm[k], true)
			es.add(cmp[k], cmp[r], true)
		}
	}
	// Relationship metaparameters.
	for _, r := range c.Resources {
		if _, ok := adm[r]; !ok {
			continue
		}
		for _, rel := range relations {
			v, ok := r.Params[rel.name]
			if !ok {
				continue
			}
			refs, err := refList(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", r.Ref(), rel.name, err)
			}
			for _, ref := range refs {
				o := g.lookupRef(ref, all)
				if o == nil {
					// Puppet's words, whichever the relationship.
					return nil, fmt.Errorf("Could not retrieve dependency '%s' of %s", ref, r.Ref())
				}
				if _, ok := adm[o]; !ok {
					continue
				}
				if rel.forward {
					es.add(cmp[r], adm[o], rel.refresh)
				} else {
					es.add(cmp[o], adm[r], rel.refresh)
				}
			}
		}
	}
	// Autorequires, between resources only, never against a written edge.
	for _, v := range g.leaves {
		if v.typ == nil {
			continue
		}
		lt := strings.ToLower(v.res.Type)
		for _, a := range v.typ.Auto {
			raw, ok := autoValue(v, a.Attr)
			if !ok {
				continue
			}
			var titles []string
			if a.Titles != nil {
				titles = a.Titles(raw)
			} else {
				titles = stringsOf(raw)
			}
			for _, t := range titles {
				if a.Type == "file" {
					t = cleanPath(t)
				}
				o := g.byKey[refKey(a.Type, t)]
				if o == nil || o == v {
					continue
				}
				from, to := o, v
				if a.Before {
					from, to = v, o
				}
				if !es.has(from, to) && !es.has(to, from) {
					es.add(from, to, false)
				}
				if a.First {
					break
				}
			}
			_ = lt
		}
	}
	for _, a := range auto {
		sr, tr := g.lookupRef(a.Source, all), g.lookupRef(a.Target, all)
		if sr == nil || tr == nil || sr == tr {
			continue
		}
		from, to := cmp[sr], adm[tr]
		if from == nil || to == nil {
			continue
		}
		if es.has(from, to) || es.has(cmp[tr], adm[sr]) {
			continue
		}
		es.add(from, to, a.Refresh)
	}
	// The vertices, each with its containment path.
	var verts []*vertex
	for _, r := range c.Resources {
		a, ok := adm[r]
		if !ok {
			continue
		}
		elems := containment(r, parent)
		p := "/" + strings.Join(elems, "/")
		a.path, a.elems, a.parent = p, elems, parent[r]
		verts = append(verts, a)
		if cm := cmp[r]; cm != a {
			cm.path, cm.elems, cm.parent = p, elems, parent[r]
			verts = append(verts, cm)
		}
	}
	for _, e := range es.list {
		e.from.out = append(e.from.out, e)
		e.to.in = append(e.to.in, e)
	}
	order, err := topoSort(verts)
	if err != nil {
		return nil, err
	}
	g.order = order
	g.run = newRun(g)
	return g, nil
}

type edges struct {
	list []*edge
	seen map[[2]*vertex]*edge
}

// add adds an edge once; a second one between the same vertices only adds
// its refresh.
func (es *edges) add(from, to *vertex, refresh bool) {
	k := [2]*vertex{from, to}
	if e, ok := es.seen[k]; ok {
		e.refresh = e.refresh || refresh
		return
	}
	e := &edge{from: from, to: to, refresh: refresh}
	es.seen[k] = e
	es.list = append(es.list, e)
}

func (es *edges) has(from, to *vertex) bool {
	_, ok := es.seen[[2]*vertex{from, to}]
	return ok
}

// lookupRef finds a reference's resource: by title, or by a concrete
// resource's namevar or alias.
func (g *Graph) lookupRef(ref string, all map[string]*Resource) *Resource {
	k := refKeyOf(ref)
	if r, ok := all[k]; ok {
		return r
	}
	if v, ok := g.byKey[k]; ok {
		return v.res
	}
	typ, title, ok := parseRef(ref)
	if ok && strings.EqualFold(typ, "file") {
		if v, ok := g.byKey[refKey("file", cleanPath(title))]; ok {
			return v.res
		}
	}
	return nil
}

func refKeyOf(ref string) string {
	typ, title, ok := parseRef(ref)
	if !ok {
		return strings.ToLower(ref)
	}
	return refKey(typ, title)
}

// refList reads a relationship metaparameter: a reference or a list of them.
func refList(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		var out []string
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("expected resource references, got %v", e)
			}
			out = append(out, s)
		}
		return out, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("expected resource references, got %v", v)
}

// namesOf lists a resource's other names: its namevar's value and its
// aliases.
func namesOf(v *vertex) []string {
	var out []string
	nv := namevarOf(v)
	if s, ok := v.res.Params[nv].(string); ok && s != v.res.Title {
		out = append(out, s)
	}
	if strings.EqualFold(v.res.Type, "file") {
		p := v.res.Title
		if s, ok := v.res.Params["path"].(string); ok {
			p = s
		}
		if c := cleanPath(p); c != v.res.Title {
			out = append(out, c)
		}
	}
	out = append(out, stringsOf(v.res.Params["alias"])...)
	return out
}

// namevarOf is the name of the resource's namevar ("name" when unknown).
func namevarOf(v *vertex) string {
	if v.typ != nil {
		for _, a := range v.typ.Attrs {
			if a.Behaviour == applier.Namevar {
				return a.Name
			}
		}
	}
	return "name"
}

// autoValue is the value an autorequire reads: the attribute's, or the
// namevar's (the title when not given).
func autoValue(v *vertex, attr string) (any, bool) {
	nv := namevarOf(v)
	if attr == "" {
		attr = nv
	}
	if x, ok := v.res.Params[attr]; ok {
		return x, true
	}
	if attr == nv {
		return v.res.Title, true
	}
	return nil, false
}

func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// cleanPath is a file path as Puppet's file type keys it: cleaned, with
// no trailing slash.
func cleanPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	return path.Clean(p)
}

// checkFilePaths refuses two File resources for one path, as Puppet's
// catalog refuses them: a title cleaned of its trailing slash is the
// title Puppet keys the resource by ("/a/" and "/a" are one, "Duplicate
// declaration: File[/a] is already declared; cannot redeclare"), and a
// path differing from the title is an alias of the resource ("Cannot
// alias File[x3] to ["/a"]; resource ["File", "/a"] already declared").
// Both would otherwise be applied to one file, each undoing the other
// on every run.
func checkFilePaths(c *Catalog) error {
	seen := map[string]*Resource{}
	for _, r := range c.Resources {
		if r.Exported || !strings.EqualFold(r.Type, "file") {
			continue
		}
		title := cleanPath(r.Title)
		if o := seen[title]; o != nil && o != r {
			msg := "Duplicate declaration: File[" + title + "] is already declared"
			if l := errorLocation(o.File, o.Line); l != "" {
				msg += " at " + l
			}
			return fmt.Errorf("%s; cannot redeclare%s", msg, errorLocationWithSpace(r.File, r.Line))
		}
		seen[title] = r
		p, ok := r.Params["path"].(string)
		if !ok {
			continue
		}
		p = cleanPath(p)
		if p == title {
			continue
		}
		if o := seen[p]; o != nil && o != r {
			msg := fmt.Sprintf("Cannot alias %s to [%s]", r.Ref(), strconv.Quote(p))
			if l := errorLocation(r.File, r.Line); l != "" {
				msg += " at " + l
			}
			return fmt.Errorf("%s; resource [\"File\", %s] already declared%s", msg, strconv.Quote(p), errorLocationWithSpace(o.File, o.Line))
		}
		seen[p] = r
	}
	return nil
}

// containment is Puppet's path of a resource: its containers from the
// stage down, classes by their (capitalised) name, then itself.
func containment(r *Resource, parent map[*Resource]*Resource) []string {
	var parts []string
	seen := map[*Resource]bool{}
	for x := r; x != nil && !seen[x]; x = parent[x] {
		seen[x] = true
		parts = append(parts, pathElem(x))
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return parts
}

func pathElem(r *Resource) string {
	if strings.EqualFold(r.Type, "class") {
		return r.Title // capitalised by Parse
	}
	return r.Ref()
}

// vqueue orders ready vertices by catalog position.
type vqueue []*vertex

func (q vqueue) Len() int { return len(q) }
func (q vqueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio < q[j].prio
	}
	return q[i].seq < q[j].seq
}
func (q vqueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *vqueue) Push(x any)   { *q = append(*q, x.(*vertex)) }
func (q *vqueue) Pop() any {
	old := *q
	v := old[len(old)-1]
	*q = old[:len(old)-1]
	return v
}

// topoSort orders the vertices: each after everything it depends on,
// ties in catalog order. A cycle is an error naming it.
func topoSort(verts []*vertex) ([]*vertex, error) {
	deg := make(map[*vertex]int, len(verts))
	q := &vqueue{}
	for _, v := range verts {
		deg[v] = len(v.in)
		if deg[v] == 0 {
			*q = append(*q, v)
		}
	}
	heap.Init(q)
	out := make([]*vertex, 0, len(verts))
	for q.Len() > 0 {
		v := heap.Pop(q).(*vertex)
		out = append(out, v)
		for _, e := range v.out {
			deg[e.to]--
			if deg[e.to] == 0 {
				heap.Push(q, e.to)
			}
		}
	}
	if len(out) == len(verts) {
		return out, nil
	}
	return nil, &CycleError{Cycles: findCycles(verts, deg)}
}

// findCycles names the cycles among the vertices left with dependencies:
// the strongly connected components (Tarjan), each as one cycle through
// it, containers' sentinels written as their container.
func findCycles(verts []*vertex, deg map[*vertex]int) [][]string {
	index := map[*vertex]int{}
	low := map[*vertex]int{}
	on := map[*vertex]bool{}
	var stack []*vertex
	var sccs [][]*vertex
	n := 0
	var strong func(v *vertex)
	strong = func(v *vertex) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for _, e := range v.out {
			w := e.to
			if deg[w] == 0 {
				continue
			}
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []*vertex
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			if len(c) > 1 || selfLoop(v) {
				sccs = append(sccs, c)
			}
		}
	}
	for _, v := range verts {
		if deg[v] > 0 {
			if _, seen := index[v]; !seen {
				strong(v)
			}
		}
	}
	var out [][]string
	for _, c := range sccs {
		out = append(out, cyclePath(c))
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], " ") < strings.Join(out[j], " ") })
	return out
}

// selfLoop: v has an edge to itself.
func selfLoop(v *vertex) bool {
	for _, e := range v.out {
		if e.to == v {
			return true
		}
	}
	return false
}

// cyclePath finds one cycle within a strongly connected component (a
// breadth-first search from its first resource back to itself) and names
// its steps.
func cyclePath(c []*vertex) []string {
	in := map[*vertex]bool{}
	for _, v := range c {
		in[v] = true
	}
	start := c[0]
	for _, v := range c {
		if v.kind == leaf && (start.kind != leaf || v.prio < start.prio) {
			start = v
		}
	}
	prev := map[*vertex]*vertex{}
	queue := []*vertex{start}
	var last *vertex
search:
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range v.out {
			if !in[e.to] {
				continue
			}
			if e.to == start {
				last = v
				break search
			}
			if _, seen := prev[e.to]; !seen {
				prev[e.to] = v
				queue = append(queue, e.to)
			}
		}
	}
	var steps []*vertex
	for v := last; v != nil && v != start; v = prev[v] {
		steps = append(steps, v)
	}
	steps = append(steps, start)
	for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
		steps[i], steps[j] = steps[j], steps[i]
	}
	if len(c) == 1 {
		// A resource depending on itself: a cycle of one, which Puppet
		// writes (Notify[a] => Notify[a]).
		return []string{start.res.Ref(), start.res.Ref()}
	}
	var names []string
	for _, v := range append(steps, start) {
		n := v.res.Ref()
		if len(names) > 0 && names[len(names)-1] == n {
			continue
		}
		names = append(names, n)
	}
	return names
}
