package mount

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

func TestFindAndSearch(t *testing.T) {
	table := "# table\n/dev/pipv\t/mnt/pipv\\040none\text4\tnoatime\t0\t2\nLABEL=x /mnt/two xfs defaults\n"
	target := parsedfiletest.Target(t, "fstab", table)
	e := typetest.New(t, []*applier.Type{Type})
	tgt := "{target: '" + target + "'}"

	res := e.Find("mount", "/mnt/pipv none", tgt)
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{
		{Name: "ensure", Value: "unmounted"},
		{Name: "device", Value: "/dev/pipv"},
		{Name: "dump", Value: "0"},
		{Name: "fstype", Value: "ext4"},
		{Name: "options", Value: "noatime"},
		{Name: "pass", Value: "2"},
		{Name: "provider", Value: "parsed"},
		{Name: "target", Value: target},
	}, res.State)
	back := e.Apply("mount", "/mnt/pipv none", res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(back), "%s\n%s", res.Params, typetest.Events(back))

	res = e.Find("mount", "/mnt/pipv-missing", tgt)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "parsed"}}, res.State)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("mount", "/mnt/pipv-missing", res.Params)))

	// / is mounted and not in this table: a ghost, whose params leave
	// ensure out (apply takes no ghost) and so change nothing.
	res = e.Find("mount", "/", tgt)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "ghost"}, {Name: "provider", Value: "parsed"}, {Name: "target", Value: target}}, res.State)
	assert.Equal(t, "{provider: 'parsed'}", res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("mount", "/", res.Params)))

	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, table, string(got), "find or a round trip changed the table")

	res = e.Search("mount", tgt)
	require.False(t, res.Failed, res.Exception)
	require.GreaterOrEqual(t, len(res.Instances), 3)
	st, ok := typetest.Instance(res, "/mnt/pipv none")
	require.True(t, ok)
	assert.Equal(t, e.Find("mount", "/mnt/pipv none", tgt).State, st)
	_, ok = typetest.Instance(res, "/mnt/two")
	assert.True(t, ok)
	st, ok = typetest.Instance(res, "/")
	require.True(t, ok, "the root filesystem is listed as a ghost")
	v, _ := st.Get("ensure")
	assert.Equal(t, "ghost", v)
	res = e.Search("mount", "{target: '"+target+"', fstype: xfs}")
	require.Len(t, res.Instances, 1)
	assert.Equal(t, "/mnt/two", res.Instances[0].Title)
}

// A real tmpfs listed in the table answers mounted.
func TestSearchMounted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a tmpfs")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "none", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	target := filepath.Join(dir, "fstab")
	require.NoError(t, os.WriteFile(target, []byte("none "+mnt+" tmpfs size=1m 0 0\n"), 0o644))
	e := typetest.New(t, []*applier.Type{Type})
	res := e.Search("mount", "{target: '"+target+"', ensure: mounted}")
	require.False(t, res.Failed, res.Exception)
	require.Len(t, res.Instances, 1)
	assert.Equal(t, mnt, res.Instances[0].Title)
	res = e.Find("mount", mnt, "{target: '"+target+"'}")
	back := e.Apply("mount", mnt, res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(back), "%s\n%s", res.Params, typetest.Events(back))
}
