package atomicfile

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTempNameWithinNameMax(t *testing.T) {
	for _, base := range []string{"f", strings.Repeat("a", 240), strings.Repeat("b", 255), strings.Repeat("é", 127) + "x"} {
		n := TempName(base, 42)
		assert.LessOrEqual(t, len(n), nameMax, base)
		pid, ok := tempPID(n)
		assert.True(t, ok, n)
		assert.Equal(t, os.Getpid(), pid)
		assert.True(t, strings.HasSuffix(n, "-42"))
	}
	for _, n := range []string{"f", ".f", ".f.pippet-", ".f.pippet-12", ".f.pippet-12-", ".f.pippet-x-1", "f.pippet-12-1"} {
		_, ok := tempPID(n)
		assert.False(t, ok, n)
	}
}

// The validator reads the new content while the temp file has no name.
func TestValidateSeesUnnamedTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	err := WriteFunc(context.Background(), path, Options{Mode: 0o644, UID: -1, GID: -1, Validate: func(ctx context.Context, tmp string) error {
		b, err := os.ReadFile(tmp)
		require.NoError(t, err)
		assert.Equal(t, "new", string(b))
		entries, _ := os.ReadDir(dir)
		assert.Len(t, entries, 1, "no named temp while validating")
		return nil
	}}, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err })
	require.NoError(t, err)
}
