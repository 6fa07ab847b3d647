package typetest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
)

// Case is one request of a validation table: {title, params (a YAML
// mapping), want}, want being the answer's Summary, or Valid.
type Case [3]string

// Valid as a Case's Want: the request passes validation (its answer
// reports no error), whatever it then does.
const Valid = "valid"

// CheckRanges applies each case to typ, a subtest named by its params, on
// an engine over typ alone, and checks the answer. It is the numeric
// range test of the type packages (issue 15 item 2): every numeric
// attribute outside its range (negative where it must not be, beyond the
// 32-bit ids, beyond 64 bits, beyond what a time.Duration holds) is an
// error answer naming the resource and the attribute, given before any
// command runs or any file is touched; values at the edges of the range
// pass validation. None needs root: validation comes first.
func CheckRanges(t *testing.T, typ *applier.Type, cases []Case) {
	t.Helper()
	e := New(t, []*applier.Type{typ})
	for _, c := range cases {
		title, params, want := c[0], c[1], c[2]
		t.Run(params, func(t *testing.T) {
			got := Summary(e.Apply(typ.Name, title, params))
			if want == Valid {
				assert.NotContains(t, got, "error", "a value within the range is accepted")
				return
			}
			assert.Equal(t, want, got)
		})
	}
}
