package sshauthkey_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	sshauthkey "github.com/pippet/pippet/applier/types/ssh_authorized_key"
	"github.com/pippet/pippet/applier/typetest"
)

const (
	ed  = "AAAAC3NzaC1lZDI1NTE5AAAAIBg4Ibu0wzfMGPGKSbJ1y7ItLm0uX4bGQm1k2JHbmVYk"
	rsa = "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDBvh3VmYp2EaV"
)

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: writes files owned by a test account it creates")
	}
}

// testUser creates the account name, with a uid free from uid up to
// 47599 (any free one when another test holds them all) and its home in
// a temporary directory, removed when the test ends. It returns the home
// and the uid.
func testUser(t testing.TB, name string, uid int) (string, int) {
	t.Helper()
	needRoot(t)
	home := filepath.Join(t.TempDir(), name)
	exec.Command("userdel", name).Run()
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	var out []byte
	var err error
	for ; uid <= 47599; uid++ {
		if _, taken := user.LookupId(strconv.Itoa(uid)); taken == nil {
			continue
		}
		out, err = exec.Command("useradd", "-u", strconv.Itoa(uid), "-U", "-M", "-d", home, name).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not unique") {
			break
		}
	}
	if uid > 47599 {
		out, err = exec.Command("useradd", "-U", "-M", "-d", home, name).CombinedOutput()
	}
	require.NoError(t, err, "%s", out)
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	require.NoError(t, os.Mkdir(home, 0o755))
	require.NoError(t, os.Chown(home, uid, gid))
	return home, uid
}

// owner renders a path's mode and owner as `stat -c '%a %u %g'` does.
func owner(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return strconv.FormatUint(uint64(st.Mode&0o7777), 8) + " " + strconv.Itoa(int(st.Uid)) + " " + strconv.Itoa(int(st.Gid))
}

func gidOf(t *testing.T, name string) string {
	u, err := user.Lookup(name)
	require.NoError(t, err)
	return u.Gid
}

type step struct {
	title, params string
	want          string // typetest.Summary
	events        string // typetest.Events, when not ""
	file          string // the target's body afterwards ("-": unchecked)
}

func run(t *testing.T, e *typetest.Engine, target string, steps []step) {
	t.Helper()
	for i, s := range steps {
		e.Step(i, "ssh_authorized_key", s.title, strings.ReplaceAll(s.params, "TARGET", target), s.want, s.events)
		if s.file != "-" {
			assert.Equal(t, s.file, parsedfiletest.Body(t, target), "step %d", i+1)
		}
	}
}

func engine(t *testing.T) *typetest.Engine {
	return typetest.New(t, []*applier.Type{sshauthkey.Type})
}

// Recorded with puppet apply (Puppet 7.23, sshkeys_core) for a user's
// default file: .ssh made 0700 and the file 0600, both the user's.
func TestRecordedUserHome(t *testing.T) {
	home, uid := testUser(t, "pipcronk1", 47501)
	ids := strconv.Itoa(uid) + " " + gidOf(t, "pipcronk1")
	target := filepath.Join(home, ".ssh", "authorized_keys")
	const u = "{user: pipcronk1, "
	run(t, engine(t), target, []step{
		{"k1@h", u + "type: rsa, key: " + rsa + "}", "changed", "ensure: created (success)\n", "ssh-rsa " + rsa + " k1@h\n"},
		{"k1@h", u + "type: ssh-rsa, key: " + rsa + "}", "unchanged", "", "ssh-rsa " + rsa + " k1@h\n"},
		{"k1@h", u + "type: ssh-ed25519, key: " + ed + ", options: [no-pty, 'command=\"/bin/x y\"']}", "changed",
			"type: type changed 'ssh-rsa' to 'ssh-ed25519' (success)\n" +
				"key: key changed '" + rsa + "' to '" + ed + "' (success)\n" +
				"options: options changed ['absent'] to ['no-pty', 'command=\"/bin/x y\"'] (success)\n",
			"no-pty,command=\"/bin/x y\" ssh-ed25519 " + ed + " k1@h\n"},
		{"k1@h", u + "type: ssh-ed25519, key: " + ed + ", options: no-pty}", "changed",
			"options: options changed ['no-pty', 'command=\"/bin/x y\"'] to ['no-pty'] (success)\n",
			"no-pty ssh-ed25519 " + ed + " k1@h\n"},
		{"k1@h", u + "type: ssh-ed25519, key: " + ed + ", options: absent}", "changed",
			"options: options changed ['no-pty'] to ['absent'] (success)\n", "ssh-ed25519 " + ed + " k1@h\n"},
		{"k2@h", u + "type: ssh-ed25519, key: " + ed + "}", "changed", "", "ssh-ed25519 " + ed + " k1@h\nssh-ed25519 " + ed + " k2@h\n"},
		{"k1@h", u + "ensure: absent}", "changed", "ensure: removed (success)\n", "ssh-ed25519 " + ed + " k2@h\n"},
		{"k1@h", u + "ensure: absent}", "unchanged", "", "ssh-ed25519 " + ed + " k2@h\n"},
	})
	assert.Equal(t, "700 "+ids, owner(t, filepath.Dir(target)))
	assert.Equal(t, "600 "+ids, owner(t, target))
}

