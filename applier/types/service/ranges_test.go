package service

import (
	"testing"

	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: service's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, Type, []typetest.Case{
		{"pipsvc398", "{provider: base, status: /bin/false, timeout: 0}", "error: Parameter timeout failed on Service[pipsvc398]: \"0\" is not a positive integer: the timeout parameter must be specified as a positive integer"},
		{"pipsvc398", "{provider: base, status: /bin/false, timeout: 9223372037}", "error: Parameter timeout failed on Service[pipsvc398]: timeout 9223372037 is out of range (1 to 9223372036)"},
		{"pipsvc398", "{provider: base, status: /bin/false, timeout: 9223372036}", typetest.Valid},
	})
}
