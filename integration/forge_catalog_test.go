package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A native concat_file in a catalog gathers its fragments from the run,
// in order; its change refreshes what it notifies, once; a refreshonly
// ini_setting subscribed to it is changed by that refresh; a file_line
// after the File holding its file (the module's autorequire) edits it;
// the second run changes nothing. No Puppet process: --fallback none.
func TestCatalogForgeTypesNative(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	ini := filepath.Join(dir, "app.ini")
	log := filepath.Join(dir, "log")
	require.NoError(t, os.WriteFile(ini, []byte("[s]\na = 1\n"), 0o644))
	cat := handCatalog(t,
		[3]any{"Concat_fragment", "b", map[string]any{"target": target, "content": "second\n", "order": "20"}},
		[3]any{"Concat_file", target, map[string]any{"path": target, "mode": "0640", "notify": []any{"Exec[refreshed]", "Ini_setting[a]"}}},
		[3]any{"Concat_fragment", "a", map[string]any{"target": target, "content": "first\n", "order": "10"}},
		[3]any{"Exec", "refreshed", map[string]any{"command": "/bin/sh -c 'echo ran >> " + log + "'", "refreshonly": true}},
		[3]any{"Ini_setting", "a", map[string]any{"path": ini, "section": "s", "setting": "a", "value": "2", "refreshonly": true}},
		[3]any{"File_line", "l", map[string]any{"path": filepath.Join(dir, "new.conf"), "line": "x = 1"}},
		[3]any{"File", filepath.Join(dir, "new.conf"), map[string]any{"ensure": "file"}},
		[3]any{"Anchor", "a::begin", map[string]any{"before": "Concat_file[" + target + "]"}},
	)
	st, stderr := applyHand(t, cat, "--fallback", "none")
	got, err := os.ReadFile(target)
	require.NoError(t, err, stderr)
	assert.Equal(t, "first\nsecond\n", string(got))
	fi, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	// As Puppet reports it: the change belongs to the File the concat_file
	// generates for its target.
	assert.True(t, st["File["+target+"]"].Changed, "%v", st)
	assert.False(t, st["Concat_file["+target+"]"].Changed, "%v", st)
	assert.True(t, st["Exec[refreshed]"].Changed)
	data, _ := os.ReadFile(log)
	assert.Equal(t, "ran\n", string(data))
	data, _ = os.ReadFile(ini)
	assert.Equal(t, "[s]\na = 2\n", string(data), "the refreshonly setting, refreshed")
	data, _ = os.ReadFile(filepath.Join(dir, "new.conf"))
	assert.Equal(t, "x = 1\n", string(data), "file_line after the File that makes its file")

	st, _ = applyHand(t, cat, "--fallback", "none")
	for ref, s := range st {
		assert.False(t, s.Changed, "second run: %s changed", ref)
		assert.False(t, s.Failed, "second run: %s failed", ref)
	}
	data, _ = os.ReadFile(log)
	assert.Equal(t, "ran\n", string(data), "nothing refreshed on the second run")
}
