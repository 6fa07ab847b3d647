package group_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/group"
	"github.com/pippet/pippet/applier/typetest"
)

// needRoot skips, saying why, when the test cannot change accounts.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: these tests create and remove real groups (CI runs them as root)")
	}
}

// cleanup removes the named groups now and when the test ends, whatever happened.
func cleanup(t *testing.T, names ...string) {
	t.Helper()
	rm := func() {
		for _, n := range names {
			_ = exec.Command("groupdel", n).Run()
		}
	}
	rm()
	t.Cleanup(rm)
}

// getent returns the group's /etc/group line ("" when there is none).
func getent(t *testing.T, name string) string {
	t.Helper()
	out, _ := exec.Command("getent", "group", name).Output()
	return strings.TrimSpace(string(out))
}

// Each step is a request and the outcome Puppet 7 gave for it (recorded
// with `puppet apply` on this platform), then the group's entry.
type step struct {
	title, params string
	want          string // typetest.Summary, exception matched as a prefix after "failed: "/"error: "
	entry         string // getent group TITLE afterwards; "-" skips the check
}

func run(t *testing.T, steps []step) {
	t.Helper()
	e := typetest.New(t, []*applier.Type{group.Type})
	for i, s := range steps {
		res := e.Apply("group", s.title, s.params)
		got := typetest.Summary(res)
		if strings.Contains(s.want, ": ") {
			assert.True(t, strings.HasPrefix(got, s.want) || strings.Contains(got, strings.SplitN(s.want, ": ", 2)[1]),
				"step %d %s %s: got %q, want %q", i, s.title, s.params, got, s.want)
		} else {
			assert.Equal(t, s.want, got, "step %d %s %s\n%s", i, s.title, s.params, typetest.Events(res))
		}
		if s.entry != "-" {
			assert.Equal(t, s.entry, getent(t, s.title), "step %d %s %s", i, s.title, s.params)
		}
	}
}

func TestGroup(t *testing.T) {
	needRoot(t)
	cases := []struct {
		name   string
		groups []string
		steps  []step
	}{
		{"create, unchanged, gid change, remove", []string{"pipg300"}, []step{
			{"pipg300", "{ensure: present, gid: 47300}", "changed", "pipg300:x:47300:"},
			{"pipg300", "{ensure: present, gid: 47300}", "unchanged", "pipg300:x:47300:"},
			// ensure defaults to present: a gid alone is managed
			{"pipg300", "{gid: 47301}", "changed", "pipg300:x:47301:"},
			{"pipg300", "{gid: '47301'}", "unchanged", "pipg300:x:47301:"},
			{"pipg300", "{ensure: absent}", "changed", ""},
			{"pipg300", "{ensure: absent}", "unchanged", ""},
		}},
		{"ensure defaults to present", []string{"pipg302"}, []step{
			{"pipg302", "{gid: 47302}", "changed", "pipg302:x:47302:"},
		}},
		{"gid as a string of digits", []string{"pipg303"}, []step{
			{"pipg303", "{gid: '47303'}", "changed", "pipg303:x:47303:"},
		}},
		{"refusals", []string{"pipg304", "pipg:204", "-pipg304"}, []step{
			{"pipg304", "{gid: abc}", "error: Parameter gid failed on Group[pipg304]: Invalid GID abc", ""},
			{"pipg304", "{gid: 1.5}", "error: Parameter gid failed on Group[pipg304]: Invalid GID 1.5", ""},
			{"pipg304", "{gid: -3}", "error: Parameter gid failed on Group[pipg304]: id -3 is out of range (0 to 4294967294)", ""},
			{"pipg304", "{gid: 4294967295}", "error: Parameter gid failed on Group[pipg304]: id 4294967295 is out of range (0 to 4294967294)", ""},
			{"pipg304", "{gid: '99999999999999999999'}", "error: Parameter gid failed on Group[pipg304]: id 99999999999999999999 is out of range (0 to 4294967294)", ""},
			{"pipg:204", "{gid: 47304}", "failed: change from 'absent' to 'present' failed: Could not create group pipg:204: Execution of '/usr/sbin/groupadd -g 47304 pipg:204' returned 3: groupadd: 'pipg:204' is not a valid group name", ""},
			// a leading dash is a name, not an option
			{"-pipg304", "{gid: 47304}", "failed: change from 'absent' to 'present' failed: Could not create group -pipg304: Execution of '/usr/sbin/groupadd -g 47304 -- -pipg304' returned 3", ""},
			{"pipg304", "{gid: 47304, bogus: 1}", "error: no parameter named 'bogus'", ""},
		}},
		{"members are not managed by groupadd", []string{"pipg305"}, []step{
			{"pipg305", "{gid: 47305, members: [root]}", "changed", "pipg305:x:47305:"},
			{"pipg305", "{gid: 47305, members: [root], auth_membership: true}", "unchanged", "pipg305:x:47305:"},
			{"pipg305", "{gid: 47305, forcelocal: true}", "unchanged", "pipg305:x:47305:"},
			{"pipg305", "{gid: 47305, ia_load_module: files, attributes: [a=b]}", "unchanged", "pipg305:x:47305:"},
		}},
		{"duplicate gid", []string{"pipg306", "pipg307"}, []step{
			{"pipg306", "{gid: 47306}", "changed", "pipg306:x:47306:"},
			{"pipg307", "{gid: 47306}", "failed: change from 'absent' to 'present' failed: Could not create group pipg307: Execution of '/usr/sbin/groupadd -g 47306 pipg307' returned 4: groupadd: GID '47306' already exists", ""},
			{"pipg307", "{gid: 47306, allowdupe: true}", "changed", "pipg307:x:47306:"},
			{"pipg307", "{gid: 47307}", "changed", "pipg307:x:47307:"},
			{"pipg307", "{gid: 47306}", "failed: change from 47307 to 47306 failed: Could not set gid on group[pipg307]: Execution of '/usr/sbin/groupmod -g 47306 pipg307' returned 4: groupmod: GID '47306' already exists", "pipg307:x:47307:"},
			{"pipg307", "{gid: 47306, allowdupe: true}", "changed", "pipg307:x:47306:"},
		}},
		{"noop", []string{"pipg308"}, []step{
			{"pipg308", "{gid: 47308, noop: true}", "unchanged", ""},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cleanup(t, c.groups...)
			run(t, c.steps)
		})
	}
}

