package exec

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: every numeric attribute of exec outside its range
// (negative where it must not be, beyond the 32-bit ids, beyond 64 bits,
// beyond what a time.Duration holds) is an error answer naming the
// resource and the attribute, given before any command runs or any file is
// touched (issue 15 item 2); values at the edges of the range pass
// validation. None of these needs root: validation comes first.
func TestNumericRanges(t *testing.T) {
	e := typetest.New(t, []*applier.Type{Type})
	for _, c := range []struct{ title, params, want string }{
		{"/bin/true", "{timeout: 1e300}", "error: Parameter timeout failed on Exec[/bin/true]: timeout 1e+300 is out of range (0 to 9223372036)"},
		{"/bin/true", "{timeout: 9223372037}", "error: Parameter timeout failed on Exec[/bin/true]: timeout 9223372037 is out of range (0 to 9223372036)"},
		{"/bin/true", "{timeout: .nan}", "error: Parameter timeout failed on Exec[/bin/true]: The timeout must be a number."},
		{"/bin/true", "{timeout: 'Infinity'}", "error: Parameter timeout failed on Exec[/bin/true]: The timeout must be a number."},
		{"/bin/true", "{try_sleep: 99999999999}", "error: Parameter try_sleep failed on Exec[/bin/true]: try_sleep 99999999999 is out of range (0 to 9223372036)"},
		{"/bin/true", "{try_sleep: .inf}", "error: Parameter try_sleep failed on Exec[/bin/true]: try_sleep must be a number"},
		{"/bin/true", "{tries: 0}", "error: Parameter tries failed on Exec[/bin/true]: Tries must be an integer >= 1"},
		{"/bin/true", "{user: '4294967296'}", "error: Parameter user failed on Exec[/bin/true]: invalid user: id 4294967296 is out of range (0 to 4294967294)"},
		{"/bin/true", "{group: '4294967295'}", "error: Parameter group failed on Exec[/bin/true]: invalid group: id 4294967295 is out of range (0 to 4294967294)"},
		{"/bin/true", "{umask: '77777'}", "error: Parameter umask failed on Exec[/bin/true]: The umask specification is invalid: \"77777\""},
		{"/bin/true", "{timeout: 9223372036, try_sleep: 0, returns: 255, onlyif: /bin/false}", "valid"},
	} {
		t.Run(c.params, func(t *testing.T) {
			r := e.Apply("exec", c.title, c.params)
			got := typetest.Summary(r)
			if c.want == "valid" {
				assert.NotContains(t, got, "error", "a value within the range is accepted")
				return
			}
			assert.Equal(t, c.want, got)
		})
	}
}
