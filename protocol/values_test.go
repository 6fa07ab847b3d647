package protocol

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol/yamlparams"
)

type level int

func (l level) String() string { return fmt.Sprintf("L%d", int(l)) }

type word string

// encoderCases: what each of the three ways of writing a Go value gives
// for the same value: an answer's JSON (AppendValue), a request's params
// object (AppendExactValue, the runner's Values) and YAML flow params
// (AppendYAML, find's answer). They were three encoders, held to this table
// before they became one; the rows that changed then (YAML's floats with an
// exponent and its Go kinds beyond the switch, which read back as strings
// or not at all, and the runner's integral floats) read back as the value.
// exact "ERR text" is an error containing text.
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
	{"\u2028", `"\u2028"`, `"\u2028"`, `"\u2028"`},
	{"del\x7f", "\"del\x7f\"", "\"del\x7f\"", `"del\u007f"`},
	{"nel\u0085 bom\ufeff caf\u00e9\x01", "\"nel\u0085 bom\ufeff caf\u00e9\\u0001\"", "\"nel\u0085 bom\ufeff caf\u00e9\\u0001\"", `"nel\u0085 bom\ufeff caf` + "\u00e9" + `\u0001"`},
	{"bad\xffutf8", `"bad\ufffdutf8"`, `ERR is not valid UTF-8 (byte 3)`, `"bad\ufffdutf8"`},
	{true, `true`, `true`, `true`},
	{false, `false`, `false`, `false`},
	{int64(0), `0`, `0`, `0`},
	{int64(-42), `-42`, `-42`, `-42`},
	{int(7), `7`, `7`, `7`},
	{int8(-3), `-3`, `-3`, `-3`},
	{uint64(42), `42`, `42`, `42`},
	{uint64(1 << 63), `9223372036854775808`, `ERR beyond the receiver's integers`, `9223372036854775808`},
	{0.0, `0.0`, `0.0`, `0.0`},
	{1.0, `1.0`, `1.0`, `1.0`},
	{-1.5, `-1.5`, `-1.5`, `-1.5`},
	{0.1, `0.1`, `0.1`, `0.1`},
	{1e6, `1000000.0`, `1000000.0`, `1000000.0`},
	{1234567.5, `1.2345675e+06`, `1.2345675e+06`, `1.2345675e+06`},
	{123456789.0, `123456789.0`, `123456789.0`, `123456789.0`},
	{1e15, `1e+15`, `1e+15`, `1.0e+15`},
	{1e20, `1e+20`, `1e+20`, `1.0e+20`},
	{1e-7, `1e-07`, `1e-07`, `1.0e-07`},
	{math.MaxFloat64, `1.7976931348623157e+308`, `1.7976931348623157e+308`, `1.7976931348623157e+308`},
	{math.NaN(), `".nan"`, `ERR has no JSON form`, `.nan`},
	{math.Inf(1), `".inf"`, `ERR has no JSON form`, `.inf`},
	{math.Inf(-1), `"-.inf"`, `ERR has no JSON form`, `-.inf`},
	{float32(1.5), `1.5`, `1.5`, `1.5`},
	{float32(1), `1.0`, `1.0`, `1.0`},
	{[]any{}, `[]`, `[]`, `[]`},
	{[]any(nil), `[]`, `null`, `[]`},
	{[]any{"a", int64(1), nil}, `["a",1,null]`, `["a",1,null]`, `['a', 1, ~]`},
	{[]string{"a", "b"}, `["a","b"]`, `["a","b"]`, `['a', 'b']`},
	{[]int{1, 2}, `[1,2]`, `[1,2]`, `[1, 2]`},
	{map[string]any{}, `{}`, `{}`, `{}`},
	{map[string]any(nil), `{}`, `null`, `{}`},
	{map[string]any{"b": int64(1), "a": "x", "it's": true}, `{"a":"x","b":1,"it's":true}`, `{"a":"x","b":1,"it's":true}`, `{'a': 'x', 'b': 1, 'it''s': true}`},
	{map[string]any{"l": []any{map[string]any{"k": []string{"v"}}}}, `{"l":[{"k":["v"]}]}`, `{"l":[{"k":["v"]}]}`, `{'l': [{'k': ['v']}]}`},
	{map[string]string{"k": "v"}, `{"k":"v"}`, `{"k":"v"}`, `{'k': 'v'}`},
	{map[string]int{"z": 1}, `{"z":1}`, `{"z":1}`, `{'z': 1}`},
	{map[int]string{1: "a"}, `{"1":"a"}`, `ERR keys must be strings`, `{"1":"a"}`},
	{map[string]any{"k": math.NaN()}, `{"k":".nan"}`, `ERR k: float NaN has no JSON form`, `{'k': .nan}`},
	{(*int)(nil), `null`, `null`, `~`},
	{struct{ A string }{"a"}, `{"A":"a"}`, `ERR has no YAML kind`, `{"A":"a"}`},
	{time.Duration(5), `"5ns"`, `5`, `'5ns'`},
	{level(3), `"L3"`, `3`, `'L3'`},
	{word("w"), `"w"`, `"w"`, `'w'`},
}

