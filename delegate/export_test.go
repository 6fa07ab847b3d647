package delegate

import (
	"testing"

	"github.com/pippet/pippet/runner"
)

// commandFallback is a Fallback forwarding to argv (words may hold
// blanks, which Options.Fallback cannot say).
func commandFallback(t *testing.T, argv []string) *Fallback {
	t.Helper()
	f := &Fallback{desc: "'" + argv[0] + "'", command: true, recv: runner.New(runner.Options{Command: argv})}
	t.Cleanup(func() { _ = f.Close(t.Context()) })
	return f
}
