package user_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/user"
	"github.com/pippet/pippet/applier/typetest"
)

// needRoot skips, saying why, when the test cannot change accounts.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: these tests create and remove real accounts (CI runs them as root)")
	}
}

// cleanup removes the named users (and the user groups useradd made for
// them) and groups now and when the test ends, whatever happened.
func cleanup(t *testing.T, users, groups []string) {
	t.Helper()
	rm := func() {
		// Every user first: a user's own group may be another's primary
		// group (the duplicate uids case), and groupdel refuses a
		// primary group.
		for _, u := range users {
			_ = exec.Command("userdel", u).Run()
		}
		for _, u := range users {
			_ = exec.Command("groupdel", u).Run()
		}
		for _, g := range groups {
			_ = exec.Command("groupdel", g).Run()
		}
	}
	rm()
	t.Cleanup(rm)
}

func mkgroup(t *testing.T, name, gid string) {
	t.Helper()
	out, err := exec.Command("groupadd", "-g", gid, name).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// state is what the oracle probes: the passwd line, the shadow line and
// the ids, "" for each that is missing.
func state(t *testing.T, name string) string {
	t.Helper()
	pw, _ := exec.Command("getent", "passwd", name).Output()
	sh, _ := exec.Command("getent", "shadow", name).Output()
	id, _ := exec.Command("id", name).Output()
	return strings.TrimSpace(string(pw)) + " | " + strings.TrimSpace(string(sh)) + " | " + strings.TrimSpace(string(id))
}

// passwd is the getent passwd line alone.
func passwd(t *testing.T, name string) string {
	t.Helper()
	return strings.Split(state(t, name), " | ")[0]
}

// step is one request and the outcome Puppet 7 gave for the same manifest
// (recorded with puppet apply), then a check of the account.
type step struct {
	title, params string
	// want is typetest.Summary; for a failure or error, its text must
	// contain the part after the first ": ".
	want string
	// field is "passwd", "shadow" or "id" (the part of state compared),
	// "" for no check; is its expected value.
	field, is string
}

func run(t *testing.T, e *typetest.Engine, steps []step) {
	t.Helper()
	for i, s := range steps {
		res := e.Apply("user", s.title, s.params)
		got := typetest.Summary(res)
		if kind, msg, ok := strings.Cut(s.want, ": "); ok {
			assert.True(t, strings.HasPrefix(got, kind+": ") && strings.Contains(got, msg),
				"step %d %s %s: got %q, want %q", i, s.title, s.params, got, s.want)
		} else {
			assert.Equal(t, s.want, got, "step %d %s %s\n%s", i, s.title, s.params, typetest.Events(res))
		}
		if s.field != "" {
			parts := strings.Split(state(t, s.title), " | ")
			idx := map[string]int{"passwd": 0, "shadow": 1, "id": 2}[s.field]
			assert.Equal(t, s.is, parts[idx], "step %d %s %s: %s", i, s.title, s.params, s.field)
		}
	}
}

func TestUser(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	cases := []struct {
		name          string
		users, groups []string
		setup         func(t *testing.T)
		steps         []step
	}{
		{"create, unchanged, each property changed", []string{"pipu350"}, []string{"pipg400", "pipg401"},
			func(t *testing.T) { mkgroup(t, "pipg400", "47400"); mkgroup(t, "pipg401", "47401") }, []step{
				{"pipu350", "{uid: 47350}", "changed", "passwd", "pipu350:x:47350:47350::/home/pipu350:/bin/sh"},
				{"pipu350", "{uid: 47350}", "unchanged", "", ""},
				{"pipu350", "{ensure: present, uid: '47350'}", "unchanged", "", ""},
				{"pipu350", "{gid: pipgnone}", "failed: change from 47350 to 'pipgnone' failed: Could not find group(s) pipgnone", "passwd", "pipu350:x:47350:47350::/home/pipu350:/bin/sh"},
				{"pipu350", "{gid: pipg400}", "changed", "id", "uid=47350(pipu350) gid=47400(pipg400) groups=47400(pipg400)"},
				{"pipu350", "{gid: 47400}", "unchanged", "", ""},
				{"pipu350", "{gid: '47400'}", "unchanged", "", ""},
				{"pipu350", "{groups: [pipg401]}", "changed", "id", "uid=47350(pipu350) gid=47400(pipg400) groups=47400(pipg400),47401(pipg401)"},
				// minimum: pipg401 is kept; pipg400 (the primary group, not
				// in its member list) is added to the list
				{"pipu350", "{groups: [pipg400]}", "changed", "", ""},
				{"pipu350", "{groups: [pipg400]}", "unchanged", "", ""},
				{"pipu350", "{groups: [pipg400], membership: inclusive}", "changed", "", ""},
				{"pipu350", "{groups: [pipg400], membership: inclusive}", "unchanged", "", ""},
				{"pipu350", "{groups: [], membership: inclusive}", "changed", "id", "uid=47350(pipu350) gid=47400(pipg400) groups=47400(pipg400)"},
				{"pipu350", "{groups: [pipgnone]}", "failed: Could not set groups on user[pipu350]: Execution of '/usr/sbin/usermod -G pipgnone pipu350' returned 6: usermod: group 'pipgnone' does not exist", "", ""},
				{"pipu350", "{comment: 'Pip Six'}", "changed", "passwd", "pipu350:x:47350:47400:Pip Six:/home/pipu350:/bin/sh"},
				{"pipu350", "{comment: 'Pip Six'}", "unchanged", "", ""},
				{"pipu350", "{home: " + dir + "/h350}", "changed", "passwd", "pipu350:x:47350:47400:Pip Six:" + dir + "/h350:/bin/sh"},
				{"pipu350", "{shell: /bin/bash}", "changed", "passwd", "pipu350:x:47350:47400:Pip Six:" + dir + "/h350:/bin/bash"},
				{"pipu350", "{shell: /bin/nosuchsh}", "failed: Shell /bin/nosuchsh must exist", "", ""},
				{"pipu350", "{shell: /etc/passwd}", "failed: Shell /etc/passwd must be executable", "", ""},
				{"pipu350", "{shell: bin/sh}", "failed: Shell bin/sh must exist", "", ""},
				{"pipu350", "{password_min_age: 1, password_max_age: 90, password_warn_days: 7}", "changed", "", ""},
				{"pipu350", "{password_min_age: '1', password_max_age: 90, password_warn_days: 7}", "unchanged", "", ""},
				{"pipu350", "{expiry: '2030-01-02'}", "changed", "", ""},
				{"pipu350", "{expiry: '2030-01-02'}", "unchanged", "", ""},
				{"pipu350", "{password: plain}", "changed", "", ""},
				{"pipu350", "{password: plain}", "unchanged", "", ""},
				{"pipu350", "{uid: 47351}", "changed", "", ""},
				{"pipu350", "{uid: 0}", "failed: Could not set uid on user[pipu350]: Execution of '/usr/sbin/usermod -u 0 pipu350' returned 4: usermod: UID '0' already exists", "", ""},
				{"pipu350", "{forcelocal: true, comment: x, roles: [a], loginclass: b}", "changed", "", ""},
				{"pipu350", "{ensure: absent}", "changed", "passwd", ""},
				{"pipu350", "{ensure: absent, managehome: true}", "unchanged", "", ""},
			}},
		{"shadow fields", []string{"pipu352"}, nil, nil, []step{
			{"pipu352", "{uid: 47352, password_min_age: 1, password_max_age: 90, password_warn_days: 5, expiry: '2030-01-02', password: '$6$x$y'}", "changed", "", ""},
			{"pipu352", "{uid: 47352, password_min_age: 1, password_max_age: 90, password_warn_days: 5, expiry: '2030-01-02', password: '$6$x$y'}", "unchanged", "", ""},
			{"pipu352", "{expiry: absent}", "changed", "", ""},
			{"pipu352", "{expiry: absent}", "unchanged", "", ""},
		}},
		{"refusals", []string{"pipu353", "pipu:353", "-pipu353", "pipu 353"}, nil, nil, []step{
			{"pipu353", "{uid: -5}", "error: Parameter uid failed on User[pipu353]: id -5 is out of range (0 to 4294967294)", "passwd", ""},
			{"pipu353", "{uid: 4294967295}", "error: Parameter uid failed on User[pipu353]: id 4294967295 is out of range (0 to 4294967294)", "passwd", ""},
			{"pipu353", "{uid: abc}", "failed: Execution of '/usr/sbin/useradd -u abc -M pipu353' returned 3: useradd: invalid user ID 'abc'", "passwd", ""},
			{"pipu:353", "{uid: 47353}", "failed: Execution of '/usr/sbin/useradd -u 47353 -M pipu:353' returned 3: useradd: invalid user name 'pipu:353'", "", ""},
			{"pipu 353", "{uid: 47353}", "failed: useradd: invalid user name 'pipu 353'", "", ""},
			{"-pipu353", "{uid: 47353}", "failed: Execution of '/usr/sbin/useradd -u 47353 -M -- -pipu353' returned 3", "", ""},
			{"pipu353", "{uid: 47353, shell: bin/sh}", "failed: Shell bin/sh must exist", "passwd", ""},
			{"pipu353", "{uid: 47353, gid: pipgnone}", "failed: Execution of '/usr/sbin/useradd -g pipgnone -u 47353 -M pipu353' returned 6: useradd: group 'pipgnone' does not exist", "passwd", ""},
			{"pipu353", "{groups: ['47205']}", "error: Parameter groups failed on User[pipu353]: Group names must be provided, not GID numbers.", "", ""},
			{"pipu353", "{groups: 'a,b'}", "error: Group names must be provided as an array, not a comma-separated list.", "", ""},
			{"pipu353", "{groups: ['']}", "error: Group names must not be empty", "", ""},
			{"pipu353", "{password_min_age: x}", "error: Parameter password_min_age failed on User[pipu353]: Password minimum age must be provided as a number.", "", ""},
			{"pipu353", "{password_max_age: x}", "error: Password maximum age must be provided as a number.", "", ""},
			{"pipu353", "{password_warn_days: x}", "error: Password warning days must be provided as a number.", "", ""},
			{"pipu353", "{expiry: '2030-1-2'}", "error: Parameter expiry failed on User[pipu353]: Expiry dates must be YYYY-MM-DD or the string \"absent\"", "", ""},
			{"pipu353", "{password: 'a:b'}", "error: Parameter password failed on User[pipu353]: Passwords cannot include ':'", "", ""},
			{"pipu353", "{password: \"a\\nroot\"}", "error: Passwords cannot include a newline", "", ""},
			{"pipu353", "{purge_ssh_keys: [relative]}", "error: Paths to keyfiles must be absolute, not relative", "", ""},
			{"pipu353", "{purge_ssh_keys: [1]}", "error: Each entry for purge_ssh_keys must be a string, not a Integer", "", ""},
			{"pipu353", "{ensure: role}", "error: Invalid value \"role\"", "", ""},
		}},
		{"parameters alone manage nothing", []string{"pipu354"}, nil, nil, []step{
			{"pipu354", "{system: true}", "unchanged", "passwd", ""},
			{"pipu354", "{ensure: absent}", "unchanged", "passwd", ""},
			{"pipu354", "{uid: 47354, noop: true}", "unchanged", "passwd", ""},
		}},
		{"the group named like the user is its primary group", []string{"pipu355"}, []string{"pipu355"},
			func(t *testing.T) { mkgroup(t, "pipu355", "47402") }, []step{
				{"pipu355", "{uid: 47355}", "changed", "id", "uid=47355(pipu355) gid=47402(pipu355) groups=47402(pipu355)"},
			}},
		{"duplicate uids", []string{"pipu356", "pipu357", "pipu358"}, nil, nil, []step{
			{"pipu356", "{uid: 47356}", "changed", "", ""},
			{"pipu357", "{uid: 47356, gid: 47356, allowdupe: true}", "changed", "passwd", "pipu357:x:47356:47356::/home/pipu357:/bin/sh"},
			{"pipu358", "{uid: 47356}", "failed: Execution of '/usr/sbin/useradd -u 47356 -M pipu358' returned 4: useradd: UID 47356 is not unique", "passwd", ""},
		}},
		{"system user", []string{"pipu359"}, nil, nil, []step{
			{"pipu359", "{ensure: present, system: true}", "changed", "", ""},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cleanup(t, c.users, c.groups)
			if c.setup != nil {
				c.setup(t)
			}
			run(t, typetest.New(t, []*applier.Type{user.Type}), c.steps)
		})
	}
}

// Everything at once, as Puppet creates it: one useradd, chage, chpasswd.
func TestCreateAll(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu360"}, []string{"pipg403", "pipg404"})
	mkgroup(t, "pipg403", "47403")
	mkgroup(t, "pipg404", "47404")
	home := filepath.Join(t.TempDir(), "h360")
	e := typetest.New(t, []*applier.Type{user.Type})
	params := "{uid: 47360, gid: 47403, groups: [pipg404], comment: C, home: " + home + ", shell: /bin/bash, " +
		"password: '$6$x$y', password_min_age: 2, password_max_age: 30, password_warn_days: 5, expiry: '2031-03-04', managehome: true}"
	res := e.Apply("user", "pipu360", params)
	require.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, "pipu360:x:47360:47403:C:"+home+":/bin/bash | pipu360:$6$x$y:"+lastChange(t, "pipu360")+":2:30:5::22342: | uid=47360(pipu360) gid=47403(pipg403) groups=47403(pipg403),47404(pipg404)",
		state(t, "pipu360"))
	// the home made from /etc/skel, owned by the user and its group
	for _, f := range []string{"", ".profile", ".bashrc"} {
		var st syscall.Stat_t
		require.NoError(t, syscall.Lstat(filepath.Join(home, f), &st), f)
		assert.Equal(t, [2]uint32{47360, 47403}, [2]uint32{st.Uid, st.Gid}, f)
	}
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipu360", params)))
	// the password never shows
	assert.NotContains(t, e.Log(), "$6$x$y")
	res = e.Apply("user", "pipu360", "{password: '$6$z$w'}")
	require.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "password: changed [redacted] to [redacted] (success)\n", typetest.Events(res))
	assert.Equal(t, "[redacted]", applier.FormatValue(res.Events[0].Previous))
	assert.NotContains(t, e.Log(), "$6$z$w")

	res = e.Apply("user", "pipu360", "{ensure: absent, managehome: true}")
	require.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "", passwd(t, "pipu360"))
	_, err := os.Stat(home)
	assert.True(t, os.IsNotExist(err), "home removed: %v", err)
}

