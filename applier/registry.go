package applier

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Registry maps type names (case-insensitive) to Types.
type Registry struct {
	mu    sync.RWMutex
	types map[string]*Type
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{types: map[string]*Type{}} }

// Default is the registry types add themselves to from their init functions.
var Default = NewRegistry()

// Register adds t to the Default registry; it panics on a duplicate name.
func Register(t *Type) { Default.Add(t) }

// Add adds t; it panics on a duplicate name or a declaration that does not
// Check, both programming errors.
func (g *Registry) Add(t *Type) {
	if err := t.Check(); err != nil {
		panic("applier: " + err.Error())
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	k := strings.ToLower(t.Name)
	if _, dup := g.types[k]; dup {
		panic(fmt.Sprintf("applier: type %q registered twice", t.Name))
	}
	g.types[k] = t
}

// Lookup finds a type by name, case-insensitively.
func (g *Registry) Lookup(name string) (*Type, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	t, ok := g.types[strings.ToLower(name)]
	return t, ok
}

// Types lists the registered types sorted by name.
func (g *Registry) Types() []*Type {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*Type, 0, len(g.types))
	for _, t := range g.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
