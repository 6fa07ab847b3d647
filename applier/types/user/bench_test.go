package user_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/accounts"
	"github.com/pippet/pippet/applier/types/user"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol"
)

// BenchmarkSearch5000 lists every account with 5,000 more of them made
// for it (uids 61000-65999, removed after; root only):
//
//   - floor: reading /etc/passwd, /etc/shadow and /etc/group and parsing
//     them (accounts.Parse*), the least any listing must do;
//   - cold: the search verb as the receiver answers it (decoding the
//     line, the engine, the provider, encoding the answer line) with the
//     parsed files dropped first, so it reads and parses them too;
//   - warm: the same with the parsed files kept, as a receiver answering
//     a second search while the files are unchanged.
//
// The target is cold < 2 × floor.
func BenchmarkSearch5000(b *testing.B) {
	names := testutil.BulkUsers(b, "pipsearch", 61000, 5000)
	accounts.Drop()
	e := typetest.New(b, []*applier.Type{user.Type})
	line := `{"op":"search","type":"user"}`
	if res := e.ApplyLine(line); res.Failed {
		b.Fatal(res.Exception)
	}
	var buf []byte
	search := func(b *testing.B) {
		res := e.ApplyLine(line)
		if len(res.Instances) < len(names) {
			b.Fatalf("search lists %d, fewer than the %d made", len(res.Instances), len(names))
		}
		buf = protocol.AppendResult(buf[:0], &res, false)
	}
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range []struct {
				path  string
				parse func([]byte) error
			}{
				{accounts.PasswdFile, func(d []byte) error { _, err := accounts.ParseUsers(d); return err }},
				{accounts.ShadowFile, func(d []byte) error { _, err := accounts.ParseShadows(d); return err }},
				{accounts.GroupFile, func(d []byte) error { _, err := accounts.ParseGroups(d); return err }},
			} {
				data, err := os.ReadFile(f.path)
				if err != nil {
					b.Fatal(err)
				}
				if err := f.parse(data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			accounts.Drop()
			search(b)
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			search(b)
		}
	})
	// The reference: Puppet listing the same accounts (slow: run with
	// PIPPET_BENCH_PUPPET=1 and -benchtime 1x).
	b.Run("puppet", func(b *testing.B) {
		if os.Getenv("PIPPET_BENCH_PUPPET") != "1" {
			b.Skip("set PIPPET_BENCH_PUPPET=1 to time `puppet resource user`")
		}
		if _, err := exec.LookPath("puppet"); err != nil {
			b.Skip("puppet not installed")
		}
		for b.Loop() {
			out, err := exec.Command("puppet", "resource", "user").Output()
			if err != nil {
				b.Fatalf("puppet resource user: %v", err)
			}
			if n := bytes.Count(out, []byte("\nuser { ")) + 1; n < len(names) {
				b.Fatalf("puppet listed %d accounts, fewer than the %d made", n, len(names))
			}
		}
	})
	b.ReportMetric(float64(len(buf)), "answer-bytes")
}
