package filebucket_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/filebucket"
)

func TestBackupListOpenRestore(t *testing.T) {
	ctx := context.Background()
	dir, state := t.TempDir(), t.TempDir()
	b := &filebucket.Bucket{Dir: filebucket.Dir(state)}
	assert.Equal(t, filepath.Join(state, "bucket"), b.Dir)
	assert.Equal(t, filepath.Join(applier.DefaultStateDir(), "bucket"), filebucket.Dir(""))

	entries, err := b.List()
	require.NoError(t, err, "a bucket that does not exist yet is empty")
	assert.Empty(t, entries)

	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("one"), 0o640))
	sum, err := b.Backup(ctx, path, "main")
	require.NoError(t, err)
	want := sha256.Sum256([]byte("one"))
	assert.Equal(t, hex.EncodeToString(want[:]), sum)
	// The same content again is stored once and listed twice.
	_, err = b.Backup(ctx, path, "main")
	require.NoError(t, err)
	entries, err = b.List()
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, [3]string{sum, path, "main"}, [3]string{entries[0].Checksum, entries[0].Path, entries[0].Bucket})
	stored, err := os.ReadDir(filepath.Join(b.Dir, sum[:2]))
	require.NoError(t, err)
	assert.Len(t, stored, 1)

	f, err := b.Open(sum[:8])
	require.NoError(t, err)
	got, _ := io.ReadAll(f)
	f.Close()
	assert.Equal(t, "one", string(got))
	_, err = b.Open("abc")
	assert.ErrorContains(t, err, "too short")
	_, err = b.Open("zzzzzzzz")
	assert.ErrorContains(t, err, "not hex")
	_, err = b.Open("00000000")
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Restore over a changed file keeps its mode; a new path gets 0644.
	require.NoError(t, os.WriteFile(path, []byte("two"), 0o640))
	require.NoError(t, b.Restore(ctx, sum, path))
	got, _ = os.ReadFile(path)
	assert.Equal(t, "one", string(got))
	fi, _ := os.Stat(path)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	other := filepath.Join(dir, "g")
	require.NoError(t, b.Restore(ctx, sum, other))
	fi, _ = os.Stat(other)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	assert.ErrorContains(t, b.Restore(ctx, sum, dir), "is a directory")
}