// managehome leaves an existing directory as it is, as useradd does.
func TestManagehomeExisting(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu361"}, nil)
	home := filepath.Join(t.TempDir(), "h361")
	require.NoError(t, os.Mkdir(home, 0o755))
	e := typetest.New(t, []*applier.Type{user.Type})
	require.Equal(t, "changed", typetest.Summary(e.Apply("user", "pipu361", "{uid: 47361, home: "+home+", managehome: true}")))
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(home, &st))
	assert.Equal(t, uint32(0), st.Uid)
	entries, _ := os.ReadDir(home)
	assert.Empty(t, entries)
}

func lastChange(t *testing.T, name string) string {
	t.Helper()
	sh := strings.Split(strings.Split(state(t, name), " | ")[1], ":")
	require.GreaterOrEqual(t, len(sh), 3)
	return sh[2]
}

// purge_ssh_keys removes every key line of the files it names and keeps
// the rest; a link in the user's home is not followed.
func TestPurgeSSHKeys(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu362"}, nil)
	home := filepath.Join(reachableDir(t), "h362")
	e := typetest.New(t, []*applier.Type{user.Type})
	require.Equal(t, "changed", typetest.Summary(e.Apply("user", "pipu362", "{uid: 47362, home: "+home+", managehome: true}")))
	ssh := filepath.Join(home, ".ssh")
	require.NoError(t, os.Mkdir(ssh, 0o700))
	require.NoError(t, os.Chown(ssh, 47362, 47362))
	keys := filepath.Join(ssh, "authorized_keys")
	body := "# mine\nssh-ed25519 AAAAC3Nza one@host\n\nfrom=\"10.0.0.1\" ssh-rsa AAAAB3Nza two\nssh-rsa AAAAB3Nzb\nnot a key\n"
	require.NoError(t, os.WriteFile(keys, []byte(body), 0o640))
	require.NoError(t, os.Chown(keys, 47362, 47362))

	require.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipu362", "{purge_ssh_keys: false}")))
	res := e.Apply("user", "pipu362", "{purge_ssh_keys: true, noop: true}")
	assert.Equal(t, "unchanged", typetest.Summary(res))
	assert.Contains(t, typetest.Events(res), "one@host, two, "+keys+":unnamed-1")
	res = e.Apply("user", "pipu362", "{purge_ssh_keys: true}")
	require.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	got, err := os.ReadFile(keys)
	require.NoError(t, err)
	assert.Equal(t, "# mine\n\nnot a key\n", string(got))
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(keys, &st))
	assert.Equal(t, [3]uint32{47362, 47362, 0o640}, [3]uint32{st.Uid, st.Gid, st.Mode & 0o7777})
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipu362", "{purge_ssh_keys: true}")))

	// a list, with %h/ and ~/
	other := filepath.Join(home, "other_keys")
	require.NoError(t, os.WriteFile(other, []byte("ssh-rsa AAAA x\n"), 0o600))
	require.NoError(t, os.Chown(other, 47362, 47362))
	require.NoError(t, os.WriteFile(keys, []byte("ssh-rsa AAAA y\n"), 0o600))
	require.Equal(t, "changed", typetest.Summary(e.Apply("user", "pipu362", "{purge_ssh_keys: ['%h/other_keys', '~/.ssh/authorized_keys']}")))
	for _, f := range []string{other, keys} {
		got, _ := os.ReadFile(f)
		assert.Equal(t, "", string(got), f)
	}

	// a symbolic link is no key file: the file it points to is neither
	// read nor replaced
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("ssh-rsa AAAA z\n"), 0o600))
	require.NoError(t, os.Remove(keys))
	require.NoError(t, os.Symlink(secret, keys))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipu362", "{purge_ssh_keys: true}")))
	got, _ = os.ReadFile(secret)
	assert.Equal(t, "ssh-rsa AAAA z\n", string(got))
	target, err := os.Readlink(keys)
	require.NoError(t, err)
	assert.Equal(t, secret, target)
}

// An edit by another program is seen at once.
func TestOutsideChangeSeen(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu363"}, nil)
	e := typetest.New(t, []*applier.Type{user.Type})
	require.Equal(t, "changed", typetest.Summary(e.Apply("user", "pipu363", "{uid: 47363, comment: a}")))
	require.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipu363", "{uid: 47363, comment: a}")))
	require.NoError(t, exec.Command("usermod", "-c", "b", "pipu363").Run())
	res := e.Apply("user", "pipu363", "{uid: 47363, comment: a}")
	require.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "comment: comment changed 'b' to 'a' (success)\n", typetest.Events(res))
}
