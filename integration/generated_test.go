package integration

import (
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a run generates counts as managed, as Puppet's generate and
// eval_generate make it (issue 35.1): a directory's recursion and purge
// leave alone the File a concat_file generates in it and everything
// below a more specific File of the catalog (Puppet's
// remove_less_specific_files), whatever order the walk takes them in;
// the second run changes nothing. Puppet 7, on the same catalog:
// `File[D/stray]/ensure: removed`, D/sub/inner kept, the concat target
// written once.
func TestCatalogPurgeKeepsGenerated(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "sites")
	target := filepath.Join(d, "15-default.conf")
	require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	for _, f := range []string{"stray", "sub/inner"} {
		require.NoError(t, os.WriteFile(filepath.Join(d, f), []byte("x\n"), 0o644))
	}
	log := filepath.Join(dir, "log")
	for _, first := range []string{"dir", "concat"} {
		t.Run("walked "+first+" first", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(d, "stray"), []byte("x\n"), 0o644))
			require.NoError(t, os.RemoveAll(target))
			require.NoError(t, os.RemoveAll(log))
			purged := [3]any{"File", d, map[string]any{"ensure": "directory", "recurse": true, "purge": true, "force": true, "notify": "Exec[restart]"}}
			concat := [3]any{"Concat_file", target, map[string]any{"path": target, "notify": "Exec[restart]"}}
			rs := [][3]any{purged, concat}
			if first == "concat" {
				rs = [][3]any{concat, purged}
			}
			rs = append(rs,
				[3]any{"Concat_fragment", "body", map[string]any{"target": target, "content": "<VirtualHost *:80>\n", "order": "10"}},
				[3]any{"File", filepath.Join(d, "sub"), map[string]any{"ensure": "directory"}},
				[3]any{"Exec", "restart", map[string]any{"command": "/bin/sh -c 'echo restarted >> " + log + "'", "refreshonly": true}},
			)
			cat := handCatalog(t, rs...)
			st, stderr := applyHand(t, cat, "--fallback", "none")
			assert.NoFileExists(t, filepath.Join(d, "stray"), stderr)
			assert.FileExists(t, filepath.Join(d, "sub", "inner"), "below a more specific File of the catalog: not the recursion's")
			data, err := os.ReadFile(target)
			require.NoError(t, err, stderr)
			assert.Equal(t, "<VirtualHost *:80>\n", string(data))
			assert.True(t, st["Exec[restart]"].Changed)

			st, stderr = applyHand(t, cat, "--fallback", "none")
			for ref, s := range st {
				assert.False(t, s.Changed, "second run: %s changed\n%s", ref, stderr)
			}
			assert.FileExists(t, target)
			data, _ = os.ReadFile(log)
			assert.Equal(t, "restarted\n", string(data), "restarted once, on the first run")
		})
	}
}

// The same through the pipe: a controller's declared run holds the File
// its concat_file generates, so the directory's purge leaves the target
// alone.
func TestDeclaredRunKeepsGenerated(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "sites")
	target := filepath.Join(d, "15-default.conf")
	s := newSession(t)
	decl := map[string]any{"op": "declare", "resources": []any{
		map[string]any{"type": "file", "title": d, "params": map[string]any{"ensure": "directory", "recurse": true, "purge": true}},
		map[string]any{"type": "concat_file", "title": target},
		map[string]any{"type": "concat_fragment", "title": "body", "params": map[string]any{"target": target, "content": "x\n"}},
	}}
	line, err := json.Marshal(decl)
	require.NoError(t, err)
	res, raw := s.sendLine(string(line))
	require.False(t, res.Failed, raw)
	for i := 0; i < 2; i++ {
		res = s.apply("file", d, "{ensure: directory, recurse: true, purge: true}")
		require.False(t, res.Failed, res.Exception)
		res = s.apply("concat_file", target, "{}")
		require.False(t, res.Failed, res.Exception)
	}
	res = s.apply("file", d, "{ensure: directory, recurse: true, purge: true}")
	assert.False(t, res.Changed, "the purge leaves the concat target alone: %+v", res.Events)
	res = s.apply("concat_file", target, "{}")
	assert.False(t, res.Changed, "the target stays written: %+v", res.Events)
}
