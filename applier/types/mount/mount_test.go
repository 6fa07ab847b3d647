package mount

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	"github.com/pippet/pippet/protocol"
)

func testEngine(t *testing.T) *engine.Engine {
	reg := applier.NewRegistry()
	reg.Add(Type)
	return engine.New(reg, &applier.Env{Options: applier.Options{StateDir: t.TempDir()}})
}

func apply(eng *engine.Engine, title string, params map[string]any) protocol.Result {
	return eng.Apply(context.Background(), &protocol.Request{Type: "mount", Title: title, Params: params})
}

// The oracle's mount-defined case: with the header stamped when it was
// recorded, the bytes hash as Puppet's did.
func TestOracleMountDefined(t *testing.T) {
	target := filepath.Join(t.TempDir(), "fstab")
	params := map[string]any{"ensure": "defined", "device": "/dev/vdb1", "fstype": "ext4", "options": "defaults,noatime", "target": target}
	r, err := Type.NewResource("/mnt/data", params, false)
	require.NoError(t, err)
	p, err := newParsed(r, &applier.Env{Cache: &applier.Cache{}, Options: applier.Options{StateDir: t.TempDir()}})
	require.NoError(t, err)
	p.(*parsed).Now = func() time.Time { return time.Date(2026, 11, 21, 23, 45, 21, 0, time.UTC) }
	res := testEngine(t).Converge(context.Background(), r, p)
	assert.Equal(t, protocol.Result{Resource: "Mount[/mnt/data]", Changed: true, Events: []protocol.Event{{
		Property: "ensure", Previous: "absent", Desired: "defined", Message: "defined 'ensure' as 'defined'", Status: "success"}}}, res)
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, "13ecb7c6e9770d25", hex.EncodeToString(sum[:])[:16], "the bytes Puppet wrote: %q", data)
	st, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	res = apply(testEngine(t), "/mnt/data", params)
	assert.Equal(t, protocol.Result{Resource: "Mount[/mnt/data]"}, res, "second run: in sync")
}

// existing holds what Puppet keeps (comments, a line with too few
// columns) and what it re-renders; kept is how Puppet 7 writes it back
// (checked with puppet apply).
const existing = "# fstab\n  # indented\nUUID=abc   /    ext4   errors=remount-ro 0       1\n/dev/sdb1 /mnt/old/ xfs\nonlyone\n" +
	"/dev/x /mnt/x ext4 defaults 0 0 extra more\n/dev/my\\040disk /mnt/my\\040dir ext4 defaults 0 2\n\n"
const kept = "# fstab\n  # indented\nUUID=abc\t/\text4\terrors=remount-ro\t0\t1\n/dev/sdb1\t/mnt/old\txfs\t\t\t\nonlyone\n" +
	"/dev/x\t/mnt/x\text4\tdefaults\t0\t0\textra\tmore\n/dev/my\\040disk\t/mnt/my\\040dir\text4\tdefaults\t0\t2\n"

