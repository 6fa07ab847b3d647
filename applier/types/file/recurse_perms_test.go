package file_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idsOf is the uid and gid of p (lstat).
func idsOf(t *testing.T, p string) (int, int) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// Issue 26 item 12: a recursive copy with source_permissions: use gives
// each entry its own source's mode (and, as root, owner and group), not
// the top directory's; the next run is in sync.
func TestRecurseSourcePermissionsPerEntry(t *testing.T) {
	root := t.TempDir()
	src, dst := filepath.Join(root, "src"), filepath.Join(root, "dst")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "private"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "secret"), []byte("s\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(src, "public"), []byte("p\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "private", "key"), []byte("k\n"), 0o640))
	for p, m := range map[string]os.FileMode{"": 0o755, "secret": 0o600, "public": 0o644, "private": 0o710, "private/key": 0o640} {
		require.NoError(t, os.Chmod(filepath.Join(src, p), m))
	}
	asRoot := os.Geteuid() == 0 && exec.Command("getent", "passwd", "nobody").Run() == nil
	if asRoot {
		for _, p := range []string{"secret", "private", "private/key"} {
			require.NoError(t, os.Lchown(filepath.Join(src, p), 65534, 65534))
		}
	}
	e := newEngine(t)
	params := "{ensure: directory, recurse: true, source: " + src + ", source_permissions: use}"
	res := apply(t, e, dst, params)
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	for p, m := range map[string]os.FileMode{"": 0o755, "secret": 0o600, "public": 0o644, "private": 0o710, "private/key": 0o640} {
		assert.Equal(t, m, modeOf(t, filepath.Join(dst, p)).Perm(), p)
		if asRoot {
			wu, wg := idsOf(t, filepath.Join(src, p))
			u, g := idsOf(t, filepath.Join(dst, p))
			assert.Equal(t, [2]int{wu, wg}, [2]int{u, g}, p)
		}
	}
	res = apply(t, e, dst, params)
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)

	// A mode given by the request still wins, for every entry.
	res = apply(t, e, dst, "{ensure: directory, recurse: true, source: "+src+", source_permissions: use, mode: '0600'}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, os.FileMode(0o600), modeOf(t, filepath.Join(dst, "public")).Perm())
	assert.Equal(t, os.FileMode(0o700), modeOf(t, filepath.Join(dst, "private")).Perm())

	// An entry changed locally is put back to its own source's mode.
	require.NoError(t, os.Chmod(filepath.Join(dst, "secret"), 0o666))
	res = apply(t, e, dst, params)
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, os.FileMode(0o600), modeOf(t, filepath.Join(dst, "secret")).Perm())
	assert.Equal(t, os.FileMode(0o644), modeOf(t, filepath.Join(dst, "public")).Perm())
	res = apply(t, e, dst, params)
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)

	// use_when_creating: new entries get their own source's mode.
	dst2 := filepath.Join(root, "dst2")
	res = apply(t, e, dst2, "{ensure: directory, recurse: true, source: "+src+", source_permissions: use_when_creating}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, os.FileMode(0o600), modeOf(t, filepath.Join(dst2, "secret")).Perm())
	assert.Equal(t, os.FileMode(0o710), modeOf(t, filepath.Join(dst2, "private")).Perm())
}
