package applier

import (
	"fmt"
	"sort"
	"strconv"
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

// Cache is a process-wide map for providers' safe-to-cache lookups.
type Cache struct{ m sync.Map }

// Get returns the cached value for key.
func (c *Cache) Get(key string) (any, bool) { return c.m.Load(key) }

// Put stores v under key.
func (c *Cache) Put(key string, v any) { c.m.Store(key, v) }

// Drop forgets key (call it when a change invalidates what was cached).
func (c *Cache) Drop(key string) { c.m.Delete(key) }

// DropPrefix forgets every key starting with prefix.
func (c *Cache) DropPrefix(prefix string) {
	c.m.Range(func(k, _ any) bool {
		if s, ok := k.(string); ok && strings.HasPrefix(s, prefix) {
			c.m.Delete(k)
		}
		return true
	})
}

// Clear forgets everything: for a change that may invalidate anything
// cached, such as an arbitrary command having run.
func (c *Cache) Clear() { c.m.Clear() }

// FormatValue renders a munged value the way event messages and describe
// print it: strings as they are, arrays as ['a', 'b'].
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = "'" + e + "'"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = "'" + FormatValue(e) + "'"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}
