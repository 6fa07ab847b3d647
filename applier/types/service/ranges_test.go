package service

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: every numeric attribute of service outside its range
// (negative where it must not be, beyond the 32-bit ids, beyond 64 bits,
// beyond what a time.Duration holds) is an error answer naming the
// resource and the attribute, given before any command runs or any file is
// touched (issue 15 item 2); values at the edges of the range pass
// validation. None of these needs root: validation comes first.
func TestNumericRanges(t *testing.T) {
	e := typetest.New(t, []*applier.Type{Type})
	for _, c := range []struct{ title, params, want string }{
		{"pipsvc398", "{provider: base, status: /bin/false, timeout: 0}", "error: Parameter timeout failed on Service[pipsvc398]: \"0\" is not a positive integer: the timeout parameter must be specified as a positive integer"},
		{"pipsvc398", "{provider: base, status: /bin/false, timeout: 9223372037}", "error: Parameter timeout failed on Service[pipsvc398]: timeout 9223372037 is out of range (1 to 9223372036)"},
		{"pipsvc398", "{provider: base, status: /bin/false, timeout: 9223372036}", "valid"},
	} {
		t.Run(c.params, func(t *testing.T) {
			r := e.Apply("service", c.title, c.params)
			got := typetest.Summary(r)
			if c.want == "valid" {
				assert.NotContains(t, got, "error", "a value within the range is accepted")
				return
			}
			assert.Equal(t, c.want, got)
		})
	}
}
