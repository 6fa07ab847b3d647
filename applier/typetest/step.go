package typetest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/protocol"
)

// Step applies the i-th request (0-based) of a sequence and checks its
// answer's Summary against want and, when events is not "", its Events.
func (e *Engine) Step(i int, typ, title, params, want, events string) protocol.Result {
	e.t.Helper()
	res := e.Apply(typ, title, params)
	assert.Equal(e.t, want, Summary(res), "step %d (%s %s)", i+1, title, params)
	if events != "" {
		assert.Equal(e.t, events, Events(res), "step %d", i+1)
	}
	return res
}

// BenchUnchanged applies lines (request lines, in turn) b.N times, each
// answer required to be unchanged and not failed.
func (e *Engine) BenchUnchanged(b *testing.B, lines []string) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := e.ApplyLine(lines[i%len(lines)]); res.Changed || res.Failed {
			b.Fatalf("%+v", res)
		}
	}
}
