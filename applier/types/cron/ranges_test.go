package cron_test

import (
	"testing"

	"github.com/pippet/pippet/applier/types/cron"
	"github.com/pippet/pippet/applier/typetest"
)

// TestNumericRanges: cron's numeric attributes out of range are refused
// by validation, their edges accepted (see typetest.CheckRanges).
func TestNumericRanges(t *testing.T) {
	typetest.CheckRanges(t, cron.Type, []typetest.Case{
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, minute: 60}", "error: Parameter minute failed on Cron[pippet-cron-ranges]: 60 is not a valid minute"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, minute: '0-60'}", "error: Parameter minute failed on Cron[pippet-cron-ranges]: 0-60 is not a valid minute: 60 is out of range (0 to 59)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, minute: '*/0'}", "error: Parameter minute failed on Cron[pippet-cron-ranges]: */0 is not a valid minute: the step 0 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, minute: '0-59/4294967296'}", "error: Parameter minute failed on Cron[pippet-cron-ranges]: 0-59/4294967296 is not a valid minute: the step 4294967296 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, minute: '99999999999999999999999-1'}", "error: Parameter minute failed on Cron[pippet-cron-ranges]: 99999999999999999999999-1 is not a valid minute: 99999999999999999999999 is out of range (0 to 59)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, hour: 24}", "error: Parameter hour failed on Cron[pippet-cron-ranges]: 24 is not a valid hour"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, hour: '0-24'}", "error: Parameter hour failed on Cron[pippet-cron-ranges]: 0-24 is not a valid hour: 24 is out of range (0 to 23)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, hour: '*/0'}", "error: Parameter hour failed on Cron[pippet-cron-ranges]: */0 is not a valid hour: the step 0 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, hour: '0-23/4294967296'}", "error: Parameter hour failed on Cron[pippet-cron-ranges]: 0-23/4294967296 is not a valid hour: the step 4294967296 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, hour: '99999999999999999999999-1'}", "error: Parameter hour failed on Cron[pippet-cron-ranges]: 99999999999999999999999-1 is not a valid hour: 99999999999999999999999 is out of range (0 to 23)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, weekday: 8}", "error: Parameter weekday failed on Cron[pippet-cron-ranges]: 8 is not a valid weekday"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, weekday: '0-8'}", "error: Parameter weekday failed on Cron[pippet-cron-ranges]: 0-8 is not a valid weekday: 8 is out of range (0 to 7)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, weekday: '*/0'}", "error: Parameter weekday failed on Cron[pippet-cron-ranges]: */0 is not a valid weekday: the step 0 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, weekday: '0-7/4294967296'}", "error: Parameter weekday failed on Cron[pippet-cron-ranges]: 0-7/4294967296 is not a valid weekday: the step 4294967296 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, weekday: '99999999999999999999999-1'}", "error: Parameter weekday failed on Cron[pippet-cron-ranges]: 99999999999999999999999-1 is not a valid weekday: 99999999999999999999999 is out of range (0 to 7)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, month: 13}", "error: Parameter month failed on Cron[pippet-cron-ranges]: 13 is not a valid month"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, month: '1-13'}", "error: Parameter month failed on Cron[pippet-cron-ranges]: 1-13 is not a valid month: 13 is out of range (1 to 12)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, month: '*/0'}", "error: Parameter month failed on Cron[pippet-cron-ranges]: */0 is not a valid month: the step 0 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, month: '1-12/4294967296'}", "error: Parameter month failed on Cron[pippet-cron-ranges]: 1-12/4294967296 is not a valid month: the step 4294967296 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, month: '99999999999999999999999-1'}", "error: Parameter month failed on Cron[pippet-cron-ranges]: 99999999999999999999999-1 is not a valid month: 99999999999999999999999 is out of range (1 to 12)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, monthday: 32}", "error: Parameter monthday failed on Cron[pippet-cron-ranges]: 32 is not a valid monthday"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, monthday: '1-32'}", "error: Parameter monthday failed on Cron[pippet-cron-ranges]: 1-32 is not a valid monthday: 32 is out of range (1 to 31)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, monthday: '*/0'}", "error: Parameter monthday failed on Cron[pippet-cron-ranges]: */0 is not a valid monthday: the step 0 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, monthday: '1-31/4294967296'}", "error: Parameter monthday failed on Cron[pippet-cron-ranges]: 1-31/4294967296 is not a valid monthday: the step 4294967296 is out of range (1 to 2147483647)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, monthday: '99999999999999999999999-1'}", "error: Parameter monthday failed on Cron[pippet-cron-ranges]: 99999999999999999999999-1 is not a valid monthday: 99999999999999999999999 is out of range (1 to 31)"},
		{"pippet-cron-ranges", "{command: /bin/true, target: nobody, minute: '0-59/2147483647', hour: '*/23', weekday: 7, month: '1-12', monthday: 31, ensure: absent}", typetest.Valid},
	})
}
