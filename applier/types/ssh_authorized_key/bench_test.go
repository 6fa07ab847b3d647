package sshauthkey_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pippet/pippet/applier"
	sshauthkey "github.com/pippet/pippet/applier/types/ssh_authorized_key"
	"github.com/pippet/pippet/applier/typetest"
)

// BenchmarkUnchanged: requests naming 1,000 different keys of one file,
// all in sync (the cache path: a stat of the file). With a user and no
// target, /etc/passwd is stat'ed too (BenchmarkUnchangedUserHome).
func BenchmarkUnchanged(b *testing.B) {
	target := filepath.Join(b.TempDir(), "authorized_keys")
	benchKeys(b, target, -1, func(i int) string {
		return `{user: root, type: ed25519, key: ` + ed + `, target: ` + target + `}`
	})
}

// BenchmarkUnchangedUserHome: the user's default file (a test account's).
func BenchmarkUnchangedUserHome(b *testing.B) {
	home, uid := testUser(b, "pipcronk9", 47509)
	ssh := filepath.Join(home, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.Chown(ssh, uid, -1); err != nil {
		b.Fatal(err)
	}
	benchKeys(b, filepath.Join(ssh, "authorized_keys"), uid, func(i int) string {
		return `{user: pipcronk9, type: ed25519, key: ` + ed + `}`
	})
}

// benchKeys fills target with 1,000 keys (owned by uid unless it is -1)
// and applies requests naming them, in sync.
func benchKeys(b *testing.B, target string, uid int, params func(i int) string) {
	var f strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&f, "ssh-ed25519 %s k%d@h\n", ed, i)
	}
	if err := os.WriteFile(target, []byte(f.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Chown(target, uid, -1); err != nil {
		b.Fatal(err)
	}
	e := typetest.New(b, []*applier.Type{sshauthkey.Type})
	lines := make([]string, 1000)
	for i := range lines {
		lines[i] = `{"type":"ssh_authorized_key","title":"k` + strconv.Itoa(i) + `@h","params":"` + params(i) + `"}`
	}
	e.BenchUnchanged(b, lines)
}
