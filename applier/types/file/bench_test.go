package file_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/protocol"
)

// BenchmarkUnchanged is the hot path of issue 6: a file already in sync
// with its content and mode.
func BenchmarkUnchanged(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "motd")
	content := "Welcome to pippet\nline two\n"
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	reg := applier.NewRegistry()
	reg.Add(file.Type)
	e := engine.New(reg, &applier.Env{Options: applier.Options{StateDir: dir}})
	req := &protocol.Request{Type: "file", Title: p}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req.Params = map[string]any{"ensure": "file", "content": content, "mode": "0644"}
		res := e.Apply(ctx, req)
		if res.Changed || res.Failed {
			b.Fatalf("%+v", res)
		}
	}
}
