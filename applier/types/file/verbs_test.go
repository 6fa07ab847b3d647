package file_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

func rubyTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 -0700") }

func TestFindAndSearch(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a file")
	require.NoError(t, os.WriteFile(f, []byte("hi\n"), 0o640))
	require.NoError(t, os.Chmod(f, 0o640))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o750))
	require.NoError(t, os.Chmod(filepath.Join(dir, "sub"), 0o750))
	require.NoError(t, os.Symlink("a file", filepath.Join(dir, "link")))
	e := typetest.New(t, []*applier.Type{file.Type})
	fi, err := os.Lstat(f)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	uid, gid := int64(st.Uid), int64(st.Gid)

	res := e.Find("file", f, "")
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{
		{Name: "ensure", Value: "file"},
		{Name: "content", Value: "{sha256}" + sha256hex("hi\n")},
		{Name: "ctime", Value: rubyTime(time.Unix(st.Ctim.Sec, 0))},
		{Name: "group", Value: gid},
		{Name: "mode", Value: "0640"},
		{Name: "mtime", Value: rubyTime(fi.ModTime())},
		{Name: "owner", Value: uid},
		{Name: "provider", Value: "posix"},
		{Name: "type", Value: "file"},
	}, res.State)
	// Content is a checksum, not content: the params leave it out.
	assert.Equal(t, "{ensure: 'file', group: "+itoa(gid)+", mode: '0640', owner: "+itoa(uid)+", provider: 'posix'}", res.Params)

	for _, p := range []string{f, filepath.Join(dir, "sub"), filepath.Join(dir, "link"), filepath.Join(dir, "missing")} {
		res := e.Find("file", p, "")
		require.False(t, res.Failed, res.Exception)
		back := e.Apply("file", p, res.Params)
		assert.Equal(t, "unchanged", typetest.Summary(back), "%s: %s\n%s", p, res.Params, typetest.Events(back))
	}
	res = e.Find("file", filepath.Join(dir, "link"), "")
	v, _ := res.State.Get("target")
	assert.Equal(t, "a file", v)
	res = e.Find("file", filepath.Join(dir, "missing"), "")
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "posix"}}, res.State)
	_, err = os.Lstat(filepath.Join(dir, "missing"))
	assert.True(t, os.IsNotExist(err), "find created the missing file")
	assert.Equal(t, "hi\n", readFile(t, f))
	assert.Equal(t, os.FileMode(0o640), modeOf(t, f))

	// Search lists a directory's entries, each as find reports it.
	res = e.Search("file", "{path: '"+dir+"'}")
	require.False(t, res.Failed, res.Exception)
	var titles []string
	for _, in := range res.Instances {
		titles = append(titles, in.Title)
	}
	assert.Equal(t, []string{f, filepath.Join(dir, "link"), filepath.Join(dir, "sub")}, titles)
	assert.Equal(t, e.Find("file", f, "").State, res.Instances[0].State)
	res = e.Search("file", "{path: '"+dir+"', ensure: directory}")
	require.Len(t, res.Instances, 1)
	assert.Equal(t, filepath.Join(dir, "sub"), res.Instances[0].Title)

	res = e.Search("file", "")
	assert.True(t, res.Failed)
	assert.Contains(t, res.Exception, "give the directory to list as path")
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
