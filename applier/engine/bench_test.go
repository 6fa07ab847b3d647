package engine_test

import (
	"context"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

// BenchmarkApplyInSync measures the engine's own overhead on a resource
// that needs no change: validation, munging, provider selection, one Get.
func BenchmarkApplyInSync(b *testing.B) {
	p := mock.NewProvider(map[string]any{"ensure": "present", "size": int64(3), "colour": "red"})
	reg := applier.NewRegistry()
	reg.Add(mock.Widget(p))
	e := engine.New(reg, &applier.Env{Facts: applier.Facts{}, Features: map[string]bool{"posix": true}})
	r := &protocol.Request{Type: "widget", Title: "/a/b", Params: map[string]any{"ensure": "present", "size": int64(3), "force": true}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p.Calls = p.Calls[:0]
		if res := e.Apply(ctx, r); res.Changed || res.Failed {
			b.Fatal(res)
		}
	}
}
