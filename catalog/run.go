package catalog

import (
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
)

// run is the applier.Run of a catalog: every resource of concrete type it
// holds, found by title, namevar or alias, and the resources its types
// generate before the walk (a concat_file's File), as Puppet's generate
// puts them in the catalog before any recursion or purge looks.
type run struct {
	g    *Graph
	once sync.Once
	byT  map[string][]applier.RunResource
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
			r.byT[t] = append(r.byT[t], applier.RunResource{Type: t, Title: v.res.Title, Params: v.res.Params})
		}
	})
	return r.byT[strings.ToLower(typ)]
}

// Run returns what each resource of the graph sees of its run.
func (g *Graph) Run() applier.Run { return g.run }
