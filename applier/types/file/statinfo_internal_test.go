package file

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatInfoMatchesOS: statInfo reports what os.Lstat and os.Stat do,
// for every kind of file and the set-id and sticky bits.
func TestStatInfoMatchesOS(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("12345"), 0o640))
	setid := filepath.Join(dir, "setid")
	require.NoError(t, os.WriteFile(setid, nil, 0o755))
	require.NoError(t, os.Chmod(setid, 0o755|os.ModeSetuid|os.ModeSetgid))
	sticky := filepath.Join(dir, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o1777))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(file, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()

	for _, path := range []string{file, setid, sticky, dir, link, fifo, sock, "/dev/null"} {
		for _, follow := range []bool{false, true} {
			want, err := os.Lstat(path)
			if follow {
				want, err = os.Stat(path)
			}
			require.NoError(t, err)
			var got statInfo
			require.NoError(t, lstatInto(path, follow, &got))
			assert.Equal(t, want.Name(), got.Name(), path)
			assert.Equal(t, want.Mode(), got.Mode(), "%s follow=%v", path, follow)
			assert.Equal(t, want.IsDir(), got.IsDir(), path)
			assert.Equal(t, want.Size(), got.Size(), path)
			assert.True(t, want.ModTime().Equal(got.ModTime()), path)
			assert.Equal(t, *want.Sys().(*syscall.Stat_t), *got.Sys().(*syscall.Stat_t), path)
		}
	}

	var st statInfo
	err = lstatInto(filepath.Join(dir, "missing"), false, &st)
	_, osErr := os.Lstat(filepath.Join(dir, "missing"))
	assert.Equal(t, osErr.Error(), err.Error(), "the same error as os.Lstat")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
