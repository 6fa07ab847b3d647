package exec

import (
	"testing"

	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: exec's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, Type, []typetest.Case{
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
		{"/bin/true", "{timeout: 9223372036, try_sleep: 0, returns: 255, onlyif: /bin/false}", typetest.Valid},
	})
}
