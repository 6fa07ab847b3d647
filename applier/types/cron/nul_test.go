package cron_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/cron"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNULRefusedAtValidation: a NUL byte in a command, a name or an
// environment setting is refused up front, naming the attribute (crontab
// refuses a whole crontab holding one, so it would fail only when
// written, and fail the user's other jobs' update with it). Nothing is
// read or written: the user does not even have to exist.
func TestNULRefusedAtValidation(t *testing.T) {
	e := typetest.New(t, []*applier.Type{cron.Type})
	for _, tc := range []struct{ title, params, want string }{
		{"j", `{"user":"nosuchuserx","command":"/bin/true\u0000rm -rf /"}`, "error: Parameter command failed on Cron[j]: Command must not contain a NUL byte"},
		{"j", `{"user":"nosuchuserx","name":"j\u0000x","command":"/bin/true"}`, "error: Parameter name failed on Cron[j]: Name must not contain a NUL byte"},
		{"j", `{"user":"nosuchuserx","command":"/bin/true","environment":"A=b\u0000c"}`, "error: Parameter environment failed on Cron[j]: Invalid environment setting \"A=b\\x00c\""},
	} {
		res := e.Apply("cron", tc.title, tc.params)
		assert.Equal(t, tc.want, typetest.Summary(res), "%q %s", tc.title, tc.params)
	}
}
