package user_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/user"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/applier/typetest/puppetcase"
	"github.com/pippet/pippet/protocol"
)

// reachableDir is a temporary directory every user may pass through (a
// test's temporary directories are root's, mode 0700).
func reachableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	return dir
}

// userWithKeys makes the account name (uid) with a home in dir holding
// .ssh/authorized_keys with keys, all the user's, as sshd wants them.
func userWithKeys(t *testing.T, e *typetest.Engine, dir, name string, uid int, keys string) (home, file string) {
	t.Helper()
	home = filepath.Join(dir, name)
	require.Equal(t, "changed", typetest.Summary(e.Apply("user", name, "{uid: "+itoa(uid)+", home: "+home+", managehome: true}")))
	if keys == "" {
		return home, ""
	}
	ssh := filepath.Join(home, ".ssh")
	require.NoError(t, os.Mkdir(ssh, 0o700))
	require.NoError(t, os.Chown(ssh, uid, uid))
	file = filepath.Join(ssh, "authorized_keys")
	require.NoError(t, os.WriteFile(file, []byte(keys), 0o600))
	require.NoError(t, os.Chown(file, uid, uid))
	return home, file
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestPurgeSSHKeysActsAsTheUser: purge_ssh_keys reads and writes key
// files where the user could, as Puppet's purge (through
// ssh_authorized_key, as the user) does: a symbolic link along the path
// that the user could have made (their ~/.ssh pointing at another
// account's, or at root's) is not followed, so another account's keys are
// neither listed in the answer nor removed; a directory the user cannot
// pass through hides the file, as it would from the user.
func TestPurgeSSHKeysActsAsTheUser(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu370", "pipu371"}, nil)
	dir := reachableDir(t)
	e := typetest.New(t, []*applier.Type{user.Type})
	victimKeys := "ssh-ed25519 AAAAC3Nzavictim victim@host\n"
	victimHome, victimFile := userWithKeys(t, e, dir, "pipu370", 47370, victimKeys)
	require.NoError(t, os.Chmod(victimHome, 0o755))
	attackerHome, _ := userWithKeys(t, e, dir, "pipu371", 47371, "")

	// The attacker's ~/.ssh is a link to the victim's .ssh (0700, which
	// the attacker cannot even read).
	link := filepath.Join(attackerHome, ".ssh")
	require.NoError(t, os.Symlink(filepath.Join(victimHome, ".ssh"), link))
	require.NoError(t, os.Lchown(link, 47371, 47371))
	for _, params := range []string{"{purge_ssh_keys: true, noop: true}", "{purge_ssh_keys: true}", "{purge_ssh_keys: ['~/.ssh/authorized_keys']}"} {
		res := e.Apply("user", "pipu371", params)
		assert.NotContains(t, typetest.Events(res)+res.Exception, "victim@host", params)
		assert.NotEqual(t, "changed", typetest.Summary(res), params)
	}
	got, err := os.ReadFile(victimFile)
	require.NoError(t, err)
	assert.Equal(t, victimKeys, string(got), "the victim's keys are untouched")

	// The same link made by root in a directory only root may write is
	// root's choice, and followed: root's own purge of a file it placed.
	require.NoError(t, os.Remove(link))
	rootDir := filepath.Join(dir, "rootonly")
	require.NoError(t, os.Mkdir(rootDir, 0o755))
	require.NoError(t, os.Symlink(victimHome, filepath.Join(rootDir, "home")))
	res := e.Apply("user", "pipu370", "{purge_ssh_keys: ['"+filepath.Join(rootDir, "home", ".ssh", "authorized_keys")+"']}")
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res)+res.Exception)
	got, err = os.ReadFile(victimFile)
	require.NoError(t, err)
	assert.Equal(t, "", string(got))
}

// TestPurgeSSHKeysLeadingBlanks: a key line starting with spaces or tabs
// is a key to sshd, so it is purged too, and the next run is in sync.
func TestPurgeSSHKeysLeadingBlanks(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu372"}, nil)
	dir := reachableDir(t)
	e := typetest.New(t, []*applier.Type{user.Type})
	body := "# keep\n ssh-ed25519 AAAAC3Nzaone one@host\n\tssh-rsa AAAAB3Nzatwo two@host\n \t from=\"10.0.0.1\" ssh-rsa AAAAB3Nzathree three\n  # a comment\nnot a key\n"
	_, file := userWithKeys(t, e, dir, "pipu372", 47372, body)
	res := e.Apply("user", "pipu372", "{purge_ssh_keys: true}")
	require.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Contains(t, typetest.Events(res), "one@host, two@host, three")
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "# keep\n  # a comment\nnot a key\n", string(got))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipu372", "{purge_ssh_keys: true}")))
}

// TestPurgeSSHKeysLeavesManagedKeys: the keys the run manages (an
// ssh_authorized_key of the catalog or of the declared run, by title or
// alias) are not purged, as Puppet's purge makes no removal for a key its
// catalog holds; the stray ones are, and the next run is in sync (before:
// every run purged the managed key, the key's resource wrote it back).
func TestPurgeSSHKeysLeavesManagedKeys(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipu373"}, nil)
	dir := reachableDir(t)
	e := typetest.New(t, []*applier.Type{user.Type})
	body := "ssh-ed25519 AAAAC3Nzakept kept@host\nssh-rsa AAAAB3Nzastray stray@host\nssh-rsa AAAAB3Nzanoname\n"
	_, file := userWithKeys(t, e, dir, "pipu373", 47373, body)
	run := puppetcase.Run{
		{Type: "user", Title: "pipu373", Params: map[string]any{"purge_ssh_keys": true}},
		{Type: "ssh_authorized_key", Title: "kept@host", Params: map[string]any{"user": "pipu373", "type": "ssh-ed25519", "key": "AAAAC3Nzakept"}},
		{Type: "ssh_authorized_key", Title: file + ":unnamed-1", Params: map[string]any{"user": "pipu373", "type": "ssh-rsa", "key": "AAAAB3Nzanoname"}},
	}
	ctx := applier.WithRun(context.Background(), run)
	req := func() *protocol.Request {
		return &protocol.Request{Type: "user", Title: "pipu373", Params: map[string]any{"purge_ssh_keys": true}}
	}
	res := e.Engine.Apply(ctx, req())
	require.Equal(t, "changed", typetest.Summary(res), typetest.Events(res)+res.Exception)
	assert.Contains(t, typetest.Events(res), "purged unmanaged SSH keys: stray@host")
	assert.NotContains(t, typetest.Events(res), "kept@host")
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "ssh-ed25519 AAAAC3Nzakept kept@host\nssh-rsa AAAAB3Nzanoname\n", string(got))
	again := e.Engine.Apply(ctx, req())
	assert.Equal(t, "unchanged", typetest.Summary(again), typetest.Events(again))
}
