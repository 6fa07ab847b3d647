package file_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 26 item 13: a puppet:// source's path is taken literally: '#',
// '%', '?' and spaces are part of the file's name, never a fragment, an
// escape or a query.
func TestPuppetSourceNamesTakenLiterally(t *testing.T) {
	names := []string{"hash#frag.txt", "percent%41.txt", "q?mark=1", "space name", "%zz"}
	files := map[string]string{}
	for _, n := range names {
		files[n] = "content of " + n + "\n"
	}
	files["percentA.txt"] = "the wrong file\n"
	_, opt := withPuppet(t, files)
	e := newEngine(t, opt)
	dir := t.TempDir()
	for i, n := range names {
		dst := filepath.Join(dir, strings.Repeat("x", i+1))
		res := apply(t, e, dst, "{source: 'puppet:///modules/m/"+n+"'}")
		require.Equal(t, changed, outcomeOf(res), "%s: %+v", n, res)
		assert.Equal(t, "content of "+n+"\n", readFile(t, dst), n)
		res = apply(t, e, dst, "{source: 'puppet:///modules/m/"+n+"'}")
		assert.Equal(t, unchanged, outcomeOf(res), "%s: %+v", n, res)
	}
}

// One entry of a recursion that cannot be synced (a directory where the
// source has a file, without force) does not stop the others: they are
// synced, the resource fails naming the entry, and the next run syncs
// what it can again and fails the same way.
func TestRecursionOneFailedEntry(t *testing.T) {
	root := t.TempDir()
	src, dst := filepath.Join(root, "src"), filepath.Join(root, "dst")
	require.NoError(t, os.MkdirAll(src, 0o755))
	for _, n := range []string{"a", "blocked", "z"} {
		require.NoError(t, os.WriteFile(filepath.Join(src, n), []byte(n+"\n"), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dst, "blocked", "keep"), 0o755))
	e := newEngine(t)
	params := "{ensure: directory, recurse: true, source: " + src + "}"
	res := apply(t, e, dst, params)
	assert.True(t, res.Failed, "%+v", res)
	assert.Contains(t, res.Exception+res.Events[0].Message, "blocked")
	assert.Equal(t, "a\n", readFile(t, filepath.Join(dst, "a")))
	assert.Equal(t, "z\n", readFile(t, filepath.Join(dst, "z")))
	assert.DirExists(t, filepath.Join(dst, "blocked", "keep"))

	// With force the directory is replaced and all is in sync.
	res = apply(t, e, dst, "{ensure: directory, recurse: true, force: true, source: "+src+"}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "blocked\n", readFile(t, filepath.Join(dst, "blocked")))
	res = apply(t, e, dst, params)
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
}
