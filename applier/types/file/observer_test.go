package file_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/protocol"
)

// A recursion reports each entry's change to the tree observer, worded as
// Puppet's generated child resources' events, in the order made.
func TestTreeObserverReportsEachEntry(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "dst")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "a"), []byte("a1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "b"), []byte("b\n"), 0o640))
	e := newEngine(t)
	var got []string
	ctx := file.WithTreeObserver(context.Background(), func(c file.TreeChange) {
		s := fmt.Sprintf("%s %s: %s", c.Path, c.Property, c.Message)
		if c.Err != nil {
			s += " ERR " + c.Err.Error()
		}
		got = append(got, s)
	})
	params := fmt.Sprintf(`{"source": %q, "recurse": "true", "purge": true, "force": true, "backup": false, "source_permissions": "use"}`, src)
	run := func() protocol.Result {
		var p map[string]any
		require.NoError(t, json.Unmarshal([]byte(params), &p))
		return e.Apply(ctx, &protocol.Request{Type: "file", Title: dst, Params: p})
	}
	r := run()
	require.False(t, r.Failed, r.Exception)
	assert.Equal(t, []string{
		dst + "/a ensure: defined content as '{sha256}" + sha256hex("a1\n") + "'",
		dst + "/sub ensure: created",
		dst + "/sub/b ensure: defined content as '{sha256}" + sha256hex("b\n") + "'",
	}, got)

	got = nil
	require.NoError(t, os.WriteFile(filepath.Join(src, "a"), []byte("a2\n"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(src, "sub", "b"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "stale"), []byte("x\n"), 0o644))
	r = run()
	require.False(t, r.Failed, r.Exception)
	assert.Equal(t, []string{
		dst + "/a content: content changed '{sha256}" + sha256hex("a1\n") + "' to '{sha256}" + sha256hex("a2\n") + "'",
		dst + "/sub/b mode: mode changed '0640' to '0600'",
		dst + "/stale ensure: removed",
	}, got)

	got = nil
	r = run()
	assert.False(t, r.Changed)
	assert.Empty(t, got, "nothing to report when nothing changes")
}
