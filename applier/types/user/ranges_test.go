package user_test

import (
	"testing"

	"github.com/pippet/pippet/applier/types/user"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: user's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, user.Type, []typetest.Case{
		{"pipu398", "{ensure: absent, uid: 4294967296}", "error: Parameter uid failed on User[pipu398]: id 4294967296 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, uid: 4294967295}", "error: Parameter uid failed on User[pipu398]: id 4294967295 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, uid: -1}", "error: Parameter uid failed on User[pipu398]: id -1 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, uid: '-1'}", "error: Parameter uid failed on User[pipu398]: id -1 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, uid: '99999999999999999999999'}", "error: Parameter uid failed on User[pipu398]: id 99999999999999999999999 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, gid: 4294967295}", "error: Parameter gid failed on User[pipu398]: id 4294967295 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, gid: '18446744073709551616'}", "error: Parameter gid failed on User[pipu398]: id 18446744073709551616 is out of range (0 to 4294967294)"},
		{"pipu398", "{ensure: absent, password_min_age: -2}", "error: Parameter password_min_age failed on User[pipu398]: days -2 is out of range (-1 or more)"},
		{"pipu398", "{ensure: absent, password_max_age: '-9223372036854775809'}", "error: Parameter password_max_age failed on User[pipu398]: Password maximum: -9223372036854775809 is out of range"},
		{"pipu398", "{ensure: absent, password_warn_days: -3}", "error: Parameter password_warn_days failed on User[pipu398]: days -3 is out of range (-1 or more)"},
		{"pipu398", "{ensure: absent, expiry: '2030-02-30'}", "error: Parameter expiry failed on User[pipu398]: Expiry date 2030-02-30 is not a date from 1970-01-01 on"},
		{"pipu398", "{ensure: absent, expiry: '1969-12-31'}", "error: Parameter expiry failed on User[pipu398]: Expiry date 1969-12-31 is not a date from 1970-01-01 on"},
		{"pipu398", "{ensure: absent, uid: 4294967294, gid: 0, password_min_age: -1, password_max_age: 99999, password_warn_days: 0, expiry: '1970-01-01'}", typetest.Valid},
	})
}
