package tidy_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/tidy"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/applier/typetest/puppetcase"
	"github.com/pippet/pippet/protocol"
)

// tree makes files (with content) and directories (ending in /) under
// root; paths named in old are aged ten days (atime and mtime).
func tree(t *testing.T, root string, entries []string, old ...string) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(root, e)
		if strings.HasSuffix(e, "/") {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		content := []byte(e)
		if strings.HasSuffix(e, ".bin") {
			content = make([]byte, 2048)
		}
		require.NoError(t, os.WriteFile(p, content, 0o644))
	}
	ago := time.Now().Add(-10 * 24 * time.Hour)
	// Deepest first, so aging a file does not refresh its aged directory.
	sort.Sort(sort.Reverse(sort.StringSlice(old)))
	for _, o := range old {
		require.NoError(t, os.Chtimes(filepath.Join(root, o), ago, ago))
	}
}

// listing is every path under root, relative, directories with a slash.
func listing(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	}))
	return out
}

var base = []string{"old.log", "new.log", "old.txt", "big.bin", "sub/old.log", "sub/deeper/old.log", "empty/"}
var aged = []string{"old.log", "old.txt", "sub/old.log", "sub/deeper/old.log", "empty", "sub/deeper", "sub"}

func TestTidy(t *testing.T) {
	cases := []struct {
		name    string
		params  string
		want    string   // outcome
		left    []string // what remains
		removed int      // events
	}{
		{name: "age, recurse", params: "{age: 1w, recurse: true}", want: "changed", removed: 4,
			left: []string{"big.bin", "empty/", "new.log", "sub/", "sub/deeper/"}},
		{name: "age in days by default", params: "{age: 9, recurse: true}", want: "changed", removed: 4,
			left: []string{"big.bin", "empty/", "new.log", "sub/", "sub/deeper/"}},
		{name: "age too high", params: "{age: 11d, recurse: true}", want: "unchanged",
			left: []string{"big.bin", "empty/", "new.log", "old.log", "old.txt", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "age by mtime, rmdirs", params: "{age: 1w, type: mtime, recurse: true, rmdirs: true}", want: "changed", removed: 7,
			left: []string{"big.bin", "new.log"}},
		{name: "size in kilobytes", params: "{size: 1, recurse: true}", want: "changed", removed: 1,
			left: []string{"empty/", "new.log", "old.log", "old.txt", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "size 2048 bytes", params: "{size: 2048b, recurse: true}", want: "changed", removed: 1,
			left: []string{"empty/", "new.log", "old.log", "old.txt", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "age or size", params: "{age: 1w, size: 2k, recurse: true}", want: "changed", removed: 5,
			left: []string{"empty/", "new.log", "sub/", "sub/deeper/"}},
		{name: "matches restricts", params: "{age: 1w, recurse: true, matches: ['*.log']}", want: "changed", removed: 3,
			left: []string{"big.bin", "empty/", "new.log", "old.txt", "sub/", "sub/deeper/"}},
		{name: "recurse depth 1", params: "{age: 1w, recurse: 1}", want: "changed", removed: 2,
			left: []string{"big.bin", "empty/", "new.log", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "no criteria: every file", params: "{recurse: true}", want: "changed", removed: 6,
			left: []string{"empty/", "sub/", "sub/deeper/"}},
		{name: "no recursion: the directory alone, kept", params: "{age: 1w}", want: "unchanged",
			left: []string{"big.bin", "empty/", "new.log", "old.log", "old.txt", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "noop", params: "{age: 1w, recurse: true, noop: true}", want: "unchanged",
			left: []string{"big.bin", "empty/", "new.log", "old.log", "old.txt", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "max_files exceeded", params: "{recurse: true, max_files: 3}", want: "failed: Could not evaluate Tidy[@ROOT@]: The directory '@ROOT@' contains at least 4 entries, which exceeds the limit of 3 specified by the max_files parameter for this resource. The limit may be increased, but be aware that large number of file resources can result in excessive resource consumption and degraded performance. Consider using an alternate method to manage large directory trees",
			left: []string{"big.bin", "empty/", "new.log", "old.log", "old.txt", "sub/", "sub/deeper/", "sub/deeper/old.log", "sub/old.log"}},
		{name: "matches without recurse", params: "{matches: '*.log'}", want: "error: Parameter matches failed on Tidy[@ROOT@]: Tidy can't use matches with recurse 0, false, or undef"},
		{name: "bad age unit", params: "{age: 3q}", want: "error: Parameter age failed on Tidy[@ROOT@]: Invalid age unit 'q'"},
		{name: "bad age", params: "{age: old}", want: "error: Parameter age failed on Tidy[@ROOT@]: Invalid tidy age old"},
		{name: "bad size unit", params: "{size: 3x}", want: "error: Parameter size failed on Tidy[@ROOT@]: Invalid size unit 'x'"},
		{name: "bad type", params: "{type: btime}", want: "error: Parameter type failed on Tidy[@ROOT@]: Invalid value \"btime\". Valid values are atime, mtime, ctime."},
		{name: "bad recurse", params: "{recurse: deep}", want: "error: Parameter recurse failed on Tidy[@ROOT@]: Invalid value \"deep\". Valid values match /^(true|false|inf|[0-9]+)$/."},
		{name: "tidied is not a request's", params: "{tidied: []}", want: "error: Parameter tidied failed on Tidy[@ROOT@]: is the receiver's to compute, not a request's"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "d")
			tree(t, root, base, aged...)
			e := typetest.New(t, []*applier.Type{tidy.Type})
			res := e.Apply("tidy", root, c.params)
			assert.Equal(t, strings.ReplaceAll(c.want, "@ROOT@", root), typetest.Summary(res))
			if c.left != nil {
				assert.Equal(t, c.left, listing(t, root))
			}
			if c.removed > 0 {
				assert.Len(t, res.Events, c.removed, typetest.Events(res))
				for _, ev := range res.Events {
					assert.Equal(t, "success", ev.Status)
					assert.True(t, strings.HasPrefix(ev.Message, "removed "+root), ev.Message)
				}
				again := e.Apply("tidy", root, c.params)
				assert.Equal(t, "unchanged", typetest.Summary(again), "a second run finds nothing: %s", typetest.Events(again))
			}
		})
	}
}

// A selected directory that still holds something is kept (Puppet would
// remove it with its contents).
func TestRmdirsKeepsNonEmpty(t *testing.T) {
	root := filepath.Join(t.TempDir(), "d")
	tree(t, root, []string{"olddir/new.txt", "olddir/old.txt"}, "olddir/old.txt", "olddir")
	e := typetest.New(t, []*applier.Type{tidy.Type})
	res := e.Apply("tidy", root, "{age: 1w, type: mtime, recurse: true, rmdirs: true}")
	assert.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, []string{"olddir/", "olddir/new.txt"}, listing(t, root))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("tidy", root, "{age: 1w, type: mtime, recurse: true, rmdirs: true}")))
}

// Links are judged and removed as themselves; nothing behind them is
// touched, even aged files in a linked directory.
func TestLinksNotFollowed(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	tree(t, outside, []string{"precious.log"}, "precious.log")
	root := filepath.Join(dir, "d")
	tree(t, root, []string{"keep.txt"})
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "precious.log"), filepath.Join(root, "filelink")))
	e := typetest.New(t, []*applier.Type{tidy.Type})
	res := e.Apply("tidy", root, "{age: 0, recurse: true, matches: ['*link*', '*.log']}")
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, []string{"keep.txt"}, listing(t, root), "both links removed as links")
	assert.FileExists(t, filepath.Join(outside, "precious.log"))
}

