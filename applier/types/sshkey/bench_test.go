package sshkey_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/sshkey"
	"github.com/pippet/pippet/applier/typetest"
)

// BenchmarkUnchanged: requests naming 1,000 different keys of one file,
// all in sync (the cache path: a stat of the file).
func BenchmarkUnchanged(b *testing.B) {
	target := filepath.Join(b.TempDir(), "known_hosts")
	var f strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&f, "h%d ssh-ed25519 %s\n", i, ed)
	}
	if err := os.WriteFile(target, []byte(f.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	e := typetest.New(b, []*applier.Type{sshkey.Type})
	lines := make([]string, 1000)
	for i := range lines {
		lines[i] = `{"type":"sshkey","title":"h` + strconv.Itoa(i) + `","params":"{type: ed25519, key: ` + ed + `, target: ` + target + `}"}`
	}
	e.BenchUnchanged(b, lines)
}
