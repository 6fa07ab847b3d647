package tidy_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/filebucket"
	"github.com/pippet/pippet/applier/types/tidy"
	"github.com/pippet/pippet/applier/typetest"
)

func withStateDir(dir string) func(*applier.Env) {
	return func(env *applier.Env) { env.Options.StateDir = dir }
}

// backup naming a bucket puts each removed regular file's content in the
// local filebucket, recorded under its path and the bucket's name, before
// it is removed; directories are removed without a backup.
func TestBackupToFilebucket(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	tree(t, root, base, aged...)
	e := typetest.New(t, []*applier.Type{tidy.Type}, withStateDir(state))
	r := e.Apply("tidy", root, "{age: 1w, recurse: true, rmdirs: true, backup: main}")
	require.Equal(t, "changed", typetest.Summary(r), typetest.Events(r))
	assert.Equal(t, []string{"big.bin", "new.log"}, listing(t, root))

	entries, err := (&filebucket.Bucket{Dir: filebucket.Dir(state)}).List()
	require.NoError(t, err)
	var paths []string
	for _, en := range entries {
		paths = append(paths, en.Path)
		assert.Equal(t, "main", en.Bucket)
		f, err := (&filebucket.Bucket{Dir: filebucket.Dir(state)}).Open(en.Checksum)
		require.NoError(t, err)
		b := make([]byte, 100)
		n, _ := f.Read(b)
		f.Close()
		rel, _ := filepath.Rel(root, en.Path)
		assert.Equal(t, rel, string(b[:n]), "the backup holds the file's content")
	}
	sort.Strings(paths)
	want := []string{"old.log", "old.txt", "sub/deeper/old.log", "sub/old.log"}
	for i := range want {
		want[i] = filepath.Join(root, want[i])
	}
	assert.Equal(t, want, paths, "one backup per removed file, none for directories")
}

// backup with a suffix (or true: .puppet-bak) keeps a copy beside each
// removed file with its mode; a directory that holds a copy is kept, and
// that is no failure.
func TestBackupSuffix(t *testing.T) {
	for _, c := range []struct{ backup, suffix string }{{".bak", ".bak"}, {"true", ".puppet-bak"}} {
		t.Run(c.backup, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, []string{"old.log", "new.log", "sub/old.log"}, "old.log", "sub/old.log", "sub")
			require.NoError(t, os.Chmod(filepath.Join(root, "old.log"), 0o600))
			e := typetest.New(t, []*applier.Type{tidy.Type})
			r := e.Apply("tidy", root, "{age: 1w, recurse: true, rmdirs: true, matches: ['*.log'], backup: "+c.backup+"}")
			require.Equal(t, "changed", typetest.Summary(r), typetest.Events(r))
			assert.Equal(t, []string{"new.log", "old.log" + c.suffix, "sub/", "sub/old.log" + c.suffix}, listing(t, root))
			b, err := os.ReadFile(filepath.Join(root, "old.log"+c.suffix))
			require.NoError(t, err)
			assert.Equal(t, "old.log", string(b))
			fi, err := os.Stat(filepath.Join(root, "old.log"+c.suffix))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the copy keeps the file's mode")
		})
	}
}

// A file whose backup cannot be made is not removed: the resource fails
// naming it, and the others are still tidied.
func TestBackupFailureKeepsFile(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("l", 253) // + ".bak" is longer than a name may be
	tree(t, root, []string{long, "short"}, long, "short")
	e := typetest.New(t, []*applier.Type{tidy.Type})
	r := e.Apply("tidy", root, "{age: 1w, recurse: true, backup: .bak}")
	assert.True(t, r.Failed, typetest.Summary(r))
	assert.Contains(t, typetest.Events(r), "could not back up "+filepath.Join(root, long))
	assert.Equal(t, []string{long, "short.bak"}, listing(t, root), "the file without a backup stays")

	// A state directory that cannot hold a bucket: nothing is removed.
	root = t.TempDir()
	tree(t, root, []string{"a"}, "a")
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	e = typetest.New(t, []*applier.Type{tidy.Type}, withStateDir(notDir))
	r = e.Apply("tidy", root, "{age: 1w, recurse: true, backup: main}")
	assert.True(t, r.Failed, typetest.Summary(r))
	assert.Contains(t, typetest.Events(r), "could not back up "+filepath.Join(root, "a")+" to filebucket main")
	assert.Equal(t, []string{"a"}, listing(t, root))
}
