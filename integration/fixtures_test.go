package integration

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden answers of testdata/*.ndjson")

// TestFixtureStreams pipes each testdata/NAME.ndjson through the receiver
// and compares stdout with testdata/NAME.golden. In both, @ROOT@ stands for
// a fresh scratch directory (also the working directory). A line
// "# requires: a, b" in a stream names the types it needs; a stream whose
// types are not all registered fails. Refresh the goldens with
// `go test ./integration -run Fixture -update` and review the diff.
func TestFixtureStreams(t *testing.T) {
	streams, err := filepath.Glob("testdata/*.ndjson")
	require.NoError(t, err)
	require.NotEmpty(t, streams)
	for _, path := range streams {
		name := strings.TrimSuffix(filepath.Base(path), ".ndjson")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(path)
			require.NoError(t, err)
			if req := requires(string(in)); !registered(req...) {
				t.Fatalf("the stream uses types pippet does not have: %v", req)
			}
			root := t.TempDir()
			input := strings.ReplaceAll(string(in), "@ROOT@", root)
			out, stderr, code := run(t, root, strings.NewReader(input))
			assert.Equal(t, 0, code, "stderr: %s", stderr)
			got := strings.ReplaceAll(out, root, "@ROOT@")
			golden := strings.TrimSuffix(path, ".ndjson") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "no golden answers; run with -update")
			assert.Equal(t, string(want), got)
		})
	}
}

func requires(stream string) []string {
	var out []string
	for _, l := range strings.Split(stream, "\n") {
		if rest, ok := strings.CutPrefix(l, "# requires:"); ok {
			for _, f := range strings.Split(rest, ",") {
				if f = strings.TrimSpace(f); f != "" {
					out = append(out, f)
				}
			}
		}
	}
	return out
}
