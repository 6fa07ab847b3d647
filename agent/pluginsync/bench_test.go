package pluginsync_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/pippet/pippet/agent/pluginsync"
)

// BenchmarkSyncUnchanged syncs 200 plugins (20 directories of 10 files)
// that are already in place from a fake Puppet Server on loopback: what
// a converged agent pays for pluginsync (two file_metadatas requests, a
// digest of every local file, no download).
func BenchmarkSyncUnchanged(b *testing.B) {
	f := newFixture(b)
	for d := 0; d < 20; d++ {
		for i := 0; i < 10; i++ {
			put(b, f.plugins, filepath.Join(fmt.Sprintf("puppet/type/d%02d", d), fmt.Sprintf("f%d.rb", i)), fmt.Sprintf("# plugin %d/%d\n%0512d\n", d, i, i), 0o644)
		}
	}
	f.opts.Log = slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if _, err := pluginsync.Sync(ctx, f.opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := pluginsync.Sync(ctx, f.opts)
		if err != nil || len(res.Changed)+len(res.Removed) > 0 {
			b.Fatal(err, res)
		}
	}
}
