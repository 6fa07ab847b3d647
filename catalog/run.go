package catalog

import (
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
)

// run is the applier.Run of a catalog: every resource of concrete type it
// holds, found by title, namevar or alias.
type run struct {
	g    *Graph
	once sync.Once
	byT  map[string][]applier.RunResource
}

func newRun(g *Graph) *run { return &run{g: g} }

// Managed reports whether the catalog holds typ[title].
func (r *run) Managed(typ, title string) bool {
	typ = strings.ToLower(typ)
	if _, ok := r.g.byKey[refKey(typ, title)]; ok {
		return true
	}
	if typ == "file" {
		_, ok := r.g.byKey[refKey(typ, cleanPath(title))]
		return ok
	}
	return false
}

// Resources returns the catalog's resources of type typ in catalog order.
func (r *run) Resources(typ string) []applier.RunResource {
	r.once.Do(func() {
		r.byT = map[string][]applier.RunResource{}
		for _, v := range r.g.leaves {
			t := strings.ToLower(v.res.Type)
			r.byT[t] = append(r.byT[t], applier.RunResource{Type: t, Title: v.res.Title, Params: v.res.Params})
		}
	})
	return r.byT[strings.ToLower(typ)]
}

// Run returns what each resource of the graph sees of its run.
func (g *Graph) Run() applier.Run { return g.run }
