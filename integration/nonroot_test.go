package integration

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nobody is the account the state directory test runs the receiver as when
// the tests run as root.
const nobody = 65534

// A user other than root who gives no --state-dir keeps backups in a
// directory of their own: $XDG_STATE_HOME/pippet, else
// ~/.local/state/pippet. Run as root, the receiver runs as uid 65534 (the
// machine's /var/lib/pippet is never touched); run as anyone else, as
// that user.
func TestDefaultStateDirPerUser(t *testing.T) {
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		uid, gid = nobody, nobody
	}
	// Everything below is reachable by uid: the binary, the home, the file.
	top, err := os.MkdirTemp("", "pippet-statedir-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(top) })
	require.NoError(t, os.Chmod(top, 0o755))
	bin := filepath.Join(top, "receiver")
	copyFile(t, receiverBin, bin, 0o755)

	for _, tt := range []struct {
		name string
		env  func(home string) []string
		want func(home string) string
	}{
		{"XDG_STATE_HOME", func(home string) []string {
			return []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "xdg")}
		}, func(home string) string { return filepath.Join(home, "xdg", "pippet") }},
		{"HOME", func(home string) []string { return []string{"HOME=" + home} },
			func(home string) string { return filepath.Join(home, ".local", "state", "pippet") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(top, tt.name)
			require.NoError(t, os.Mkdir(home, 0o755))
			require.NoError(t, os.Chown(home, uid, gid))
			target := filepath.Join(home, "motd")
			require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
			require.NoError(t, os.Chown(target, uid, gid))

			cmd := exec.Command(bin, "--no-banner")
			cmd.Env = append(tt.env(home), "PATH=/usr/bin:/bin")
			if os.Geteuid() == 0 {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
			}
			cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"type":"file","title":%q,"params":"{content: new, backup: main}"}`+"\n", target))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			require.NoError(t, cmd.Run(), errb.String())
			assert.Contains(t, out.String(), `"changed":true`, errb.String())
			assert.NotContains(t, out.String(), `"failed":true`)

			// The old content is in the bucket under the per-user directory.
			matches, err := filepath.Glob(filepath.Join(tt.want(home), "bucket", "*", "*", "contents"))
			require.NoError(t, err)
			require.Len(t, matches, 1, "one backup under %s", tt.want(home))
			b, err := os.ReadFile(matches[0])
			require.NoError(t, err)
			assert.Equal(t, "old\n", string(b))
		})
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// rootOnlyParams are the request params a user other than root cannot
// apply: ownership and running a command as someone else.
var rootOnlyParams = regexp.MustCompile(`\b(owner|group|user): `)

// needsRoot says why an oracle case can only run as root ("" when it
// can run as anyone): it sets an owner, a group or a user, which only
// root may change to another account.
func needsRoot(steps []string) string {
	for _, s := range steps {
		if m := rootOnlyParams.FindStringSubmatch(s); m != nil {
			return "sets " + m[1] + ", which needs root"
		}
	}
	return ""
}

// TestResourceUserUnprivileged: a user who may not read /etc/shadow, with
// an ordinary user's PATH (no sbin directory), finds an account as puppet
// resource shows it: without the password fields. It failed on
// "/etc/shadow: permission denied" and printed an empty resource, and a
// PATH without /usr/sbin found no provider (useradd not found) where
// Puppet adds the sbin directories itself.
func TestResourceUserUnprivileged(t *testing.T) {
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		uid, gid = nobody, nobody
	}
	top, err := os.MkdirTemp("", "pippet-nonroot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(top) })
	require.NoError(t, os.Chmod(top, 0o755))
	bin := filepath.Join(top, "receiver")
	copyFile(t, receiverBin, bin, 0o755)

	for _, args := range [][]string{{"resource", "user", "root"}, {"resource", "--yaml", "user"}} {
		cmd := exec.Command(bin, append(args[:len(args):len(args)], "--state-dir", filepath.Join(top, "state"))...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + top}
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "%v: %s", args, errb.String())
		assert.Empty(t, errb.String(), "%v", args)
		if args[1] == "user" {
			assert.Contains(t, out.String(), "user { 'root':\n  ensure   => 'present',\n")
			assert.Contains(t, out.String(), "  uid      => 0,\n")
			assert.Contains(t, out.String(), "provider => 'useradd'")
		} else {
			assert.Contains(t, out.String(), "'root': {ensure: 'present'")
		}
		assert.NotContains(t, out.String(), "password", "%v: the shadow fields are left out", args)
	}
}
