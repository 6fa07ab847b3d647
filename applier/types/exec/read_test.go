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
		res := e.Apply(context.Background(), &protocol.Request{Op: protocol.OpFind, Type: "exec", Title: "/bin/touch " + filepath.Join(dir, "title"), Params: params})
		require.False(t, res.Error || res.Failed, "%v: %+v", params, res)
		v, ok := res.State.Get("returns")
		assert.True(t, ok, "%v", params)
		assert.Equal(t, "notrun", v, "%v", params)
	}
	res := e.Apply(context.Background(), &protocol.Request{Op: protocol.OpSearch, Type: "exec", Params: map[string]any{"unless": "/bin/touch " + filepath.Join(dir, "search")}})
	assert.True(t, res.Error, "exec cannot list")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a read verb ran a command")
}

// TestReturnsFloatRefused: Puppet runs a command with `returns: 0.0` and
// then fails it ("returned 0 instead of one of [0.0]": an exit code is
// never a float), so the receiver refuses a float in returns up front,
// as it refuses 1.5, and runs nothing (README, compatibility).
func TestReturnsFloatRefused(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t)
	for _, returns := range []any{0.0, []any{int64(1), 0.0}, 2.5} {
		res := apply(t, e, "/bin/touch "+filepath.Join(dir, "ran"), map[string]any{"returns": returns})
		assert.True(t, res.Error, "%v: %+v", returns, res)
		assert.Contains(t, res.Exception, "Parameter returns failed on Exec[", "%v", returns)
		assert.Contains(t, res.Exception, "got a float", "%v", returns)
	}
	assert.NoFileExists(t, filepath.Join(dir, "ran"))
	res := apply(t, e, "/bin/true", map[string]any{"returns": []any{"0", int64(2)}})
	assert.False(t, res.Failed || res.Error, "%+v", res)
}
