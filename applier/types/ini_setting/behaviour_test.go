package ini_setting_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

// TestValueRedacted: a value never shows, in messages or in the answer's
// events, nor in noop.
func TestValueRedacted(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.ini")
	require.NoError(t, os.WriteFile(p, []byte("[s]\npassword = old-secret\n"), 0o600))
	for _, noop := range []bool{true, false} {
		res := testEngine().Apply(context.Background(), &protocol.Request{Type: "ini_setting", Title: "pw",
			Params: map[string]any{"path": p, "section": "s", "setting": "password", "value": "new-secret", "noop": noop}})
		b, err := json.Marshal(res)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "secret", "noop %v: %s", noop, b)
		assert.Contains(t, string(b), "[redacted sensitive information]")
	}
	b, _ := os.ReadFile(p)
	assert.Equal(t, "[s]\npassword = new-secret\n", string(b))
	fi, _ := os.Stat(p)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode kept")
}

// TestDuplicateSections: a file with a section twice keeps both; the
// setting is read and written in the last.
func TestDuplicateSections(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dup.ini")
	require.NoError(t, os.WriteFile(p, []byte("[s]\na = 1\n[t]\nb = 2\n[s]\nc = 3\n"), 0o644))
	res := testEngine().Apply(context.Background(), &protocol.Request{Type: "ini_setting", Title: "x",
		Params: map[string]any{"path": p, "section": "s", "setting": "d", "value": "4"}})
	assert.True(t, res.Changed, "%+v", res)
	b, _ := os.ReadFile(p)
	assert.Equal(t, "[s]\na = 1\n[t]\nb = 2\n[s]\nc = 3\nd = 4\n", string(b))
}

// TestThroughSymlink: the file a link points to is rewritten, the link stays.
func TestThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real.ini"), []byte("[s]\na = 1\n"), 0o640))
	require.NoError(t, os.Symlink("real.ini", filepath.Join(dir, "link.ini")))
	res := testEngine().Apply(context.Background(), &protocol.Request{Type: "ini_setting", Title: "x",
		Params: map[string]any{"path": filepath.Join(dir, "link.ini"), "section": "s", "setting": "a", "value": "2"}})
	assert.True(t, res.Changed, "%+v", res)
	b, _ := os.ReadFile(filepath.Join(dir, "real.ini"))
	assert.Equal(t, "[s]\na = 2\n", string(b))
	fi, _ := os.Lstat(filepath.Join(dir, "link.ini"))
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type())
	fi, _ = os.Stat(filepath.Join(dir, "real.ini"))
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
