package tidy_test

import (
	"testing"

	"github.com/pippet/pippet/applier/types/tidy"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: tidy's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, tidy.Type, []typetest.Case{
		{"/nonexistent/pippet-tidy-ranges", "{recurse: true, max_files: -1}", "error: Parameter max_files failed on Tidy[/nonexistent/pippet-tidy-ranges]: must be 0 or more"},
		{"/nonexistent/pippet-tidy-ranges", "{recurse: '99999999999999999999'}", "error: Parameter recurse failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid recurse value \"99999999999999999999\""},
		{"/nonexistent/pippet-tidy-ranges", "{age: '15250284452472w'}", "error: Parameter age failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy age 15250284452472w: too large"},
		{"/nonexistent/pippet-tidy-ranges", "{age: '99999999999999999999s'}", "error: Parameter age failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy age 99999999999999999999s"},
		{"/nonexistent/pippet-tidy-ranges", "{size: '9007199254740992k'}", "error: Parameter size failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy size 9007199254740992k: too large"},
		{"/nonexistent/pippet-tidy-ranges", "{size: '8796093022208t'}", "error: Parameter size failed on Tidy[/nonexistent/pippet-tidy-ranges]: Invalid tidy size 8796093022208t: too large"},
		{"/nonexistent/pippet-tidy-ranges", "{recurse: 9223372036854775807, max_files: 9223372036854775807, age: '9223372036854775807s', size: '9223372036854775807b'}", typetest.Valid},
	})
}
