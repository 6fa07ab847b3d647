package puppetserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fileReq(id int, path, params string) string {
	return fmt.Sprintf(`{"type":"file","title":%q,"params":%q,"id":%d}`, path, params, id)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestContentFetchedThenUnchangedWithoutContentRequest(t *testing.T) {
	s := need(t)
	dst := filepath.Join(t.TempDir(), "motd")
	req := fileReq(1, dst, "{source: 'puppet:///modules/testmod/motd'}")
	meta0, content0 := s.requests(t, "file_metadata", "motd"), s.requests(t, "file_content", "motd")

	a := receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":true`)
	assert.Contains(t, a[0], `"failed":false`)
	assert.Equal(t, "Welcome from the Puppet Server\n", read(t, dst))
	assert.Equal(t, 1, s.settle(t, "file_metadata", "motd", meta0+1)-meta0)
	assert.Equal(t, 1, s.settle(t, "file_content", "motd", content0+1)-content0)

	// A second run: one metadata request, no content.
	a = receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":false`)
	assert.Contains(t, a[0], `"failed":false`)
	assert.Equal(t, 2, s.settle(t, "file_metadata", "motd", meta0+2)-meta0)
	assert.Equal(t, 1, s.requests(t, "file_content", "motd")-content0, "an unchanged file fetched its content")
}

func TestEveryChecksumTypeAgainstTheServer(t *testing.T) {
	s := need(t)
	dir := t.TempDir()
	var reqs []string
	kinds := []string{"md5", "md5lite", "sha256", "sha256lite", "sha1", "sha1lite", "sha224", "sha384", "sha512", "mtime", "ctime"}
	for i, k := range kinds {
		reqs = append(reqs, fileReq(i, filepath.Join(dir, k), fmt.Sprintf("{source: 'puppet:///modules/testmod/motd', checksum: %s}", k)))
	}
	content0 := s.requests(t, "file_content", "motd")
	a := receive(t, s, s.agentSSL, reqs...)
	for i, k := range kinds {
		assert.Contains(t, a[i], `"changed":true`, k)
		assert.Equal(t, "Welcome from the Puppet Server\n", read(t, filepath.Join(dir, k)), k)
	}
	assert.Equal(t, len(kinds), s.settle(t, "file_content", "motd", content0+len(kinds))-content0)
	a = receive(t, s, s.agentSSL, reqs...)
	for i, k := range kinds {
		assert.Contains(t, a[i], `"changed":false`, k)
		assert.Contains(t, a[i], `"failed":false`, k)
	}
	assert.Equal(t, len(kinds), s.settle(t, "file_content", "motd", content0+len(kinds))-content0, "a second run fetched content")
}

func TestRecursiveDirectory(t *testing.T) {
	s := need(t)
	dst := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, os.MkdirAll(dst, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "stray"), []byte("not in the source\n"), 0o644))
	req := fileReq(1, dst, "{ensure: directory, source: 'puppet:///modules/testmod/tree', recurse: true, purge: true, force: true}")
	metas0 := s.requests(t, "file_metadatas", "tree")
	a := receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":true`)
	assert.Equal(t, "file a\n", read(t, filepath.Join(dst, "a")))
	assert.Equal(t, "file b\n", read(t, filepath.Join(dst, "sub", "b")))
	assert.Equal(t, "file d\n", read(t, filepath.Join(dst, "sub", "c", "d")))
	assert.NoFileExists(t, filepath.Join(dst, "stray"))
	assert.Equal(t, 1, s.settle(t, "file_metadatas", "tree", metas0+1)-metas0)

	content0 := s.settle(t, "file_content", "tree/sub/b", 1)
	a = receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":false`)
	s.settle(t, "file_metadatas", "tree", metas0+2)
	assert.Equal(t, content0, s.requests(t, "file_content", "tree/sub/b"))

	// recurselimit 1: the direct children only.
	dst2 := filepath.Join(t.TempDir(), "tree")
	a = receive(t, s, s.agentSSL, fileReq(2, dst2, "{source: 'puppet:///modules/testmod/tree', recurse: true, recurselimit: 1}"))
	assert.Contains(t, a[0], `"failed":false`)
	assert.FileExists(t, filepath.Join(dst2, "a"))
	assert.DirExists(t, filepath.Join(dst2, "sub"))
	assert.NoFileExists(t, filepath.Join(dst2, "sub", "b"))

	// sourceselect all: two server directories and a local one merged,
	// the earliest source winning for a path both have.
	local := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(local, "a"), []byte("local a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(local, "only-local"), []byte("only local\n"), 0o644))
	dst3 := filepath.Join(t.TempDir(), "merged")
	a = receive(t, s, s.agentSSL, fileReq(3, dst3, "{source: ['puppet:///modules/testmod/tree', 'puppet://localhost/modules/testmod/list', '"+local+"'], recurse: true, sourceselect: all}"))
	assert.Contains(t, a[0], `"failed":false`)
	assert.Equal(t, "file a\n", read(t, filepath.Join(dst3, "a")))
	assert.Equal(t, "from the second source\n", read(t, filepath.Join(dst3, "fallback")))
	assert.Equal(t, "only local\n", read(t, filepath.Join(dst3, "only-local")))
	assert.Equal(t, "file d\n", read(t, filepath.Join(dst3, "sub", "c", "d")))
}