func TestRequests(t *testing.T) {
	type step struct {
		title  string
		params map[string]any
		want   protocol.Result
		file   string // body afterwards; "-" no file; "=" as before the step
	}
	ev := func(prop string, is, should any, msg string) []protocol.Event {
		return []protocol.Event{{Property: prop, Previous: is, Desired: should, Message: msg, Status: "success"}}
	}
	tests := []struct {
		name  string
		in    string // "-": no file
		steps []step
	}{
		{"present adds to a table, keeping and normalising the rest", existing, []step{
			{"/mnt/new", map[string]any{"ensure": "present", "device": "/dev/sdc 1", "fstype": "ext4"},
				protocol.Result{Resource: "Mount[/mnt/new]", Changed: true, Events: ev("ensure", "absent", "defined", "defined 'ensure' as 'defined'")},
				kept + "/dev/sdc\\0401\t/mnt/new\text4\tdefaults\t0\t0\n"},
			{"/mnt/new/", map[string]any{"ensure": "defined", "device": "/dev/sdc 1", "fstype": "ext4", "options": "defaults"},
				protocol.Result{Resource: "Mount[/mnt/new/]"}, "="},
		}},
		{"change columns of an unmounted line", "/dev/a /mnt/a ext4 defaults 0 0\n", []step{
			{"/mnt/a", map[string]any{"ensure": "defined", "options": "noatime", "dump": 1, "pass": 2},
				protocol.Result{Resource: "Mount[/mnt/a]", Changed: true, Events: []protocol.Event{
					{Property: "options", Previous: "defaults", Desired: "noatime", Message: "options changed 'defaults' to 'noatime'", Status: "success"},
					{Property: "pass", Previous: "0", Desired: "2", Message: "pass changed '0' to '2'", Status: "success"},
					{Property: "dump", Previous: "0", Desired: "1", Message: "dump changed '0' to '1'", Status: "success"}}},
				"/dev/a\t/mnt/a\text4\tnoatime\t1\t2\n"},
			{"/mnt/a", map[string]any{"ensure": "defined", "options": "noatime", "dump": "1", "pass": "2", "atboot": true, "blockdevice": "/dev/rdsk/x"},
				protocol.Result{Resource: "Mount[/mnt/a]"}, "="},
		}},
		{"without ensure an existing line is managed, a missing one left alone", "/dev/a /mnt/a ext4 defaults 0 0\n", []step{
			{"/mnt/a", map[string]any{"fstype": "xfs"},
				protocol.Result{Resource: "Mount[/mnt/a]", Changed: true, Events: ev("fstype", "ext4", "xfs", "fstype changed 'ext4' to 'xfs'")},
				"/dev/a\t/mnt/a\txfs\tdefaults\t0\t0\n"},
			{"/mnt/b", map[string]any{"fstype": "xfs"}, protocol.Result{Resource: "Mount[/mnt/b]"}, "="},
		}},
		{"absent removes the line", "# c\n/dev/a /mnt/a ext4 defaults 0 0\n/dev/b /mnt/b ext4 defaults 0 0\n", []step{
			{"/mnt/a", map[string]any{"ensure": "absent"},
				protocol.Result{Resource: "Mount[/mnt/a]", Changed: true, Events: ev("ensure", "unmounted", "absent", "undefined 'ensure' from 'unmounted'")},
				"# c\n/dev/b\t/mnt/b\text4\tdefaults\t0\t0\n"},
			{"/mnt/a", map[string]any{"ensure": "absent"}, protocol.Result{Resource: "Mount[/mnt/a]"}, "="},
		}},
		{"absent with no table writes nothing", "-", []step{
			{"/mnt/a", map[string]any{"ensure": "absent"}, protocol.Result{Resource: "Mount[/mnt/a]"}, "-"},
		}},
		{"bad values are errors, nothing written", "-", []step{
			{"/mnt/a", map[string]any{"ensure": "defined", "device": "/dev/a", "fstype": "ext 4"},
				protocol.ErrorResult("Mount[/mnt/a]", "Parameter fstype failed on Mount[/mnt/a]: fstype must not contain whitespace: ext 4"), "-"},
			{"/mnt/a", map[string]any{"ensure": "defined", "device": "/dev/a", "fstype": "ext4", "options": ""},
				protocol.ErrorResult("Mount[/mnt/a]", "Parameter options failed on Mount[/mnt/a]: options must not be an empty string"), "-"},
			{"/mnt/a", map[string]any{"ensure": "defined", "device": "/dev/a", "fstype": "ext4", "dump": 2},
				protocol.ErrorResult("Mount[/mnt/a]", `Parameter dump failed on Mount[/mnt/a]: Invalid value "2". Valid values match /^(0|1)$/.`), "-"},
			{"/mnt/a", map[string]any{"ensure": "mounted_maybe"},
				protocol.ErrorResult("Mount[/mnt/a]", `Parameter ensure failed on Mount[/mnt/a]: Invalid value "mounted_maybe". Valid values are defined, unmounted, absent, mounted.`), "-"},
			{"/mnt/a", map[string]any{"ensure": "defined", "device": "/dev/a\nb", "fstype": "ext4"},
				protocol.ErrorResult("Mount[/mnt/a]", `Parameter device failed on Mount[/mnt/a]: device must not contain tabs or newlines: "/dev/a\nb"`), "-"},
			{"/mnt/a", map[string]any{"ensure": "defined", "device": "/dev/a"},
				protocol.Result{Resource: "Mount[/mnt/a]", Failed: true,
					Exception: "change from 'absent' to 'defined' failed: Mount[/mnt/a]: Field 'fstype' is required",
					Events: []protocol.Event{{Property: "ensure", Previous: "absent", Desired: "defined", Status: "failure",
						Message: "change from 'absent' to 'defined' failed: Mount[/mnt/a]: Field 'fstype' is required"}}}, "-"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "fstab")
			if tc.in != "-" {
				require.NoError(t, os.WriteFile(target, []byte(tc.in), 0o644))
			}
			eng := testEngine(t)
			prev := tc.in
			for i, s := range tc.steps {
				s.params["target"] = target
				got := apply(eng, s.title, s.params)
				assert.Equal(t, s.want, got, "step %d", i+1)
				switch s.file {
				case "-":
					assert.NoFileExists(t, target)
				case "=":
					b, err := os.ReadFile(target)
					require.NoError(t, err)
					assert.Equal(t, prev, string(b), "step %d: file untouched", i+1)
				default:
					assert.Equal(t, s.file, parsedfiletest.Body(t, target), "step %d", i+1)
					b, _ := os.ReadFile(target)
					prev = string(b)
				}
			}
			entries, _ := os.ReadDir(filepath.Dir(target))
			assert.LessOrEqual(t, len(entries), 1, "no temporary file left")
		})
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		rec  record
		ok   bool
	}{
		{"/dev/a /mnt/a ext4 defaults 0 1", record{"/dev/a", "/mnt/a", "ext4", "defaults", "0", "1"}, true},
		{"/dev/a\t/mnt/a/", record{"/dev/a", "/mnt/a"}, true},
		{"  /dev/a  /  xfs", record{"/dev/a", "/", "xfs"}, true},
		{"a b c d 0 0 e f", record{"a", "b", "c", "d", "0", "0\te\tf"}, true},
		{`/dev/my\040disk /mnt/my\040dir ext4`, record{"/dev/my disk", "/mnt/my dir", "ext4"}, true},
		{"  # comment", record{}, false},
		{"onlyone", record{}, false},
		{"   ", record{}, false},
	}
	for _, tc := range tests {
		rec, ok := parseLine(tc.line)
		assert.Equal(t, tc.ok, ok, tc.line)
		assert.Equal(t, tc.rec, rec, tc.line)
	}
	assert.Equal(t, "/a b/c\\d", unescapeOctal(`/a\040b/c\134d`))
	assert.Equal(t, `/a\04`, unescapeOctal(`/a\04`))
}