// A system group gets a gid below the first ordinary one (login.defs).
func TestSystemGroup(t *testing.T) {
	needRoot(t)
	cleanup(t, "pipg309")
	e := typetest.New(t, []*applier.Type{group.Type})
	res := e.Apply("group", "pipg309", "{system: true}")
	require.Equal(t, "changed", typetest.Summary(res))
	f := strings.Split(getent(t, "pipg309"), ":")
	require.Len(t, f, 4)
	assert.Less(t, len(f[2]), 4, "a system gid is below 1000: %v", f)
}

// An edit by another program is seen at once: the parsed /etc/group is
// reused only while the file is unchanged.
func TestOutsideChangeSeen(t *testing.T) {
	needRoot(t)
	cleanup(t, "pipg310")
	e := typetest.New(t, []*applier.Type{group.Type})
	require.Equal(t, "changed", typetest.Summary(e.Apply("group", "pipg310", "{gid: 47310}")))
	require.Equal(t, "unchanged", typetest.Summary(e.Apply("group", "pipg310", "{gid: 47310}")))
	require.NoError(t, exec.Command("groupmod", "-g", "47311", "pipg310").Run())
	res := e.Apply("group", "pipg310", "{gid: 47310}")
	require.Equal(t, "changed", typetest.Summary(res))
	assert.Contains(t, typetest.Events(res), "gid changed 47311 to 47310")
	require.NoError(t, exec.Command("groupdel", "pipg310").Run())
	assert.Equal(t, "changed", typetest.Summary(e.Apply("group", "pipg310", "{gid: 47310}")))
}

// The attributes groupadd does not manage are named at debug level, as
// Puppet does.
func TestUnmanagedLogged(t *testing.T) {
	e := typetest.New(t, []*applier.Type{group.Type})
	res := e.Apply("group", "pipg311", "{ensure: absent, members: [root], forcelocal: true, attributes: [a=b]}")
	require.Equal(t, "unchanged", typetest.Summary(res))
	for _, n := range []string{"members", "forcelocal", "attributes"} {
		assert.Contains(t, e.Log(), "does not support the feature attribute "+n+" needs; not managing it")
	}
	assert.NotContains(t, e.Log(), "attribute ia_load_module")
}
