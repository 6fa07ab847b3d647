package runner

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

type level int

func (l level) String() string { return fmt.Sprintf("L%d", int(l)) }

type word string

// encoderCases: what each of the three encoders of Go values writes for
// the same value — an answer's JSON (protocol.AppendValue), a request's
// params object (the runner's Values), and YAML flow params (find's
// answer) — so that one encoder can replace the three and be held to the
// same bytes. exact "ERR text" is an error containing text.
var encoderCases = []struct {
	v                   any
	answer, exact, yaml string
}{
	{nil, `null`, `null`, `~`},
	{"", `""`, `""`, `''`},
	{"plain", `"plain"`, `"plain"`, `'plain'`},
	{"it's", `"it's"`, `"it's"`, `'it''s'`},
	{"0644", `"0644"`, `"0644"`, `'0644'`},
	{"yes", `"yes"`, `"yes"`, `'yes'`},
	{"tab\there", `"tab\there"`, `"tab\there"`, `"tab\there"`},
	{"nl\n", `"nl\n"`, `"nl\n"`, `"nl\n"`},
	{"q\"b\\", `"q\"b\\"`, `"q\"b\\"`, `'q"b\'`},
	{"caf\u00e9", `"caf` + "\u00e9" + `"`, `"caf` + "\u00e9" + `"`, `'caf` + "\u00e9" + `'`},
	{"\u2028", `"\u2028"`, `"\u2028"`, "'\u2028'"},
	{"bad\xffutf8", `"bad\ufffdutf8"`, `ERR is not valid UTF-8 (byte 3)`, "'bad\xffutf8'"},
	{true, `true`, `true`, `true`},
	{false, `false`, `false`, `false`},
	{int64(0), `0`, `0`, `0`},
	{int64(-42), `-42`, `-42`, `-42`},
	{int(7), `7`, `7`, `7`},
	{int8(-3), `-3`, `-3`, `'-3'`},
	{uint64(42), `42`, `42`, `'42'`},
	{uint64(1 << 63), `9223372036854775808`, `ERR beyond the receiver's integers`, `'9223372036854775808'`},
	{0.0, `0.0`, `0.0`, `0.0`},
	{1.0, `1.0`, `1.0`, `1.0`},
	{-1.5, `-1.5`, `-1.5`, `-1.5`},
	{0.1, `0.1`, `0.1`, `0.1`},
	{1e6, `1000000.0`, `1.0e+06`, `1e+06`},
	{1234567.5, `1.2345675e+06`, `1.2345675e+06`, `1.2345675e+06`},
	{123456789.0, `123456789.0`, `1.23456789e+08`, `1.23456789e+08`},
	{1e15, `1e+15`, `1.0e+15`, `1e+15`},
	{1e20, `1e+20`, `1.0e+20`, `1e+20`},
	{1e-7, `1e-07`, `1.0e-07`, `1e-07`},
	{math.MaxFloat64, `1.7976931348623157e+308`, `1.7976931348623157e+308`, `1.7976931348623157e+308`},
	{math.NaN(), `".nan"`, `ERR has no JSON form`, `.nan`},
	{math.Inf(1), `".inf"`, `ERR has no JSON form`, `.inf`},
	{math.Inf(-1), `"-.inf"`, `ERR has no JSON form`, `-.inf`},
	{float32(1.5), `1.5`, `1.5`, `'1.5'`},
	{float32(1), `1`, `1.0`, `'1'`},
	{[]any{}, `[]`, `[]`, `[]`},
	{[]any(nil), `[]`, `null`, `[]`},
	{[]any{"a", int64(1), nil}, `["a",1,null]`, `["a",1,null]`, `['a', 1, ~]`},
	{[]string{"a", "b"}, `["a","b"]`, `["a","b"]`, `['a', 'b']`},
	{[]int{1, 2}, `[1,2]`, `[1,2]`, `'[1 2]'`},
	{map[string]any{}, `{}`, `{}`, `{}`},
	{map[string]any(nil), `{}`, `null`, `{}`},
	{map[string]any{"b": int64(1), "a": "x", "it's": true}, `{"a":"x","b":1,"it's":true}`, `{"a":"x","b":1,"it's":true}`, `{'a': 'x', 'b': 1, 'it''s': true}`},
	{map[string]any{"l": []any{map[string]any{"k": []string{"v"}}}}, `{"l":[{"k":["v"]}]}`, `{"l":[{"k":["v"]}]}`, `{'l': [{'k': ['v']}]}`},
	{map[string]string{"k": "v"}, `{"k":"v"}`, `{"k":"v"}`, `'map[k:v]'`},
	{map[string]int{"z": 1}, `{"z":1}`, `{"z":1}`, `'map[z:1]'`},
	{map[int]string{1: "a"}, `{"1":"a"}`, `ERR keys must be strings`, `'map[1:a]'`},
	{map[string]any{"k": math.NaN()}, `{"k":".nan"}`, `ERR k: float NaN has no JSON form`, `{'k': .nan}`},
	{(*int)(nil), `null`, `null`, `'<nil>'`},
	{struct{ A string }{"a"}, `{"A":"a"}`, `ERR has no YAML kind`, `'{a}'`},
	{time.Duration(5), `"5ns"`, `5`, `'5ns'`},
	{level(3), `"L3"`, `3`, `'L3'`},
	{word("w"), `"w"`, `"w"`, `'w'`},
}

func TestEncodersAgree(t *testing.T) {
	for _, tt := range encoderCases {
		name := fmt.Sprintf("%T %v", tt.v, tt.v)
		assert.Equal(t, tt.answer, string(protocol.AppendValue(nil, tt.v)), "answer: %s", name)
		exact, err := appendParam(nil, reflect.ValueOf(tt.v), 0)
		if want, ok := strings.CutPrefix(tt.exact, "ERR "); ok {
			require.Error(t, err, name)
			assert.Contains(t, err.Error(), want, name)
		} else {
			require.NoError(t, err, name)
			assert.Equal(t, tt.exact, string(exact), "exact: %s", name)
		}
		assert.Equal(t, tt.yaml, string(applier.AppendYAML(nil, tt.v)), "yaml: %s", name)
	}
}
