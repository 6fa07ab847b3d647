package file_test

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/applier/typetest"
)

// kindOf is the file type's name for what is at p (lstat), "absent" when
// nothing is.
func kindOf(t *testing.T, p string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return "absent"
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "file"
	case syscall.S_IFDIR:
		return "directory"
	case syscall.S_IFLNK:
		return "link"
	case syscall.S_IFIFO:
		return "fifo"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFCHR:
		return "characterSpecial"
	case syscall.S_IFBLK:
		return "blockSpecial"
	}
	return "unknown"
}

// specialNodes makes a FIFO, a socket and (as root) a character and a
// block device node in a temp dir, and returns their paths by kind.
func specialNodes(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	nodes := map[string]string{"fifo": filepath.Join(dir, "fifo"), "socket": filepath.Join(dir, "sock")}
	require.NoError(t, syscall.Mkfifo(nodes["fifo"], 0o640))
	l, err := net.Listen("unix", nodes["socket"])
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	if os.Geteuid() == 0 {
		// A copy of /dev/null's node (1,3) and of loop0's (7,0): making
		// the nodes opens nothing.
		nodes["characterSpecial"] = filepath.Join(dir, "null")
		require.NoError(t, syscall.Mknod(nodes["characterSpecial"], syscall.S_IFCHR|0o666, 1<<8|3))
		nodes["blockSpecial"] = filepath.Join(dir, "loop")
		require.NoError(t, syscall.Mknod(nodes["blockSpecial"], syscall.S_IFBLK|0o600, 7<<8|0))
	}
	return nodes
}

// Issue 26 item 3: a find's params, applied back, leave a FIFO, a socket
// or a device node as it is (unchanged), where ensure: fifo used to be
// taken as a link target and the node replaced by `fifo -> fifo`.
func TestFindOfSpecialFilesAppliedBackUnchanged(t *testing.T) {
	e := typetest.New(t, []*applier.Type{file.Type})
	nodes := specialNodes(t)
	for kind, p := range nodes {
		res := e.Find("file", p, "")
		require.False(t, res.Failed, res.Exception)
		v, _ := res.State.Get("ensure")
		assert.Equal(t, kind, v, p)
		_, hasContent := res.State.Get("content")
		assert.False(t, hasContent, "%s: a %s has no content to checksum", p, kind)
		back := e.Apply("file", p, res.Params)
		assert.Equal(t, "unchanged", typetest.Summary(back), "%s: %s\n%s", p, res.Params, typetest.Events(back))
		assert.Equal(t, kind, kindOf(t, p), "applying the find's params back changed %s", p)
	}
}

// The special kinds as ensure values: a check, never a link target.
// Nothing of another kind is replaced by one, and nothing is created;
// device nodes are never removed or replaced (Puppet: "Could not remove
// files of type characterSpecial"), while a FIFO or a socket is, when
// asked for explicitly, as in Puppet.
func TestEnsureSpecialKinds(t *testing.T) {
	e := typetest.New(t, []*applier.Type{file.Type})
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("keep\n"), 0o644))
	for _, kind := range []string{"fifo", "socket", "characterSpecial", "blockSpecial"} {
		res := e.Apply("file", plain, "{ensure: "+kind+"}")
		assert.True(t, res.Failed, "%s over a file: %s", kind, typetest.Events(res))
		assert.Contains(t, res.Exception+typetest.Events(res), kind)
		assert.Equal(t, "file", kindOf(t, plain))
		missing := filepath.Join(dir, "missing-"+kind)
		res = e.Apply("file", missing, "{ensure: "+kind+"}")
		assert.True(t, res.Failed, "%s on nothing: %s", kind, typetest.Events(res))
		assert.Equal(t, "absent", kindOf(t, missing))
	}
	assert.Equal(t, "keep\n", readFile(t, plain))

	nodes := specialNodes(t)
	// A FIFO as a socket: a check that fails, changing nothing.
	res := e.Apply("file", nodes["fifo"], "{ensure: socket}")
	assert.True(t, res.Failed)
	assert.Equal(t, "fifo", kindOf(t, nodes["fifo"]))
	// Present is any kind: unchanged.
	res = e.Apply("file", nodes["fifo"], "{ensure: present}")
	assert.Equal(t, "unchanged", typetest.Summary(res), typetest.Events(res))

	if dev, ok := nodes["characterSpecial"]; ok {
		for _, params := range []string{"{ensure: absent}", "{ensure: file, content: x}", "{ensure: directory}",
			"{ensure: link, target: /etc/hostname}", "{ensure: /etc/hostname}", "{ensure: blockSpecial}"} {
			res := e.Apply("file", dev, params)
			assert.True(t, res.Failed, "%s on a device: %s", params, typetest.Events(res))
			assert.Equal(t, "characterSpecial", kindOf(t, dev), params)
		}
		// Its mode is managed without opening the device.
		res := e.Apply("file", dev, "{ensure: characterSpecial, mode: '0640'}")
		assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
		assert.Equal(t, os.FileMode(0o640), modeOf(t, dev).Perm())
	}
	// A socket's mode is managed too (it cannot be opened).
	res = e.Apply("file", nodes["socket"], "{ensure: socket, mode: '0600'}")
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, os.FileMode(0o600), modeOf(t, nodes["socket"]).Perm())
	// A FIFO given ensure: file explicitly becomes a file (as Puppet).
	res = e.Apply("file", nodes["fifo"], "{ensure: file, content: x}")
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, "file", kindOf(t, nodes["fifo"]))
}

// A recursion's purge removes a FIFO but never a device node: that entry
// fails, the others are purged.
func TestPurgeKeepsDeviceNodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a device node")
	}
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	require.NoError(t, syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	e := typetest.New(t, []*applier.Type{file.Type})
	res := e.Apply("file", dir, "{ensure: directory, recurse: true, purge: true}")
	assert.True(t, res.Failed, typetest.Events(res))
	assert.Contains(t, typetest.Events(res), "Could not remove files of type characterSpecial")
	assert.Equal(t, "characterSpecial", kindOf(t, filepath.Join(dir, "null")))
	assert.Equal(t, "absent", kindOf(t, filepath.Join(dir, "fifo")))
	assert.Equal(t, "absent", kindOf(t, filepath.Join(dir, "file")))
}
