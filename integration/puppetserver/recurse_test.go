package puppetserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// (In a file named before source_test.go: its last test revokes the
// server's certificate.)

// Issue 26 item 12: a recursive copy from the server with
// source_permissions: use gives each entry the mode, owner and group the
// server reports for it, not the top directory's; the next run is in sync.
func TestRecursePermissionsPerEntryFromServer(t *testing.T) {
	s := need(t)
	if exec.Command("getent", "passwd", "nobody").Run() != nil {
		t.Skip("no user nobody")
	}
	tree := filepath.Join(s.files, "hb-perms")
	want := map[string]os.FileMode{"": 0o755, "secret": 0o600, "public": 0o644, "private": 0o710, "private/key": 0o640}
	require.NoError(t, os.MkdirAll(filepath.Join(tree, "private"), 0o755))
	for p, m := range want {
		if p != "" && p != "private" {
			require.NoError(t, os.WriteFile(filepath.Join(tree, p), []byte(p+"\n"), m))
		}
		require.NoError(t, os.Chmod(filepath.Join(tree, p), m))
	}
	for _, p := range []string{"secret", "private", "private/key"} {
		require.NoError(t, os.Lchown(filepath.Join(tree, p), 65534, 65534))
	}
	dst := filepath.Join(t.TempDir(), "perms")
	req := fileReq(1, dst, "{ensure: directory, source: 'puppet:///modules/testmod/hb-perms', recurse: true, source_permissions: use}")
	a := receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":true`)
	assert.Contains(t, a[0], `"failed":false`)
	for p, m := range want {
		fi, err := os.Lstat(filepath.Join(dst, p))
		require.NoError(t, err, p)
		assert.Equal(t, m, fi.Mode().Perm(), p)
		src, err := os.Lstat(filepath.Join(tree, p))
		require.NoError(t, err)
		assert.Equal(t, src.Sys().(*syscall.Stat_t).Uid, fi.Sys().(*syscall.Stat_t).Uid, p)
		assert.Equal(t, src.Sys().(*syscall.Stat_t).Gid, fi.Sys().(*syscall.Stat_t).Gid, p)
	}
	a = receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":false`, a[0])
	assert.Contains(t, a[0], `"failed":false`)
}

// Issue 26 item 13: names holding '#', '%', '?' or a space are served
// literally, alone and in a recursion.
func TestHostileNamesFromServer(t *testing.T) {
	s := need(t)
	tree := filepath.Join(s.files, "hb-names")
	names := []string{"hash#frag.txt", "percent%41.txt", "q?mark=1", "space name", "plus+sign"}
	for _, n := range names {
		require.NoError(t, write(filepath.Join(tree, n), "content of "+n+"\n"))
	}
	require.NoError(t, write(filepath.Join(tree, "percentA.txt"), "the wrong file\n"))
	dir := t.TempDir()
	var reqs []string
	for i, n := range names {
		reqs = append(reqs, fileReq(i+1, filepath.Join(dir, "single-"+string(rune('a'+i))), "{source: 'puppet:///modules/testmod/hb-names/"+n+"'}"))
	}
	reqs = append(reqs, fileReq(99, filepath.Join(dir, "tree"), "{ensure: directory, source: 'puppet:///modules/testmod/hb-names', recurse: true}"))
	a := receive(t, s, s.agentSSL, reqs...)
	for i, n := range names {
		assert.Contains(t, a[i], `"changed":true`, n)
		assert.Equal(t, "content of "+n+"\n", read(t, filepath.Join(dir, "single-"+string(rune('a'+i)))), n)
		assert.Equal(t, "content of "+n+"\n", read(t, filepath.Join(dir, "tree", n)), n)
	}
	assert.Contains(t, a[len(names)], `"failed":false`, a[len(names)])
	// In sync on the next run.
	a = receive(t, s, s.agentSSL, reqs...)
	for i := range reqs {
		assert.Contains(t, a[i], `"changed":false`, a[i])
	}
}
