package applier

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pippet/pippet/protocol"
)

// Run is what one resource may see of the run it is applied in: the other
// resources of its catalog (receiver apply), or the set of resources a
// controller declared for its run over the pipe. A type whose meaning
// depends on its siblings reads it from the context its provider is given:
// a file's purge leaves alone what the run manages, a concat_file gathers
// its concat_fragments.
//
// A request applied alone has no Run: RunFrom returns nil, and such a type
// behaves as Puppet's does with a catalog of one resource.
type Run interface {
	// Managed reports whether the run manages the resource typ[title]: typ
	// is the type's name in lower case ("file"), title its title or its
	// namevar's value (for a file, the path without a trailing slash).
	Managed(typ, title string) bool
	// Resources returns the run's resources of type typ, in catalog order.
	// The caller must not change them.
	Resources(typ string) []RunResource
}

// RunLister is a Run that lists every resource it holds, in catalog (or
// declared) order: the catalog a delegated resource sees in Puppet, where
// any type may look at any resource of its catalog (datacat_collector
// finds its File there). A catalog's Run and a RunSet are.
type RunLister interface {
	Run
	All() []RunResource
}

// RunResource is one resource of a Run as the catalog or the controller
// gave it: parameters are not validated or munged by its type. Type is the
// type's name in lower case, Title the resource's title, Params its
// parameters as decoded values (string, int64, float64, bool, nil, []any,
// map[string]any). It is the protocol's own (a declaration's resources
// are kept as they are decoded).
type RunResource = protocol.RunResource

type runKey struct{}

// WithRun returns a context carrying run to the providers of the
// resources applied with it.
func WithRun(ctx context.Context, run Run) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunFrom returns the run ctx carries, or nil when the resource is applied
// alone.
func RunFrom(ctx context.Context) Run {
	run, _ := ctx.Value(runKey{}).(Run)
	return run
}

// RunSet is the Run of a set of resources a controller declared for its
// run over the pipe (protocol.OpDeclare): each resource is found by its
// title, its namevar's value and its aliases, as in a catalog, and a
// file also by its path cleaned (no trailing slash, no "..").
type RunSet struct {
	all    []RunResource
	byType map[string][]RunResource
	names  map[runName]struct{} // every resource's title, namevar and aliases
	// generated are the resources the set's resources generate
	// (Type.ReportAs: a concat_file's File), managed by the run too.
	generated map[runName]struct{}
}

type runName struct{ typ, name string }

// RunError is NewRunSet's refusal of one declared resource: Type and
// Title name it.
type RunError struct {
	Type, Title string
	Msg         string
}

func (e *RunError) Error() string { return protocol.Ref(e.Type, e.Title) + ": " + e.Msg }

// NewRunSet makes the Run of resources, kept as they are (the caller must
// not change them afterwards). types gives the namevars of the types it
// knows (nil: none; a type it does not know is found by its "name"
// parameter, as a catalog finds it). Two resources that are one (the
// same type and title, or a title, namevar or alias another resource of
// the type has) are refused, as Puppet's catalog refuses them: the error
// is a *RunError naming the second.
func NewRunSet(types *Registry, resources []RunResource) (*RunSet, error) {
	rs := &RunSet{byType: map[string][]RunResource{}, names: make(map[runName]struct{}, len(resources)), generated: map[runName]struct{}{}}
	owner := make(map[runName]string, len(resources))
	namevars := map[string]string{}
	for _, r := range resources {
		typ := strings.ToLower(r.Type)
		r.Type = typ
		if types != nil {
			if t, found := types.Lookup(typ); found && t.ReportAs != nil {
				rs.addGenerated(t.ReportAs(r.Title, r.Params))
			}
		}
		nv, ok := namevars[typ]
		if !ok {
			nv = "name"
			if types != nil {
				if t, found := types.Lookup(typ); found {
					for _, a := range t.Attrs {
						if a.Behaviour == Namevar {
							nv = a.Name
							break
						}
					}
				}
			}
			if typ == "file" {
				nv = "path" // whatever types knows
			}
			namevars[typ] = nv
		}
		names := []string{r.Title}
		if v, ok := r.Params[nv].(string); ok && v != r.Title {
			names = append(names, v)
		}
		if typ == "file" {
			for _, n := range names[:len(names):len(names)] {
				if c := cleanRunPath(n); c != n {
					names = append(names, c)
				}
			}
		}
		switch a := r.Params["alias"].(type) {
		case string:
			names = append(names, a)
		case []any:
			for _, e := range a {
				if s, ok := e.(string); ok {
					names = append(names, s)
				}
			}
		}
		ref := protocol.Ref(typ, r.Title)
		for i, n := range names {
			k := runName{typ, n}
			if slices.Contains(names[:i], n) {
				continue // its own name twice (an alias that is its title)
			}
			if other, taken := owner[k]; taken {
				if other == ref {
					return nil, &RunError{Type: typ, Title: r.Title, Msg: "declared twice"}
				}
				return nil, &RunError{Type: typ, Title: r.Title, Msg: fmt.Sprintf("declared twice: %q names %s too", n, other)}
			}
			owner[k] = ref
			rs.names[k] = struct{}{}
		}
		rs.byType[typ] = append(rs.byType[typ], r)
		rs.all = append(rs.all, r)
	}
	return rs, nil
}

// addGenerated records a generated resource's reference (Type[title]).
func (rs *RunSet) addGenerated(ref string) {
	i := strings.IndexByte(ref, '[')
	if i <= 0 || !strings.HasSuffix(ref, "]") {
		return
	}
	typ, title := strings.ToLower(ref[:i]), ref[i+1:len(ref)-1]
	rs.generated[runName{typ, title}] = struct{}{}
	if typ == "file" {
		rs.generated[runName{typ, cleanRunPath(title)}] = struct{}{}
	}
}

// Managed reports whether the set holds typ[title], by title, namevar or
// alias (a file also by its path cleaned), or one of its resources
// generates it (a concat_file's File).
func (rs *RunSet) Managed(typ, title string) bool {
	typ = strings.ToLower(typ)
	has := func(k runName) bool {
		_, ok := rs.names[k]
		_, gen := rs.generated[k]
		return ok || gen
	}
	if has(runName{typ, title}) {
		return true
	}
	if typ == "file" {
		if c := cleanRunPath(title); c != title {
			return has(runName{typ, c})
		}
	}
	return false
}

// Resources returns the set's resources of type typ, in the order
// declared.
func (rs *RunSet) Resources(typ string) []RunResource {
	return rs.byType[strings.ToLower(typ)]
}

// All returns the set's resources in the order declared.
func (rs *RunSet) All() []RunResource { return rs.all }

// Len is how many resources the set holds.
func (rs *RunSet) Len() int {
	n := 0
	for _, l := range rs.byType {
		n += len(l)
	}
	return n
}

// cleanRunPath is a file path as Puppet's file type keys it: cleaned,
// with no trailing slash (a relative one as it is).
func cleanRunPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	return path.Clean(p)
}
