package file_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mkTree makes files (content = their path), dirs (ending in /) and
// links ("name -> target") below root.
func mkTree(t *testing.T, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		switch {
		case strings.Contains(e, " -> "):
			parts := strings.SplitN(e, " -> ", 2)
			require.NoError(t, os.Symlink(parts[1], filepath.Join(root, parts[0])))
		case strings.HasSuffix(e, "/"):
			require.NoError(t, os.MkdirAll(filepath.Join(root, e), 0o755))
		default:
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, e)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, e), []byte(e), 0o644))
		}
	}
}

// tree describes what is below dir: "f" for a file with its content,
// "d/" for directories, "l -> t" for links.
func tree(t *testing.T, dir string) []string {
	var out []string
	for _, rel := range listDir(t, dir) {
		p := filepath.Join(dir, rel)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			out = append(out, rel+" -> "+tg)
		case fi.IsDir():
			out = append(out, rel+"/")
		default:
			out = append(out, rel+"="+readFile(t, p))
		}
	}
	sort.Strings(out)
	return out
}

func TestRecursiveCopy(t *testing.T) {
	type step struct {
		params string
		want   outcome
	}
	cases := []struct {
		name  string
		src   []string
		src2  []string
		dest  []string
		steps []step
		want  []string
	}{
		{name: "copy a tree", src: []string{"a", "sub/b", "sub/deeper/c", "l -> a"},
			steps: []step{{"{ensure: directory, recurse: true, source: @SRC@}", changed}, {"{ensure: directory, recurse: true, source: @SRC@}", unchanged}},
			want:  []string{"a=a", "l -> a", "sub/", "sub/b=sub/b", "sub/deeper/", "sub/deeper/c=sub/deeper/c"}},
		{name: "source implies directory", src: []string{"a"},
			steps: []step{{"{recurse: true, source: @SRC@}", changed}, {"{recurse: true, source: @SRC@}", unchanged}},
			want:  []string{"a=a"}},
		{name: "changed and extra entries; no purge", src: []string{"a", "b"}, dest: []string{"a/", "b", "extra"},
			steps: []step{{"{ensure: directory, recurse: true, source: @SRC@, force: true}", changed}},
			want:  []string{"a=a", "b=b", "extra=extra"}},
		{name: "purge", src: []string{"a"}, dest: []string{"extra", "keep.tmp", "olddir/x"},
			steps: []step{{"{ensure: directory, recurse: true, purge: true, ignore: '*.tmp', source: @SRC@}", changed},
				{"{ensure: directory, recurse: true, purge: true, ignore: '*.tmp', source: @SRC@}", unchanged}},
			want: []string{"a=a", "keep.tmp=keep.tmp", "olddir/"}},
		{name: "purge directories with force", src: []string{"a"}, dest: []string{"olddir/x"},
			steps: []step{{"{ensure: directory, recurse: true, purge: true, force: true, source: @SRC@}", changed}},
			want:  []string{"a=a"}},
		{name: "recurselimit", src: []string{"a", "sub/b"},
			steps: []step{{"{ensure: directory, recurse: true, recurselimit: 1, source: @SRC@}", changed}},
			want:  []string{"a=a", "sub/"}},
		{name: "max_files", src: []string{"a", "b", "c"},
			steps: []step{{"{ensure: directory, recurse: true, max_files: 2, source: @SRC@}", failed}},
			want:  []string{}},
		{name: "sourceselect all merges, first wins", src: []string{"a", "both"}, src2: []string{"b", "both"},
			steps: []step{{"{ensure: directory, recurse: true, sourceselect: all, source: ['@SRC@', '@SRC2@']}", changed}},
			want:  []string{"a=a", "b=b", "both=both"}},
		{name: "sourceselect first", src: []string{"a"}, src2: []string{"b"},
			steps: []step{{"{ensure: directory, recurse: true, source: ['@SRC@', '@SRC2@']}", changed}},
			want:  []string{"a=a"}},
		{name: "remote ignores purge", src: []string{"a"}, dest: []string{"extra"},
			steps: []step{{"{ensure: directory, recurse: remote, purge: true, source: @SRC@}", changed}},
			want:  []string{"a=a", "extra=extra"}},
		{name: "purge without source empties", dest: []string{"x", "y"},
			steps: []step{{"{ensure: directory, recurse: true, purge: true}", changed}},
			want:  []string{}},
		{name: "without recurse only the directory", src: []string{"a"},
			steps: []step{{"{ensure: directory, source: @SRC@}", changed}, {"{ensure: directory, source: @SRC@}", unchanged}},
			want:  []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			src, src2, dest := filepath.Join(root, "src"), filepath.Join(root, "src2"), filepath.Join(root, "dest")
			require.NoError(t, os.Mkdir(src, 0o755))
			require.NoError(t, os.Mkdir(src2, 0o755))
			mkTree(t, src, tc.src...)
			for _, e := range tc.src2 {
				mkTree(t, src2, e)
				if e == "both" {
					require.NoError(t, os.WriteFile(filepath.Join(src2, e), []byte("from src2"), 0o644))
				}
			}
			if tc.dest != nil {
				require.NoError(t, os.Mkdir(dest, 0o755))
				mkTree(t, dest, tc.dest...)
			}
			e := newEngine(t)
			for i, s := range tc.steps {
				params := strings.NewReplacer("@SRC@", src, "@SRC2@", src2).Replace(s.params)
				res := apply(t, e, dest, params)
				assert.Equal(t, s.want, outcomeOf(res), "step %d %s: %+v", i+1, params, res)
			}
			got := []string{}
			if _, err := os.Stat(dest); err == nil {
				got = append(got, tree(t, dest)...)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRecursiveModes(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "d/a", "d/sub/b")
	e := newEngine(t)
	res := apply(t, e, root+"/d", "{ensure: directory, recurse: true, mode: '0640'}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, os.FileMode(0o640), modeOf(t, root+"/d/a"))
	assert.Equal(t, os.FileMode(0o640), modeOf(t, root+"/d/sub/b"))
	assert.Equal(t, os.ModeDir|0o750, modeOf(t, root+"/d/sub"))
	assert.Equal(t, os.ModeDir|0o750, modeOf(t, root+"/d"))
	res = apply(t, e, root+"/d", "{ensure: directory, recurse: true, mode: '0640'}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
}

func TestRecursiveEvent(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "src/a", "src/sub/b", "dest/a", "dest/stale")
	e := newEngine(t)
	res := apply(t, e, root+"/dest", "{ensure: directory, recurse: true, purge: true, source: "+root+"/src}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	require.Len(t, res.Events, 1)
	ev := res.Events[0]
	assert.Equal(t, "content", ev.Property)
	assert.Equal(t, "4 entries out of sync", fmt.Sprint(ev.Previous))
	assert.Equal(t, "all entries in sync", fmt.Sprint(ev.Desired))
	// mkTree writes each file's own path: dest/a differs from src/a.
	assert.Equal(t, "synced 4 entries: a content; sub created; sub/b created; stale removed", ev.Message)
	assert.Equal(t, "src/a", readFile(t, root+"/dest/a"))
}

// TestMaxFilesSoftLimit: as Puppet, max_files 0 recurses over any number of
// entries but warns above 1000; -1 silences the warning; a positive bound
// fails; below -1 is not a value.
func TestMaxFilesSoftLimit(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	require.NoError(t, os.Mkdir(src, 0o755))
	for i := range 1001 {
		require.NoError(t, os.WriteFile(filepath.Join(src, fmt.Sprintf("f%04d", i)), nil, 0o644))
	}
	cases := []struct {
		maxFiles string
		want     outcome
		warns    bool
	}{
		{"0", changed, true},
		{"-1", changed, false},
		{"1000", failed, false},
		{"1001", changed, false},
		{"-2", errored, false},
	}
	for _, tc := range cases {
		t.Run("max_files "+tc.maxFiles, func(t *testing.T) {
			e, logs := newLoggingEngine(t)
			dest := filepath.Join(t.TempDir(), "dest")
			res := apply(t, e, dest, "{ensure: directory, recurse: true, source: "+src+", max_files: "+tc.maxFiles+"}")
			assert.Equal(t, tc.want, outcomeOf(res), "%+v", res)
			if tc.warns {
				assert.Contains(t, logs.String(), "the tree holds 1001 entries, more than the soft limit of 1000")
			} else {
				assert.NotContains(t, logs.String(), "soft limit")
			}
		})
	}
}