// Recorded: an existing file's other keys, comments, blank lines, an
// unnamed key and a protocol 1 key are kept (records re-rendered: an
// unnamed key keeps a trailing space, as Puppet writes it); options not
// given are removed; the file becomes 0600.
func TestRecordedExistingFile(t *testing.T) {
	needRoot(t)
	target := filepath.Join(t.TempDir(), "ak")
	require.NoError(t, os.WriteFile(target, []byte("# c1\n\nssh-rsa "+rsa+"\nno-pty,command=\"a b\"  ssh-ed25519 "+ed+" other@x\nssh-ed25519 "+ed+" k3@h\n  ssh-rsa "+rsa+" spaced lead\n1024 35 1234 v1key\n"), 0o644))
	const kept = "# c1\n\nssh-rsa " + rsa + " \n"
	const rest = "ssh-ed25519 " + ed + " k3@h\nssh-rsa " + rsa + " spaced lead\n1024 35 1234 v1key\nssh-ed25519 " + ed + " k4@h\n"
	run(t, engine(t), target, []step{
		{"k3@h", "{user: root, type: ed25519, key: " + ed + ", target: TARGET}", "unchanged", "", "-"},
		{"k4@h", "{user: root, type: ed25519, key: " + ed + ", target: TARGET}", "changed", "",
			kept + "no-pty,command=\"a b\" ssh-ed25519 " + ed + " other@x\n" + rest},
		{"other@x", "{user: root, type: ed25519, key: " + ed + ", target: TARGET}", "changed",
			"options: options changed ['no-pty', 'command=\"a b\"'] to ['absent'] (success)\n",
			kept + "ssh-ed25519 " + ed + " other@x\n" + rest},
		{"other@x", "{user: root, type: ed25519, key: " + ed + ", target: TARGET, options: [no-pty, 'command=\"a b\"']}", "changed",
			"options: options changed ['absent'] to ['no-pty', 'command=\"a b\"'] (success)\n",
			kept + "no-pty,command=\"a b\" ssh-ed25519 " + ed + " other@x\n" + rest},
	})
	assert.Equal(t, "600 0 0", owner(t, target))
}

// Recorded: refusals up front, and failures when applying.
func TestRecordedRefusals(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "ak")
	run(t, engine(t), target, []step{
		{"k7@h", "{type: ed25519, key: " + ed + "}", "error: Validation of Ssh_authorized_key[k7@h] failed: Attribute 'user' or 'target' is mandatory", "", ""},
		// Puppet: "created", then the write fails.
		{"k7@h", "{type: ed25519, key: " + ed + ", target: TARGET}", "failed: could not apply the changes: Cannot write SSH authorized keys without user", "", ""},
		{"k7@h", "{user: root, type: ed25519, key: " + ed + " x, target: TARGET}", "error: Parameter key failed on Ssh_authorized_key[k7@h]: Key must not contain whitespace: " + ed + " x", "", ""},
		{"k7@h", "{user: root, type: ed25519, key: " + ed + ", options: 'a b', target: TARGET}", "error: Parameter options failed on Ssh_authorized_key[k7@h]: Option a b is not valid. A single option must either be of the form 'option' or 'option=\"value\"'. Multiple options must be provided as an array", "", ""},
		{"k7@h", "{user: root, type: ed25519, key: " + ed + ", options: 'a=b', target: TARGET}", "error: Parameter options failed on Ssh_authorized_key[k7@h]: Option a=b is not valid. A single option must either be of the form 'option' or 'option=\"value\"'. Multiple options must be provided as an array", "", ""},
		{"k7@h", "{user: root, type: foo, key: " + ed + ", target: TARGET}", "error: Parameter type failed on Ssh_authorized_key[k7@h]: Invalid value \"foo\". Valid values are ssh-dss, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, ssh-ed25519, sk-ecdsa-sha2-nistp256@openssh.com, sk-ssh-ed25519@openssh.com, ssh-rsa-cert-v01@openssh.com, ssh-ed25519-cert-v01@openssh.com, ssh-dss-cert-v01@openssh.com, ecdsa-sha2-nistp256-cert-v01@openssh.com, ecdsa-sha2-nistp384-cert-v01@openssh.com, ecdsa-sha2-nistp521-cert-v01@openssh.com.", "", ""},
		{"k7@h", "{user: root, key: " + ed + ", target: TARGET}", "failed: change from 'absent' to 'present' failed: Field 'type' is required", "", ""},
		{"k7@h", "{user: root, type: ed25519, target: TARGET}", "failed: change from 'absent' to 'present' failed: Field 'key' is required", "", ""},
		// Puppet answers "created" and fails to write (the oracle's authkey-nosuchuser).
		{"k7@h", "{user: nosuchuserx, type: ed25519, key: " + ed + "}", "failed: change from 'absent' to 'present' failed: User 'nosuchuserx' does not exist", "", ""},
		{"k7@h", "{user: nosuchuserx, type: ed25519, key: " + ed + ", target: TARGET}", "failed: could not apply the changes: User 'nosuchuserx' does not exist", "", ""},
		{"k7@h", "{user: root, type: ed25519, key: " + ed + ", target: " + dir + "/no/such/ak}", "failed: could not apply the changes: writing " + dir + "/no/such/ak: mkdir " + dir + "/no/such: no such file or directory", "", ""},
		{"k 8", "{user: root, type: ed25519, key: " + ed + ", target: TARGET}", "changed", "", "ssh-ed25519 " + ed + " k 8\n"},
		{"k8", "{user: root, ensure: absent, target: " + dir + "/ak3}", "unchanged", "", "-"},
		// Not in Puppet: a line break in the name or an option would write
		// lines of the caller's choosing.
		{"k9\nssh-rsa x evil", "{user: root, type: ed25519, key: " + ed + ", target: TARGET}", "error: Parameter name failed on Ssh_authorized_key[k9\nssh-rsa x evil]: Name must not contain a line break", "", "-"},
		{"k9", "{user: root, type: ed25519, key: " + ed + ", options: \"a=\\\"x\\nssh-rsa y\\\"\", target: TARGET}", "error: Parameter options failed on Ssh_authorized_key[k9]: Option a=\"x\nssh-rsa y\" is not valid. A single option must either be of the form 'option' or 'option=\"value\"'. Multiple options must be provided as an array", "", "-"},
	})
	_, err := os.Stat(filepath.Join(dir, "ak3"))
	assert.True(t, os.IsNotExist(err), "removing a key from a missing file creates nothing")
}

