package pkg

import (
	"context"
	"os"
	"testing"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

// BenchmarkParseStatus parses this machine's dpkg status file: what the
// first request of a process (and the first after any change) pays.
func BenchmarkParseStatus(b *testing.B) {
	data, err := os.ReadFile(StatusFile)
	if err != nil {
		b.Skipf("no dpkg status file here: %v", err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseStatus(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchFloor is the floor of a search of every package: reading
// the dpkg status file and parsing it, nothing else.
func BenchmarkSearchFloor(b *testing.B) {
	if _, err := os.Stat(StatusFile); err != nil {
		b.Skipf("no dpkg status file here: %v", err)
	}
	for b.Loop() {
		data, err := os.ReadFile(StatusFile)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := parseStatus(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch is the search verb over every package through the
// engine, its answer line encoded: fresh, the database read and parsed
// again each time (a process's first search, or the first after a
// change); cached, the database kept (every later search).
func BenchmarkSearch(b *testing.B) {
	if _, err := os.Stat(StatusFile); err != nil {
		b.Skipf("no dpkg status file here: %v", err)
	}
	e := typetest.New(b, []*applier.Type{Type})
	req := &protocol.Request{Op: protocol.OpSearch, Type: "package"}
	var line []byte
	run := func(b *testing.B, fresh bool) {
		n := 0
		for b.Loop() {
			if fresh {
				dropDB()
			}
			res := e.Engine.Apply(context.Background(), req)
			if res.Error || res.Failed {
				b.Fatal(res.Exception)
			}
			line = protocol.AppendResult(line[:0], &res, false)
			n = len(res.Instances)
		}
		b.ReportMetric(float64(n), "packages")
	}
	b.Run("fresh", func(b *testing.B) { run(b, true) })
	b.Run("cached", func(b *testing.B) { run(b, false) })
}
