package file_line_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

func apply(t *testing.T, params map[string]any) protocol.Result {
	t.Helper()
	return testEngine().Apply(context.Background(), &protocol.Request{Type: "file_line", Title: "t", Params: params})
}

// TestThroughSymlink: the file a link points to is rewritten (the module
// writes through it), the link stays, and the file keeps its mode.
func TestThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	link := filepath.Join(dir, "link")
	require.NoError(t, os.WriteFile(real, []byte("a\n"), 0o600))
	require.NoError(t, os.Symlink("real", link))
	res := apply(t, map[string]any{"path": link, "line": "b"})
	assert.True(t, res.Changed, "%+v", res)
	b, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, "a\nb\n", string(b))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
	fi, err = os.Stat(real)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode kept")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temp file left")
}

// TestRegexpRefused: what RE2 cannot compile is refused when the request
// is validated, naming the parameter.
func TestRegexpRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("a\n"), 0o644))
	for _, attr := range []string{"match", "after"} {
		res := apply(t, map[string]any{"path": p, "line": "b", attr: "^a(?=b)"})
		assert.True(t, res.Error, "%+v", res)
		assert.Contains(t, res.Exception, "Parameter "+attr+" failed on File_line[t]: invalid regular expression '^a(?=b)'")
	}
	for _, expr := range []string{`a\Z`, `\h+`} {
		res := apply(t, map[string]any{"path": p, "line": "b", "match": expr})
		assert.True(t, res.Error, "%s: %+v", expr, res)
	}
}

// TestNoopMissingFile: in noop a missing file is an empty one (the
// module's rescue), not a failure.
func TestNoopMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing")
	res := apply(t, map[string]any{"path": p, "line": "x", "noop": true})
	assert.False(t, res.Failed, "%+v", res)
	require.Len(t, res.Events, 1)
	assert.Equal(t, protocol.StatusNoop, res.Events[0].Status)
	_, err := os.Stat(p)
	assert.True(t, os.IsNotExist(err))
}

// TestEncoding: a line that is not UTF-8 fails a match as Ruby's does,
// unless the file's encoding is given; the bytes are kept.
func TestEncoding(t *testing.T) {
	p := filepath.Join(t.TempDir(), "latin1")
	before := "caf\xe9=1\nx\n"
	require.NoError(t, os.WriteFile(p, []byte(before), 0o644))
	res := apply(t, map[string]any{"path": p, "line": "k=v", "match": "^k="})
	assert.True(t, res.Failed, "%+v", res)
	assert.Contains(t, res.Exception, "invalid byte sequence in UTF-8")
	b, _ := os.ReadFile(p)
	assert.Equal(t, before, string(b), "untouched")

	res = apply(t, map[string]any{"path": p, "line": "café=2", "match": "^caf.=", "encoding": "ISO-8859-1"})
	assert.True(t, res.Changed, "%+v", res)
	b, _ = os.ReadFile(p)
	assert.Equal(t, "café=2\nx\n", string(b), "the matched line replaced, the others' bytes kept")

	res = apply(t, map[string]any{"path": p, "line": "x", "encoding": "shift_jis"})
	assert.True(t, res.Error, "%+v", res)
	assert.Contains(t, res.Exception, "unsupported encoding 'shift_jis'")
}
