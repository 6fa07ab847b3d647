package facts_test

import (
	"context"
	"testing"

	"github.com/pippet/pippet/agent/facts"
)

// BenchmarkGather gathers this machine's core facts (no facts.d
// directories, so no scripts run): what an agent run pays for its facts.
func BenchmarkGather(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		f, _ := facts.Gather(ctx, facts.Options{ExternalDirs: []string{}})
		if f["os"] == nil {
			b.Fatal("no os fact")
		}
	}
}
