package tidy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/tidy"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: every numeric attribute of tidy outside its range
// (negative where it must not be, beyond the 32-bit ids, beyond 64 bits,
// beyond what a time.Duration holds) is an error answer naming the
// resource and the attribute, given before any command runs or any file is
// touched (issue 15 item 2); values at the edges of the range pass
// validation. None of these needs root: validation comes first.
func TestNumericRanges(t *testing.T) {
	e := typetest.New(t, []*applier.Type{tidy.Type})
	for _, c := range []struct{ title, params, want string }{
		{"/nonexistent/pippet-tidy-ranges", "{recurse: true, max_files: -1}", "error: Parameter max_files failed on Tidy[/nonexistent/pippet-tidy-ranges]: must be 0 or more"},
		{"/nonexistent/pippet-tidy-ranges", "{recurse: '99999999999999999999'}", "error: Parameter recurse failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid recurse value \"99999999999999999999\""},
		{"/nonexistent/pippet-tidy-ranges", "{age: '15250284452472w'}", "error: Parameter age failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy age 15250284452472w: too large"},
		{"/nonexistent/pippet-tidy-ranges", "{age: '99999999999999999999s'}", "error: Parameter age failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy age 99999999999999999999s"},
		{"/nonexistent/pippet-tidy-ranges", "{size: '9007199254740992k'}", "error: Parameter size failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy size 9007199254740992k: too large"},
		{"/nonexistent/pippet-tidy-ranges", "{size: '8796093022208t'}", "error: Parameter size failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy size 8796093022208t: too large"},
		{"/nonexistent/pippet-tidy-ranges", "{recurse: 9223372036854775807, max_files: 9223372036854775807, age: '9223372036854775807s', size: '9223372036854775807b'}", "valid"},
	} {
		t.Run(c.params, func(t *testing.T) {
			r := e.Apply("tidy", c.title, c.params)
			got := typetest.Summary(r)
			if c.want == "valid" {
				assert.NotContains(t, got, "error", "a value within the range is accepted")
				return
			}
			assert.Equal(t, c.want, got)
		})
	}
}
