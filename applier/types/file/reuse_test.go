package file_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine reuses a finished resource's maps for the next request: what
// one request gave must not leak into the next. Each step is applied right
// after one that gave mode, owner-less content and backup, on one engine.
func TestEngineReuseLeaksNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(b, []byte("old\n"), 0o644))
	e := newEngine(t)

	tests := []struct {
		name   string
		path   string
		params string
		want   outcome
		mode   os.FileMode
		body   string
	}{
		{"a gives mode and content", a, "{ensure: file, mode: '0600', content: \"one\\n\", backup: false}", changed, 0o600, "one\n"},
		{"b gives only content: its mode stays", b, "{ensure: file, content: \"two\\n\"}", changed, 0o644, "two\n"},
		{"b again, in sync", b, "{ensure: file, content: \"two\\n\"}", unchanged, 0o644, "two\n"},
		{"a gives only ensure: content and mode stay", a, "{ensure: file}", unchanged, 0o600, "one\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := apply(t, e, tt.path, tt.params)
			assert.Equal(t, tt.want, outcomeOf(res), "%+v", res)
			fi, err := os.Stat(tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.mode, fi.Mode().Perm())
			assert.Equal(t, tt.body, readFile(t, tt.path))
		})
	}
}
