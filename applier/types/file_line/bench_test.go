package file_line_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pippet/pippet/protocol"
)

// benchFile is a 40-line config file, like a small sshd_config.
func benchFile(b *testing.B) string {
	var s strings.Builder
	for i := range 40 {
		s.WriteString("Option" + string(rune('A'+i%26)) + strings.Repeat("x", i%7) + " value number " + string(rune('0'+i%10)) + "\n")
	}
	s.WriteString("PermitRootLogin no\n")
	p := filepath.Join(b.TempDir(), "config")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkUnchanged: a file_line already in the file, with a match, re-sent
// as the receiver re-sends a line it has seen (a Stable request).
func BenchmarkUnchanged(b *testing.B) {
	p := benchFile(b)
	e := engine()
	req := &protocol.Request{Type: "file_line", Title: "root", Stable: true,
		Params: map[string]any{"path": p, "line": "PermitRootLogin no", "match": "^#?PermitRootLogin"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := e.Apply(ctx, req); res.Changed || res.Failed || res.Error {
			b.Fatalf("%+v", res)
		}
	}
}

// BenchmarkReadFloor is the floor: reading the same file.
func BenchmarkReadFloor(b *testing.B) {
	p := benchFile(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}
