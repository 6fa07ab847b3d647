package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/catalog"
)

// TestExportedResourceIsApplied: a resource the catalog holds with
// "exported": true (one the node exported and its own collector
// collected: the server drops the exports nobody collected) is applied,
// as Puppet's agent and `puppet apply --catalog` apply it (recorded in
// testdata/exported-catalog.puppet.txt; issue 38 item 2).
func TestExportedResourceIsApplied(t *testing.T) {
	data, err := os.ReadFile("testdata/exported-catalog.json")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/exported-catalog.puppet.txt")
	require.NoError(t, err)
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	data = []byte(strings.ReplaceAll(string(data), "/tmp/pdbexp/f", f))
	rep, out := applied(t, data, catalog.Options{})
	b, err := os.ReadFile(f)
	require.NoError(t, err, "the exported file was not applied:\n%s", out)
	assert.Equal(t, "exported\n", string(b))
	st := status(t, rep, "File["+f+"]")
	require.Len(t, st.Events, 1)
	line := "/Stage[main]/Main/File[" + f + "]/ensure: " + st.Events[0].Message
	assert.Contains(t, strings.ReplaceAll(string(want), "/tmp/pdbexp/f", f), "Notice: "+line+"\n")
	assert.Equal(t, "changed", rep.Status)
}
