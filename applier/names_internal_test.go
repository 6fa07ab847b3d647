package applier

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNameTable(t *testing.T) {
	// Names sharing length and first, middle and last bytes collide in the
	// hash and must still be told apart by probing.
	cases := map[string][]string{
		"empty":      nil,
		"one":        {"ensure"},
		"file-like":  {"path", "ensure", "content", "source", "target", "owner", "group", "mode", "links", "replace", "force", "backup", "recurse", "recurselimit", "provider"},
		"collisions": {"aXa", "aYa", "aZa", "bXa", "aXb", "a", "b", "ab", "ba"},
	}
	var many []string
	for i := range 200 {
		many = append(many, fmt.Sprintf("attr_%d", i))
	}
	cases["200 names"] = many
	for name, names := range cases {
		t.Run(name, func(t *testing.T) {
			tab := newNameTable(names)
			for slot, n := range names {
				assert.Equal(t, slot, tab.find(n), "slot of %q", n)
			}
			for _, n := range []string{"", "nope", "aXc", "ensur", "ensuree", "attr_200", "PATH"} {
				assert.Equal(t, -1, tab.find(n), "%q is not declared", n)
			}
			assert.LessOrEqual(t, 4*len(names), len(tab.keys), "table at most a quarter full")
		})
	}
	var zero nameTable
	assert.Equal(t, -1, zero.find("x"), "the zero table finds nothing")
}