// A single file as the path, and a path that does not exist.
func TestSinglePath(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, []string{"x.log", "y.log"}, "x.log")
	e := typetest.New(t, []*applier.Type{tidy.Type})
	assert.Equal(t, "changed", typetest.Summary(e.Apply("tidy", filepath.Join(dir, "x.log"), "{age: 1d}")))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("tidy", filepath.Join(dir, "y.log"), "{age: 1d}")))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("tidy", filepath.Join(dir, "missing"), "{}")))
	assert.Equal(t, []string{"y.log"}, listing(t, dir))
}

// An attacker who owns the tree swaps a selected directory for a link to
// somewhere else between the read and the removal: the removal walks the
// tree again by descriptor and removes only the very files judged, so
// nothing behind the link is touched.
func TestSwapBetweenGetAndSet(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "d")
	tree(t, root, []string{"sub/a.log", "sub/b.log"}, "sub/a.log", "sub/b.log")
	victim := filepath.Join(dir, "victim")
	tree(t, victim, []string{"a.log", "b.log"}, "a.log", "b.log")

	r, err := tidy.Type.NewResource(root, map[string]any{"age": "1w", "recurse": true}, false)
	require.NoError(t, err)
	p, err := tidy.Provider.New(r, &applier.Env{})
	require.NoError(t, err)
	cur := applier.NewState(r)
	require.NoError(t, p.Get(context.Background(), cur))
	require.Len(t, cur.Value("tidied"), 2)

	require.NoError(t, os.Rename(filepath.Join(root, "sub"), filepath.Join(dir, "moved")))
	require.NoError(t, os.Symlink(victim, filepath.Join(root, "sub")))
	c := &applier.Change{Property: "tidied", Is: cur.Value("tidied"), Should: []any{}}
	require.NoError(t, p.Set(context.Background(), c))
	assert.Empty(t, c.Parts, "nothing removed")
	assert.Equal(t, []string{"a.log", "b.log"}, listing(t, victim), "nothing behind the link was touched")
}