// Recorded: a file Puppet can't parse fails every resource of it, and
// is left as it was.
func TestRecordedUnparsable(t *testing.T) {
	needRoot(t)
	target := filepath.Join(t.TempDir(), "ak")
	content := "garbage line here\nssh-ed25519 " + ed + " k5@h\n"
	require.NoError(t, os.WriteFile(target, []byte(content), 0o644))
	e := engine(t)
	for _, name := range []string{"k5@h", "k6@h"} {
		res := e.Apply("ssh_authorized_key", name, "{user: root, type: ed25519, key: "+ed+", target: "+target+"}")
		assert.Equal(t, "failed: Could not evaluate Ssh_authorized_key["+name+"]: could not parse line 1 of "+target, typetest.Summary(res))
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, content, string(b))
}

// Recorded: as the user (drop_privileges, the default), a file the user
// cannot write is not written; Puppet fails with "Permission denied".
func TestRecordedUserCannotWrite(t *testing.T) {
	home, uid := testUser(t, "pipcronk2", 47502)
	ssh := filepath.Join(home, ".ssh")
	target := filepath.Join(ssh, "authorized_keys")
	require.NoError(t, os.Mkdir(ssh, 0o755))
	require.NoError(t, os.Chown(ssh, uid, 0))
	require.NoError(t, os.WriteFile(target, []byte("ssh-ed25519 "+ed+" k9@h\n"), 0o644))
	e := engine(t)
	res := e.Apply("ssh_authorized_key", "k9@h", "{user: pipcronk2, type: ed25519, key: "+ed+"}")
	assert.Equal(t, "unchanged", typetest.Summary(res))
	res = e.Apply("ssh_authorized_key", "k10@h", "{user: pipcronk2, type: ed25519, key: "+ed+"}")
	assert.Equal(t, "failed: could not apply the changes: writing "+target+": "+target+" is not writable by pipcronk2: permission denied", typetest.Summary(res))
	assert.Equal(t, "644 0 0", owner(t, target))
}