func TestChangedFileRefetched(t *testing.T) {
	s := need(t)
	dst := filepath.Join(t.TempDir(), "changing")
	req := fileReq(1, dst, "{source: 'puppet:///modules/testmod/changing'}")
	a := receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":true`)
	assert.Equal(t, "first version\n", read(t, dst))
	content0 := s.settle(t, "file_content", "changing", 1)

	require.NoError(t, os.WriteFile(filepath.Join(s.files, "changing"), []byte("second version\n"), 0o644))
	a = receive(t, s, s.agentSSL, req)
	assert.Contains(t, a[0], `"changed":true`)
	assert.Contains(t, a[0], `content changed`)
	assert.Equal(t, "second version\n", read(t, dst))
	assert.Equal(t, 1, s.settle(t, "file_content", "changing", content0+1)-content0)
}

func TestSourceListsAndPermissions(t *testing.T) {
	s := need(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "local-source")
	require.NoError(t, os.WriteFile(local, []byte("local\n"), 0o600))
	a := receive(t, s, s.agentSSL,
		// The first that exists, the server named in the URL.
		fileReq(1, filepath.Join(dir, "first"), "{source: ['puppet:///modules/testmod/missing', 'puppet://localhost/modules/testmod/list/fallback', '"+local+"']}"),
		// A local source first wins over the server.
		fileReq(2, filepath.Join(dir, "second"), "{source: ['"+local+"', 'puppet:///modules/testmod/motd']}"),
		// source_permissions use: the server's mode.
		fileReq(3, filepath.Join(dir, "perm"), "{source: 'puppet:///modules/testmod/permissioned', source_permissions: use}"),
		// None exists: Puppet's message, naming the environment.
		fileReq(4, filepath.Join(dir, "none"), "{source: ['puppet:///modules/testmod/missing', 'puppet:///modules/testmod/gone']}"),
	)
	assert.Contains(t, a[0], `"changed":true`)
	assert.Equal(t, "from the second source\n", read(t, filepath.Join(dir, "first")))
	assert.Equal(t, "local\n", read(t, filepath.Join(dir, "second")))
	assert.Contains(t, a[2], `"changed":true`)
	fi, err := os.Stat(filepath.Join(dir, "perm"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.Contains(t, a[3], `"failed":true`)
	assert.Contains(t, strings.ToLower(a[3]), "could not retrieve information from environment production source(s) puppet:///modules/testmod/missing, puppet:///modules/testmod/gone")
	assert.NoFileExists(t, filepath.Join(dir, "none"))
}
