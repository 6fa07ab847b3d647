package catalog

import (
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// run is the applier.Run of a catalog: every resource of concrete type it
// holds, found by title, namevar or alias, and the resources its types
// generate before the walk (a concat_file's File), as Puppet's generate
// puts them in the catalog before any recursion or purge looks.
type run struct {
	g    *Graph
	once sync.Once
	byT  map[string][]applier.RunResource
	all  []applier.RunResource
	// generated are the keys (refKey) of the resources the catalog's
	// resources generate (applier.Type.ReportAs).
	generated map[string]bool
}

func newRun(g *Graph) *run {
	r := &run{g: g, generated: map[string]bool{}}
	for _, v := range g.leaves {
		if v.typ == nil || v.typ.ReportAs == nil {
			continue
		}
		typ, title, ok := parseRef(v.typ.ReportAs(v.res.Title, v.res.Params))
		if !ok {
			continue
		}
		r.generated[refKey(typ, title)] = true
		if strings.EqualFold(typ, "file") {
			r.generated[refKey(typ, cleanPath(title))] = true
		}
	}
	return r
}

// Managed reports whether the catalog holds typ[title], or one of its
// resources generates it.
func (r *run) Managed(typ, title string) bool {
	typ = strings.ToLower(typ)
	k := refKey(typ, title)
	if _, ok := r.g.byKey[k]; ok || r.generated[k] {
		return true
	}
	if typ == "file" {
		k = refKey(typ, cleanPath(title))
		_, ok := r.g.byKey[k]
		return ok || r.generated[k]
	}
	return false
}

// Resources returns the catalog's resources of type typ in catalog order.
func (r *run) Resources(typ string) []applier.RunResource {
	r.once.Do(func() {
		r.byT = map[string][]applier.RunResource{}
		for _, v := range r.g.leaves {
			t := strings.ToLower(v.res.Type)
			rr := applier.RunResource{Type: t, Title: v.res.Title, Params: v.res.Params}
			r.byT[t] = append(r.byT[t], rr)
			r.all = append(r.all, rr)
		}
	})
	return r.byT[strings.ToLower(typ)]
}

// All returns the catalog's resources in catalog order (its classes and
// defined types are not resources of the run).
func (r *run) All() []applier.RunResource {
	r.Resources("")
	return r.all
}

// Run returns what each resource of the graph sees of its run.
func (g *Graph) Run() applier.Run { return g.run }

// takeChanges sets on the catalog's resources the parameters a delegated
// resource's type set on them in Puppet's catalog
// (protocol.Result.RunChanges: a datacat_collector sets its File's
// content), so that each is applied, and seen by the run, with them, as
// Puppet applies the resource its catalog holds. A resource already
// applied keeps what it was applied with.
func (g *Graph) takeChanges(changes []protocol.RunResource) {
	for _, c := range changes {
		typ := strings.ToLower(c.Type)
		v := g.byKey[refKey(typ, c.Title)]
		if v == nil && typ == "file" {
			v = g.byKey[refKey(typ, cleanPath(c.Title))]
		}
		if v == nil || v.kind != leaf || v.res.Params == nil {
			continue
		}
		for k, x := range c.Params {
			if f, ok := x.(float64); ok && f == float64(int64(f)) {
				x = int64(f) // as the catalog's integers are
			}
			v.res.Params[k] = x
		}
	}
}
