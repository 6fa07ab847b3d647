package file_test

import (
	"testing"

	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: file's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, file.Type, []typetest.Case{
		{"/nonexistent/pippet-file-ranges", "{ensure: file, owner: '4294967296'}", "error: Parameter owner failed on File[/nonexistent/pippet-file-ranges]: invalid owner: id 4294967296 is out of range (0 to 4294967294)"},
		{"/nonexistent/pippet-file-ranges", "{ensure: file, owner: 4294967295}", "error: Parameter owner failed on File[/nonexistent/pippet-file-ranges]: invalid owner: id 4294967295 is out of range (0 to 4294967294)"},
		{"/nonexistent/pippet-file-ranges", "{ensure: file, group: '18446744073709551616'}", "error: Parameter group failed on File[/nonexistent/pippet-file-ranges]: invalid group: id 18446744073709551616 is out of range (0 to 4294967294)"},
		{"/nonexistent/pippet-file-ranges", "{ensure: file, mode: '1777777'}", "error: Parameter mode failed on File[/nonexistent/pippet-file-ranges]: the file mode specification is invalid: \"1777777\""},
		{"/nonexistent/pippet-file-ranges", "{ensure: file, mode: '077777777777777777777777'}", "error: Parameter mode failed on File[/nonexistent/pippet-file-ranges]: the file mode specification is invalid: \"077777777777777777777777\""},
		{"/nonexistent/pippet-file-ranges", "{ensure: directory, recurse: true, recurselimit: -1}", "error: Parameter recurselimit failed on File[/nonexistent/pippet-file-ranges]: invalid recurselimit value -1"},
		{"/nonexistent/pippet-file-ranges", "{ensure: directory, recurse: true, max_files: -2}", "error: Parameter max_files failed on File[/nonexistent/pippet-file-ranges]: invalid max_files value -2: a count, or -1 for no limit"},
		{"/nonexistent/pippet-file-ranges", "{ensure: absent, owner: 4294967294, group: 0, mode: '7777', recurselimit: 9223372036854775807, max_files: -1}", typetest.Valid},
	})
}
