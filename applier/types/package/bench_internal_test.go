package pkg

import (
	"os"
	"testing"
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