// An attacker with the user's shell points .ssh at a directory of
// root's: nothing is written there, as nothing would be by Puppet writing
// with the user's rights.
func TestUserCannotRedirectTheWrite(t *testing.T) {
	home, uid := testUser(t, "pipcronk3", 47503)
	rootDir := t.TempDir() // root's, 0700
	require.NoError(t, os.WriteFile(filepath.Join(rootDir, "authorized_keys"), []byte("ssh-rsa "+rsa+" root@x\n"), 0o600))
	require.NoError(t, os.Symlink(rootDir, filepath.Join(home, ".ssh")))
	e := engine(t)
	res := e.Apply("ssh_authorized_key", "evil@h", "{user: pipcronk3, type: ed25519, key: "+ed+"}")
	assert.True(t, res.Failed, typetest.Summary(res))
	// Refused when read already: root's file is not the user's to read,
	// so the answer must not tell whether a key is in it.
	assert.Contains(t, res.Exception, "is not readable by pipcronk3")
	res = e.Apply("ssh_authorized_key", "root@x", "{user: pipcronk3, type: ssh-rsa, key: "+rsa+"}")
	assert.True(t, res.Failed, "a key of root's file must not answer unchanged: %s", typetest.Summary(res))
	b, err := os.ReadFile(filepath.Join(rootDir, "authorized_keys"))
	require.NoError(t, err)
	assert.Equal(t, "ssh-rsa "+rsa+" root@x\n", string(b))
	assert.Equal(t, "600 0 0", owner(t, filepath.Join(rootDir, "authorized_keys")))

	// The file itself a link to root's file, in the user's own .ssh.
	require.NoError(t, os.Remove(filepath.Join(home, ".ssh")))
	require.NoError(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.Chown(filepath.Join(home, ".ssh"), uid, uid))
	require.NoError(t, os.Symlink(filepath.Join(rootDir, "authorized_keys"), filepath.Join(home, ".ssh", "authorized_keys")))
	res = e.Apply("ssh_authorized_key", "evil@h", "{user: pipcronk3, type: ed25519, key: "+ed+"}")
	assert.True(t, res.Failed, typetest.Summary(res))
	assert.Contains(t, res.Exception, "it is a symbolic link and Ssh_authorized_key[evil@h]'s keys are read as pipcronk3")
	res = e.Apply("ssh_authorized_key", "root@x", "{user: pipcronk3, type: ssh-rsa, key: "+rsa+"}")
	assert.True(t, res.Failed, "a key of the linked file must not answer unchanged: %s", typetest.Summary(res))
	// Nor a link to a file the user may read (Puppet, reading as the
	// user, would follow it; the write refuses it, so the read does too).
	require.NoError(t, os.Chmod(filepath.Join(rootDir, "authorized_keys"), 0o644))
	require.NoError(t, os.Chmod(rootDir, 0o755))
	res = e.Apply("ssh_authorized_key", "root@x", "{user: pipcronk3, type: ssh-rsa, key: "+rsa+"}")
	assert.Contains(t, res.Exception, "it is a symbolic link")
	b, err = os.ReadFile(filepath.Join(rootDir, "authorized_keys"))
	require.NoError(t, err)
	assert.Equal(t, "ssh-rsa "+rsa+" root@x\n", string(b))
}

// drop_privileges false: written as root, only on a trusted path
// (Puppet, by a slip in its check, refuses every path).
func TestDropPrivilegesFalse(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	e := engine(t)
	res := e.Apply("ssh_authorized_key", "k@h", "{user: root, type: ed25519, key: "+ed+", drop_privileges: false, target: "+dir+"/ak}")
	assert.Equal(t, "changed", typetest.Summary(res))
	open := filepath.Join(dir, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	res = e.Apply("ssh_authorized_key", "k@h", "{user: root, type: ed25519, key: "+ed+", drop_privileges: false, target: "+open+"/ak}")
	assert.Equal(t, "failed: could not apply the changes: writing "+open+"/ak: drop_privileges is false but the target path is not trusted", typetest.Summary(res))
}

// The file is kept parsed while unchanged; an edit elsewhere is seen.
func TestEditedElsewhere(t *testing.T) {
	needRoot(t)
	target := filepath.Join(t.TempDir(), "ak")
	e := engine(t)
	req := "{user: root, type: ed25519, key: " + ed + ", target: " + target + "}"
	assert.Equal(t, "changed", typetest.Summary(e.Apply("ssh_authorized_key", "k@h", req)))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("ssh_authorized_key", "k@h", req)))
	require.NoError(t, os.WriteFile(target, []byte("ssh-ed25519 other k@h\n"), 0o600))
	res := e.Apply("ssh_authorized_key", "k@h", req)
	assert.Equal(t, "key: key changed 'other' to '"+ed+"' (success)\n", typetest.Events(res))
}

// noop reports what would change and writes nothing, not even `.ssh`.
func TestNoop(t *testing.T) {
	home, _ := testUser(t, "pipcronk4", 47504)
	target := filepath.Join(home, ".ssh", "authorized_keys")
	run(t, engine(t), target, []step{
		{"kn@h", "{user: pipcronk4, type: ed25519, key: " + ed + ", noop: true}", "unchanged",
			"ensure: current_value 'absent', should be 'present' (noop) (noop)\n", ""},
	})
	_, err := os.Stat(filepath.Dir(target))
	assert.True(t, os.IsNotExist(err), "no .ssh made in noop")
}
