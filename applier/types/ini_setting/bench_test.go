package ini_setting_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pippet/pippet/protocol"
)

// benchFile is an INI file of 4 sections of 10 settings.
func benchFile(b *testing.B) string {
	var s strings.Builder
	s.WriteString("; generated\n")
	for i := range 4 {
		s.WriteString("[section" + strconv.Itoa(i) + "]\n")
		for j := range 10 {
			s.WriteString("key" + strconv.Itoa(j) + " = value " + strconv.Itoa(i*10+j) + "\n")
		}
		s.WriteString("\n")
	}
	p := filepath.Join(b.TempDir(), "config.ini")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkUnchanged: a setting already in the file, re-sent as the
// receiver re-sends a line it has seen (a Stable request).
func BenchmarkUnchanged(b *testing.B) {
	p := benchFile(b)
	e := engine()
	req := &protocol.Request{Type: "ini_setting", Title: "k", Stable: true,
		Params: map[string]any{"path": p, "section": "section2", "setting": "key5", "value": "value 25"}}
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
