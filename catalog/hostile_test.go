package catalog_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/catalog"
)

// TestSelfDependencyIsACycle: a resource ordered before (or subscribing
// to) itself is a cycle of one, named as Puppet names it: "Found 1
// dependency cycle: (Notify[a] => Notify[a])", not "Found 0 dependency
// cycles".
func TestSelfDependencyIsACycle(t *testing.T) {
	for _, meta := range []string{"before", "require", "notify", "subscribe"} {
		data := build(t, res{typ: "Notify", title: "a", params: map[string]any{meta: "Notify[a]"}})
		c, err := catalog.Parse(bytes.NewReader(data))
		require.NoError(t, err)
		_, err = catalog.Build(c, applier.Default)
		var ce *catalog.CycleError
		require.ErrorAs(t, err, &ce, meta)
		assert.Contains(t, err.Error(), "Found 1 dependency cycle:\n(Notify[a] => Notify[a])", meta)
	}
}

// TestAliasTakingAnotherTitleIsRefused: an alias that names a resource
// the catalog declares is refused, as Puppet's catalog refuses it
// ("Cannot alias Notify[a] to [\"b\"]; resource [\"Notify\", \"b\"] already
// declared"), instead of applying both.
func TestAliasTakingAnotherTitleIsRefused(t *testing.T) {
	data := build(t,
		res{typ: "Notify", title: "a", params: map[string]any{"alias": "b"}},
		res{typ: "Notify", title: "b"},
	)
	c, err := catalog.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	_, err = catalog.Build(c, applier.Default)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Notify[b]")
	assert.Contains(t, err.Error(), "alias")
}