// mountedOn reports what /proc/self/mounts says is mounted on dir.
func mountedOn(t *testing.T, dir string) (opts string, ok bool) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mounts")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && unescapeOctal(f[1]) == dir {
			opts, ok = f[3], true // the last one is on top
		}
	}
	return opts, ok
}

// Real mounts: a tmpfs on a temporary directory, as root only.
func TestMountedUnmounted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "none", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount here: %v %s", err, out)
	}
	require.NoError(t, exec.Command("umount", mnt).Run())
	t.Cleanup(func() {
		for {
			if _, ok := mountedOn(t, mnt); !ok || exec.Command("umount", mnt).Run() != nil {
				return
			}
		}
	})
	target := filepath.Join(dir, "fstab")
	eng := testEngine(t)
	params := func(ensure, opts string) map[string]any {
		return map[string]any{"ensure": ensure, "device": "none", "fstype": "tmpfs", "options": opts, "target": target}
	}
	line := func(opts string) string { return "none\t" + mnt + "\ttmpfs\t" + opts + "\t0\t0\n" }
	ev := func(prop string, is, should any, msg string) []protocol.Event {
		return []protocol.Event{{Property: prop, Previous: is, Desired: should, Message: msg, Status: "success"}}
	}
	steps := []struct {
		name    string
		params  map[string]any
		want    protocol.Result
		mounted string // its options; "" not mounted
		file    string
	}{
		{"mounted: added and mounted", params("mounted", "size=1m"),
			protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true, Events: ev("ensure", "absent", "mounted", "defined 'ensure' as 'mounted'")},
			"size=1024k", line("size=1m")},
		{"mounted again: in sync", params("mounted", "size=1m"),
			protocol.Result{Resource: "Mount[" + mnt + "]"}, "size=1024k", line("size=1m")},
		{"defined: in sync while mounted", params("defined", "size=1m"),
			protocol.Result{Resource: "Mount[" + mnt + "]"}, "size=1024k", line("size=1m")},
		{"options changed: remounted", params("mounted", "size=2m"),
			protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true, Events: ev("options", "size=1m", "size=2m", "options changed 'size=1m' to 'size=2m'")},
			"size=2048k", line("size=2m")},
		{"unmounted", params("unmounted", "size=2m"),
			protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true, Events: ev("ensure", "mounted", "unmounted", "ensure changed 'mounted' to 'unmounted'")},
			"", line("size=2m")},
		{"mounted with new options: line synced, then mounted", params("mounted", "size=3m"),
			protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true, Events: ev("ensure", "unmounted", "mounted", "ensure changed 'unmounted' to 'mounted'")},
			"size=3072k", line("size=3m")},
		{"absent: unmounted and removed", params("absent", "size=3m"),
			protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true, Events: ev("ensure", "mounted", "absent", "undefined 'ensure' from 'mounted'")},
			"", "\n"},
	}
	for _, s := range steps {
		got := apply(eng, mnt, s.params)
		assert.Equal(t, s.want, got, s.name)
		opts, ok := mountedOn(t, mnt)
		assert.Equal(t, s.mounted != "", ok, s.name)
		if ok {
			assert.Contains(t, opts, s.mounted, s.name)
		}
		assert.Equal(t, s.file, parsedfiletest.Body(t, target), s.name)
	}

	// A ghost: mounted but not in the table.
	require.NoError(t, exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "none", mnt).Run())
	got := apply(eng, mnt, params("defined", "size=1m"))
	assert.Equal(t, protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true,
		Events: ev("ensure", "ghost", "defined", "ensure changed 'ghost' to 'defined'")}, got)
	assert.Equal(t, line("size=1m"), parsedfiletest.Body(t, target))
	got = apply(eng, mnt, params("absent", "size=1m"))
	assert.Equal(t, protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true,
		Events: ev("ensure", "mounted", "absent", "undefined 'ensure' from 'mounted'")}, got)
	_, ok := mountedOn(t, mnt)
	assert.False(t, ok)
	require.NoError(t, exec.Command("mount", "-t", "tmpfs", "none", mnt).Run())
	got = apply(eng, mnt, params("absent", "size=1m"))
	assert.Equal(t, protocol.Result{Resource: "Mount[" + mnt + "]", Changed: true,
		Events: ev("ensure", "ghost", "absent", "undefined 'ensure' from 'ghost'")}, got)
	_, ok = mountedOn(t, mnt)
	assert.False(t, ok, "a ghost is unmounted")

	// mount(8) failing is a failure naming the command.
	got = apply(eng, mnt, map[string]any{"ensure": "mounted", "device": "/nonexistent/dev", "fstype": "ext4", "target": target})
	assert.True(t, got.Failed)
	assert.Contains(t, got.Exception, "Execution of 'mount --fstab "+target+" "+mnt+"' returned")
}
