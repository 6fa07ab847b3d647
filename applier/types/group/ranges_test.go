package group_test

import (
	"testing"

	"github.com/pippet/pippet/applier/types/group"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: group's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, group.Type, []typetest.Case{
		{"pipg398", "{ensure: absent, gid: 4294967296}", "error: Parameter gid failed on Group[pipg398]: id 4294967296 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: 4294967295}", "error: Parameter gid failed on Group[pipg398]: id 4294967295 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: -1}", "error: Parameter gid failed on Group[pipg398]: id -1 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: '99999999999999999999999'}", "error: Parameter gid failed on Group[pipg398]: id 99999999999999999999999 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: 4294967294}", typetest.Valid},
	})
}
