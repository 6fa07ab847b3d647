package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSensitiveNeverShown: a command, unless or onlyif named in
// sensitive_parameters (a catalog's Sensitive value) makes all three
// secret, as Puppet's exec does: the output is logged as "[output
// redacted]", a failure reads "[command redacted] returned 3 instead of
// one of [0]" (Puppet 7's words: puppet apply -e "exec { 'e1': command
// => Sensitive(\"/bin/sh -c 'echo SECRET3; exit 3'\"), logoutput =>
// true }"), and neither the command nor its output reaches the answer
// or the log, at any level. Without it, the same resource shows both.
func TestSensitiveNeverShown(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cases := []struct {
		name   string
		params map[string]any
		failed bool
		want   string // in the exception
		logged string
	}{
		{name: "command", params: map[string]any{"command": "/bin/sh -c 'echo SECRET3; exit 3'", "logoutput": true,
			"sensitive_parameters": []any{"command"}},
			failed: true, want: "[command redacted] returned 3 instead of one of [0]", logged: "/Exec[e1]/returns: [output redacted]"},
		{name: "command on failure", params: map[string]any{"command": "/bin/sh -c 'echo SECRET3; exit 3'",
			"sensitive_parameters": "command"},
			failed: true, want: "[command redacted] returned 3 instead of one of [0]", logged: "/Exec[e1]/returns: [output redacted]"},
		{name: "unless makes the command secret", params: map[string]any{
			"command": "/bin/sh -c 'echo SECRET3; touch " + mark + "; exit 3'",
			"unless":  "/bin/sh -c 'echo SECRET3-check; exit 1'", "logoutput": true,
			"sensitive_parameters": []any{"unless"}},
			failed: true, want: "[command redacted] returned 3 instead of one of [0]", logged: "unless: [output redacted]"},
		{name: "onlyif", params: map[string]any{
			"command": "/bin/sh -c 'echo SECRET3; exit 0'",
			"onlyif":  "/bin/sh -c 'echo SECRET3-check; exit 0'", "logoutput": true,
			"sensitive_parameters": []any{"onlyif"}},
			logged: "/Exec[e1]/returns: [output redacted]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, logs := newEngine(t)
			res := apply(t, e, "e1", tc.params)
			assert.Equal(t, tc.failed, res.Failed, "%+v", res)
			if tc.want != "" {
				assert.Contains(t, res.Exception, tc.want)
			}
			assert.Contains(t, logs.String(), tc.logged)
			all := fmt.Sprintf("%+v", res) + logs.String()
			assert.NotContains(t, all, "SECRET3")
			assert.NotContains(t, all, "/bin/sh")
		})
	}

	// The same without sensitive_parameters shows them (the test can fail).
	e, logs := newEngine(t)
	res := apply(t, e, "e1", map[string]any{"command": "/bin/sh -c 'echo SECRET3; exit 3'", "logoutput": true})
	require.True(t, res.Failed)
	assert.Contains(t, res.Exception, "'/bin/sh -c 'echo SECRET3; exit 3'' returned 3 instead of one of [0]")
	assert.Contains(t, logs.String(), "SECRET3")
	_, err := os.Stat(mark)
	assert.NoError(t, err, "the unless check failed, so the command ran")
}
