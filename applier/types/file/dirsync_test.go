package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/file"
)

// Every change to a directory's entries is marked in the env's dirsync.Syncer
// (which the receiver flushes later); changes that leave the entries
// alone mark nothing.
func TestDirectoryChangesAreMarked(t *testing.T) {
	cases := []struct {
		name   string
		setup  string // entries made below root first (see mkTree)
		path   string // relative to root
		params string // YAML; @ROOT@ is the root
		want   outcome
		// marks is how many marks the request makes; dirs lists the
		// directories (relative to root, "." for root) the flush fsyncs.
		marks int
		dirs  []string
		check func(t *testing.T, root string)
	}{
		{name: "create a file", path: "a", params: "{ensure: file, content: hi}", want: changed, marks: 1, dirs: []string{"."},
			check: func(t *testing.T, root string) { assert.Equal(t, "hi", readFile(t, root+"/a")) }},
		{name: "replace content", setup: "a", path: "a", params: "{content: new}", want: changed, marks: 1, dirs: []string{"."}},
		{name: "mode only", setup: "a", path: "a", params: "{mode: '0600'}", want: changed},
		{name: "unchanged", setup: "a", path: "a", params: "{content: a}", want: unchanged},
		{name: "create a directory", path: "d", params: "{ensure: directory}", want: changed, marks: 1, dirs: []string{"."}},
		{name: "create a link", path: "l", params: "{ensure: link, target: a}", want: changed, marks: 1, dirs: []string{"."}},
		{name: "remove a file", setup: "a", path: "a", params: "{ensure: absent}", want: changed, marks: 1, dirs: []string{"."}},
		{name: "remove a directory", setup: "d/x", path: "d", params: "{ensure: absent, force: true}", want: changed, marks: 1, dirs: []string{"."}},
		{name: "backup beside is durable at once", setup: "a", path: "a", params: "{content: new, backup: .bak}", want: changed,
			marks: 1, dirs: []string{"."}, check: func(t *testing.T, root string) { assert.Equal(t, "a", readFile(t, root+"/a.bak")) }},
		{name: "recursive copy", setup: "src/f src/sub/g", path: "dst", params: "{ensure: directory, recurse: true, source: @ROOT@/src}", want: changed,
			marks: 4, dirs: []string{".", "dst", "dst/sub"},
			check: func(t *testing.T, root string) { assert.Equal(t, "src/sub/g", readFile(t, root+"/dst/sub/g")) }},
		{name: "purge", setup: "src/f dst/f dst/old", path: "dst", params: "{ensure: directory, recurse: true, purge: true, source: @ROOT@/src}",
			want: changed, marks: 2, dirs: []string{"dst"}, // dst/f replaced, dst/old removed
			check: func(t *testing.T, root string) { assert.NoFileExists(t, root+"/dst/old") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if c.setup != "" {
				mkTree(t, root, strings.Fields(c.setup)...)
			}
			var flushed int
			dirs := dirsync.New(dirsync.Options{Deferred: true, Report: func(n, _ int, err error) {
				assert.NoError(t, err)
				flushed += n
			}})
			reg := applier.NewRegistry()
			reg.Add(file.Type)
			e := engine.New(reg, &applier.Env{Options: applier.Options{StateDir: t.TempDir()}, Dirs: dirs})

			res := apply(t, e, filepath.Join(root, c.path), strings.ReplaceAll(c.params, "@ROOT@", root))
			require.Equal(t, c.want, outcomeOf(res), "%+v", res)
			assert.Equal(t, c.marks, dirs.Pending())
			// n counts distinct directories.
			n, err := dirs.Flush(context.Background())
			require.NoError(t, err)
			assert.Equal(t, len(c.dirs), n)
			if c.check != nil {
				c.check(t, root)
			}
		})
	}
}

// Creating a file: a new target is linked in place directly, anything in
// the way is renamed over; a missing or non-directory parent is named in
// the failure, whichever way the content comes.
func TestCreatePaths(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, root string)
		path   string // relative to root
		params string // YAML; @ROOT@ is the root
		want   outcome
		// exception, when set, is part of the answer's exception.
		exception string
		// entries is what root holds afterwards (see tree).
		entries []string
	}{
		{name: "new file", path: "a", params: "{content: hi}", want: changed, entries: []string{"a=hi"}},
		{name: "new empty file", path: "a", params: "{ensure: file}", want: changed, entries: []string{"a="}},
		{name: "dangling symlink is replaced", path: "a", params: "{content: hi}", want: changed,
			setup:   func(t *testing.T, root string) { require.NoError(t, os.Symlink(root+"/nowhere", root+"/a")) },
			entries: []string{"a=hi"}},
		{name: "validated new file", path: "a", params: "{content: hi, validate_cmd: '/bin/grep -q hi %'}", want: changed,
			entries: []string{"a=hi"}},
		{name: "new file from a source", path: "a", params: "{source: @ROOT@/src}", want: changed,
			setup:   func(t *testing.T, root string) { mkTree(t, root, "src") },
			entries: []string{"a=src", "src=src"}},
		{name: "missing parent", path: "no/a", params: "{content: hi}", want: failed,
			exception: "cannot create @ROOT@/no/a; parent directory @ROOT@/no does not exist"},
		{name: "missing parent of an empty file", path: "no/a", params: "{ensure: file}", want: failed,
			exception: "cannot create @ROOT@/no/a; parent directory @ROOT@/no does not exist"},
		{name: "missing parent of a copy", path: "no/a", params: "{source: @ROOT@/src}", want: failed,
			setup:     func(t *testing.T, root string) { mkTree(t, root, "src") },
			exception: "cannot create @ROOT@/no/a; parent directory @ROOT@/no does not exist", entries: []string{"src=src"}},
		{name: "parent is a file", path: "f/a", params: "{content: hi}", want: failed,
			setup:     func(t *testing.T, root string) { mkTree(t, root, "f") },
			exception: "cannot create @ROOT@/f/a; @ROOT@/f is not a directory", entries: []string{"f=f"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if c.setup != nil {
				c.setup(t, root)
			}
			e := newEngine(t)
			res := apply(t, e, filepath.Join(root, c.path), strings.ReplaceAll(c.params, "@ROOT@", root))
			require.Equal(t, c.want, outcomeOf(res), "%+v", res)
			if c.exception != "" {
				assert.Contains(t, res.Exception, strings.ReplaceAll(c.exception, "@ROOT@", root))
			}
			var got []string
			for _, rel := range listDir(t, root) {
				b, err := os.ReadFile(filepath.Join(root, rel))
				require.NoError(t, err, "only regular files are left, no temp names")
				got = append(got, rel+"="+string(b))
			}
			assert.Equal(t, c.entries, got)
		})
	}
}
