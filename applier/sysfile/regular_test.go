package sysfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/sysfile"
)

// TestReadRegular: a regular file (or a link to one) is read; a FIFO
// with no writer, a directory and a device are refused at once as not
// regular files, never opened in a way that waits; a missing file is
// fs.ErrNotExist; a file over the bound is refused.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	require.NoError(t, os.WriteFile(reg, []byte("hello\n"), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(reg, link))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	fifoLink := filepath.Join(dir, "fifolink")
	require.NoError(t, os.Symlink(fifo, fifoLink))

	for _, p := range []string{reg, link} {
		b, err := sysfile.ReadRegular(p, 0)
		require.NoError(t, err)
		assert.Equal(t, "hello\n", string(b))
	}
	for _, p := range []string{fifo, fifoLink, dir, "/dev/null"} {
		done := make(chan error, 1)
		go func() {
			_, err := sysfile.ReadRegular(p, 0)
			done <- err
		}()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, sysfile.ErrNotRegular, p)
			assert.EqualError(t, err, p+": not a regular file")
		case <-time.After(5 * time.Second):
			t.Fatalf("reading %s waits", p)
		}
	}
	_, err := sysfile.ReadRegular(filepath.Join(dir, "none"), 0)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
	_, err = sysfile.ReadRegular(reg, 3)
	assert.Error(t, err)
}
