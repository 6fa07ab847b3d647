// Package parsedfiletest holds what the tests of the record types (host,
// mount, sshkey, ssh_authorized_key, cron) share.
package parsedfiletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Body is the file at path without Puppet's time-stamped header, which
// must be there; "" when the file does not exist.
func Body(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(t, err)
	rest, ok := parsedfile.CutHeader(b)
	require.True(t, ok, "header in %q", b)
	return string(rest)
}

// Target writes content to a file named name in a new temporary
// directory of t, mode 0644, and returns its path.
func Target(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}
