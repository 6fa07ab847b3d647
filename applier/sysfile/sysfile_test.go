package sysfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/sysfile"
)

func TestCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "passwd")
	require.NoError(t, os.WriteFile(path, []byte("a\nb\n"), 0o644))
	var parses atomic.Int32
	parse := func(b []byte) ([]string, error) {
		parses.Add(1)
		return strings.Fields(string(b)), nil
	}
	var c sysfile.Cache[[]string]

	v, err := c.Load(path, parse)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, v)
	v, err = c.Load(path, parse)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, v)
	assert.Equal(t, int32(1), parses.Load(), "an unchanged file is parsed once")

	// Another program rewrites it with the same size and mtime: the ctime
	// (and here the inode) tells.
	st, err := os.Stat(path)
	require.NoError(t, err)
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte("c\nd\n"), 0o644))
	require.NoError(t, os.Chtimes(tmp, st.ModTime(), st.ModTime()))
	require.NoError(t, os.Rename(tmp, path))
	v, err = c.Load(path, parse)
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "d"}, v)

	// In place, same size, same mtime: the ctime changes.
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, os.WriteFile(path, []byte("e\nf\n"), 0o644))
	require.NoError(t, os.Chtimes(path, st.ModTime(), st.ModTime()))
	v, err = c.Load(path, parse)
	require.NoError(t, err)
	assert.Equal(t, []string{"e", "f"}, v)

	c.Drop(path)
	n := parses.Load()
	_, err = c.Load(path, parse)
	require.NoError(t, err)
	assert.Equal(t, n+1, parses.Load(), "Drop forces a new parse")

	require.NoError(t, os.Remove(path))
	_, err = c.Load(path, parse)
	assert.True(t, sysfile.IsNotExist(err), "%v", err)
}

func TestCacheBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(path, make([]byte, 100), 0o644))
	var parses int
	c := sysfile.Cache[int]{MaxSize: 10}
	for i := 0; i < 3; i++ {
		_, err := c.Load(path, func(b []byte) (int, error) { parses++; return len(b), nil })
		require.NoError(t, err)
	}
	assert.Equal(t, 3, parses, "a file over MaxSize is never kept")
}
