package catalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/catalog"
)

// TestCorrectiveChangeOfADefaultedProperty: a file the catalog gives
// content but no ensure, created by one run and removed before the next,
// is created again as a corrective change, as Puppet's agent reports it
// (a file and a host with their ensure defaulted, recreated: `created
// (corrective)` in the events PuppetDB holds of a `puppet agent` node,
// integration/puppetdb): the store keeps what the run wanted of a
// property the catalog leaves to its default.
func TestCorrectiveChangeOfADefaultedProperty(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "motd")
	o := catalog.Options{TransactionStore: filepath.Join(dir, "state", "transactionstore.json")}
	data := build(t, res{typ: "File", title: f, params: map[string]any{"content": "managed\n"}})

	rep, _ := applied(t, data, o)
	s := status(t, rep, "File["+f+"]")
	require.Len(t, s.Events, 1)
	assert.Equal(t, "ensure", s.Events[0].Property)
	assert.False(t, s.Events[0].CorrectiveChange, "created the first time: intentional")

	// A run with nothing to do keeps what the first one wanted.
	rep, _ = applied(t, data, o)
	require.Empty(t, status(t, rep, "File["+f+"]").Events)

	require.NoError(t, os.Remove(f))
	rep, _ = applied(t, data, o)
	s = status(t, rep, "File["+f+"]")
	require.Len(t, s.Events, 1)
	assert.Equal(t, "ensure", s.Events[0].Property)
	assert.True(t, s.Events[0].CorrectiveChange, "removed, created again: corrective")
	assert.Regexp(t, ` \(corrective\)$`, s.Events[0].Message)
}
