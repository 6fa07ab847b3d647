package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/report"
)

// fileCatalog is a generated catalog of n files in dir, each in its own
// class of ten, every class requiring the one before (a chain the walk
// must honour).
func fileCatalog(b *testing.B, dir string, n int) []byte {
	b.Helper()
	var rs []res
	for c := 0; c*10 < n; c++ {
		var p map[string]any
		if c > 0 {
			p = map[string]any{"require": fmt.Sprintf("Class[C%d]", c-1)}
		}
		rs = append(rs, class(fmt.Sprintf("C%d", c), p))
		for i := c * 10; i < min(n, c*10+10); i++ {
			rs = append(rs, res{typ: "File", title: filepath.Join(dir, fmt.Sprintf("f%04d", i)),
				params: map[string]any{"ensure": "file", "content": fmt.Sprintf("file %d\n", i), "mode": "0644"},
				in:     fmt.Sprintf("Class[C%d]", c)})
		}
	}
	return build(&testing.T{}, rs...)
}

// BenchmarkConverged1000Files: a converged run of a 1,000-file catalog
// (parse, graph, walk, report), through the engine in process.
func BenchmarkConverged1000Files(b *testing.B) {
	dir := b.TempDir()
	data := fileCatalog(b, dir, 1000)
	eng := engine.New(applier.Default, &applier.Env{Options: applier.Options{StateDir: b.TempDir()}})
	run := func() *report.Report {
		c, err := catalog.Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		g, err := catalog.Build(c, applier.Default)
		if err != nil {
			b.Fatal(err)
		}
		return catalog.Apply(context.Background(), g, eng, catalog.Options{})
	}
	if rep := run(); rep.Status != "changed" {
		b.Fatalf("first run: %s", rep.Status)
	}
	b.ResetTimer()
	for b.Loop() {
		if rep := run(); rep.Status != "unchanged" {
			b.Fatalf("converged run: %s", rep.Status)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/resource")
}

// BenchmarkGraph1000: parse and build the graph of the same catalog.
func BenchmarkGraph1000(b *testing.B) {
	data := fileCatalog(b, b.TempDir(), 1000)
	for b.Loop() {
		c, err := catalog.Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := catalog.Build(c, applier.Default); err != nil {
			b.Fatal(err)
		}
	}
}