// A tree larger than the event bound answers the bound and a summary.
func TestManyRemovals(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 10,050 files")
	}
	root := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.MkdirAll(root, 0o755))
	for i := 0; i < 10050; i++ {
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%05d", i)))
		require.NoError(t, err)
		f.Close()
	}
	e := typetest.New(t, []*applier.Type{tidy.Type})
	res := e.Apply("tidy", root, "{recurse: true}")
	assert.Equal(t, "changed", typetest.Summary(res))
	require.Len(t, res.Events, 10001)
	assert.Equal(t, "removed 50 more entries (logged, not listed)", res.Events[10000].Message)
	assert.Empty(t, listing(t, root))
}

// A file the run manages (the catalog's, or a controller's declared run)
// is never tidied, and neither is the directory holding it: Puppet's
// tidy makes no File to remove a path its catalog holds ("Tidying 1
// files" where two match, recorded with puppet apply). A second run
// finds nothing more to do.
func TestManagedFilesKept(t *testing.T) {
	root := filepath.Join(t.TempDir(), "d")
	tree(t, root, []string{"a.log", "keep.log", "sub/kept/x.log", "sub/gone/y.log", "managed/"})
	run := puppetcase.Run{
		{Type: "file", Title: filepath.Join(root, "keep.log"), Params: map[string]any{"content": "kept\n"}},
		{Type: "file", Title: filepath.Join(root, "sub/kept/x.log"), Params: map[string]any{"ensure": "file"}},
		{Type: "file", Title: filepath.Join(root, "managed"), Params: map[string]any{"ensure": "directory"}},
		{Type: "tidy", Title: root},
	}
	ctx := applier.WithRun(context.Background(), run)
	e := typetest.New(t, []*applier.Type{tidy.Type})
	req := func() *protocol.Request {
		return &protocol.Request{Type: "tidy", Title: root, Params: map[string]any{"recurse": true, "rmdirs": true}}
	}
	res := e.Engine.Apply(ctx, req())
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, []string{"keep.log", "managed/", "sub/", "sub/kept/", "sub/kept/x.log"}, listing(t, root))
	assert.Contains(t, e.Log(), "Tidying 3 files", "a.log, sub/gone/y.log and sub/gone")
	again := e.Engine.Apply(ctx, req())
	assert.Equal(t, "unchanged", typetest.Summary(again), typetest.Events(again))
}
