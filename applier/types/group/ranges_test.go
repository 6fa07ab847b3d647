package group_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/group"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: every numeric attribute of group outside its range
// (negative where it must not be, beyond the 32-bit ids, beyond 64 bits,
// beyond what a time.Duration holds) is an error answer naming the
// resource and the attribute, given before any command runs or any file is
// touched (issue 15 item 2); values at the edges of the range pass
// validation. None of these needs root: validation comes first.
func TestNumericRanges(t *testing.T) {
	e := typetest.New(t, []*applier.Type{group.Type})
	for _, c := range []struct{ title, params, want string }{
		{"pipg398", "{ensure: absent, gid: 4294967296}", "error: Parameter gid failed on Group[pipg398]: id 4294967296 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: 4294967295}", "error: Parameter gid failed on Group[pipg398]: id 4294967295 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: -1}", "error: Parameter gid failed on Group[pipg398]: id -1 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: '99999999999999999999999'}", "error: Parameter gid failed on Group[pipg398]: id 99999999999999999999999 is out of range (0 to 4294967294)"},
		{"pipg398", "{ensure: absent, gid: 4294967294}", "valid"},
	} {
		t.Run(c.params, func(t *testing.T) {
			r := e.Apply("group", c.title, c.params)
			got := typetest.Summary(r)
			if c.want == "valid" {
				assert.NotContains(t, got, "error", "a value within the range is accepted")
				return
			}
			assert.Equal(t, c.want, got)
		})
	}
}