func TestValueEncodings(t *testing.T) {
	for _, tt := range encoderCases {
		name := fmt.Sprintf("%T %v", tt.v, tt.v)
		assert.Equal(t, tt.answer, string(AppendValue(nil, tt.v)), "answer: %s", name)
		exact, err := AppendExactValue(nil, tt.v)
		if want, ok := strings.CutPrefix(tt.exact, "ERR "); ok {
			require.Error(t, err, name)
			assert.Contains(t, err.Error(), want, name)
		} else {
			require.NoError(t, err, name)
			assert.Equal(t, tt.exact, string(exact), "exact: %s", name)
		}
		assert.Equal(t, tt.yaml, string(AppendYAML(nil, tt.v)), "yaml: %s", name)
	}
}

// What AppendExactValue writes, the receiver reads back as the same value,
// and so does what AppendYAML writes, for every value of the table of the
// kinds params hold.
func TestValueEncodingsReadBack(t *testing.T) {
	for _, tt := range encoderCases {
		want, ok := paramsValue(tt.v)
		if !ok {
			continue
		}
		name := fmt.Sprintf("%T %v", tt.v, tt.v)
		if exact, err := AppendExactValue(nil, tt.v); err == nil {
			line := append([]byte(`{"type":"t","title":"x","params":{"v":`), exact...)
			var req Request
			require.NoError(t, DecodeLine(append(line, "}}"...), &req), name)
			wantExact := want
			if r := reflect.ValueOf(tt.v); (r.Kind() == reflect.Slice || r.Kind() == reflect.Map) && r.IsNil() {
				wantExact = nil // a nil slice or map is null, as encoding/json writes it
			}
			assert.True(t, testutil.EqualValues(wantExact, req.Params["v"]), "exact: %s read back as %#v", name, req.Params["v"])
		}
		if !utf8.ValidString(fmt.Sprint(tt.v)) {
			continue // (answers carry U+FFFD for it; params are refused)
		}
		got, err := yamlparams.Parse(append(AppendYAML([]byte("{v: "), tt.v), '}'))
		if err != nil {
			if u, big := tt.v.(uint64); big && u > math.MaxInt64 {
				continue // no integer of the receiver holds it
			}
		}
		require.NoError(t, err, name)
		assert.True(t, testutil.EqualValues(want, got["v"]), "yaml: %s read back as %#v", name, got["v"])
	}
}

// paramsValue is v as the receiver reads params: int64, float64, string,
// bool, nil, []any, map[string]any; ok false for what it has none for.
func paramsValue(v any) (any, bool) {
	r := reflect.ValueOf(v)
	for r.IsValid() && r.Kind() == reflect.Pointer {
		if r.IsNil() {
			return nil, true
		}
		r = r.Elem()
	}
	if !r.IsValid() {
		return nil, true
	}
	switch r.Kind() {
	case reflect.String:
		return r.String(), true
	case reflect.Bool:
		return r.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, ok := v.(fmt.Stringer); ok {
			return nil, false // written as its String() in answers and YAML
		}
		return r.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(r.Uint()), true
	case reflect.Float32, reflect.Float64:
		return r.Float(), true
	case reflect.Slice:
		out := []any{}
		for i := range r.Len() {
			e, ok := paramsValue(r.Index(i).Interface())
			if !ok {
				return nil, false
			}
			out = append(out, e)
		}
		return out, true
	case reflect.Map:
		if r.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		out := map[string]any{}
		for it := r.MapRange(); it.Next(); {
			e, ok := paramsValue(it.Value().Interface())
			if !ok {
				return nil, false
			}
			out[it.Key().String()] = e
		}
		return out, true
	}
	return nil, false
}

// FuzzAppendYAMLString: any UTF-8 string AppendYAML writes reads back as
// itself through yamlparams, whatever characters it holds.
func FuzzAppendYAMLString(f *testing.F) {
	for _, s := range []string{"", "plain", "it's", "0644", "yes", "~", "a: b", "- x", "#c", "tab\there", "nl\n", "del\x7f",
		"nel\u0085", "\u2028\u2029", "bom\ufeff", "\ufffe", "caf\u00e9 \U0001F600", " lead", "trail ", "'", "\"", "\\", "{[,]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // (written as U+FFFD, as answers write it)
		}
		doc := append(AppendYAML([]byte("{v: "), s), '}')
		got, err := yamlparams.Parse(doc)
		if err != nil {
			t.Fatalf("%q written as %q: %v", s, doc, err)
		}
		if got["v"] != s {
			t.Fatalf("%q written as %q read back as %#v", s, doc, got["v"])
		}
	})
}
