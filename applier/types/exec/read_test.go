package exec

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

// TestExecFindRunsNothing: a find of an exec runs neither the command nor
// its checks (unless, onlyif), whatever its params, and answers what
// `puppet resource exec TITLE` prints: returns notrun (Puppet's find
// takes no params, so it never has checks to run). Nothing is run on a
// search either: exec cannot list.
func TestExecFindRunsNothing(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t)
	for _, params := range []map[string]any{
		{"command": "/bin/touch " + filepath.Join(dir, "command")},
		{"unless": "/bin/touch " + filepath.Join(dir, "unless")},
		{"onlyif": []any{"/bin/touch " + filepath.Join(dir, "onlyif")}},
		{"unless": "/bin/true", "creates": "/"},
		{"refreshonly": true, "onlyif": "/bin/touch " + filepath.Join(dir, "refreshonly")},
	} {
		res := e.Find(context.Background(), &protocol.Request{Op: protocol.OpFind, Type: "exec", Title: "/bin/touch " + filepath.Join(dir, "title"), Params: params})
		require.False(t, res.Error || res.Failed, "%v: %+v", params, res)
		v, ok := res.State.Get("returns")
		assert.True(t, ok, "%v", params)
		assert.Equal(t, "notrun", v, "%v", params)
	}
	res := e.Search(context.Background(), &protocol.Request{Op: protocol.OpSearch, Type: "exec", Params: map[string]any{"unless": "/bin/touch " + filepath.Join(dir, "search")}})
	assert.True(t, res.Error, "exec cannot list")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a read verb ran a command")
}
