package protocol

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/protocol/yamlparams"
)

// Values are written in one of three ways, each by the same walk over the
// value (appendValue) so that a value reads back the same whichever way it
// went:
//
//   - AppendValue: JSON for an answer (an event's values, a state). It
//     never fails: what JSON cannot hold is written as near as it can be
//     (invalid UTF-8 as U+FFFD, NaN and ±Inf as the strings YAML spells
//     them, a type it does not know as its String() or its JSON).
//   - AppendExactValue: JSON for a request's params object (the runner's
//     Values). What the receiver would not read back as the same value is
//     refused: invalid UTF-8, NaN and ±Inf, an integer beyond 64 bits, a
//     map whose keys are not strings, a struct, nesting deeper than
//     yamlparams.MaxDepth. Any Go kind else is taken: named types, every
//     integer and float size, slices, arrays, pointers.
//   - AppendYAML: YAML's flow style, for params in a string (find's
//     answer): strings quoted, so that yamlparams reads them back as
//     strings (single quotes, or double quotes with escapes when they hold
//     a character single quotes cannot); never fails, as AppendValue.
//
// Floats always read back as floats: with a fraction when integral (1.0;
// 1000000.0 below 1e15), otherwise in the shortest form, which in YAML
// gets ".0" before an exponent without a fraction (1.0e+20), since YAML
// 1.1 reads 1e+20 as a string. Maps are written with their keys sorted, so
// the same map always gives the same bytes.

// mode is how appendValue writes.
type mode uint8

const (
	answerJSON mode = iota // AppendValue
	exactJSON              // AppendExactValue
	flowYAML               // AppendYAML
)

// AppendValue appends v as JSON for an answer; see the rules above.
func AppendValue(dst []byte, v any) []byte {
	dst, _ = appendValue(dst, v, answerJSON, 0)
	return dst
}

// AppendExactValue appends v as JSON that the receiver reads back as v, or
// returns an error saying why it cannot; see the rules above.
func AppendExactValue(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v, exactJSON, 0)
}

// AppendYAML appends v as a YAML flow value that yamlparams reads back as
// v; see the rules above.
func AppendYAML(dst []byte, v any) []byte {
	dst, _ = appendValue(dst, v, flowYAML, 0)
	return dst
}

// appendValue writes v: the types params and states hold directly, any
// other Go value through reflection (exactJSON) or as its String() or JSON
// (the others).
func appendValue(dst []byte, v any, m mode, depth int) ([]byte, error) {
	if m == exactJSON && depth > yamlparams.MaxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case nil:
		return appendNull(dst, m), nil
	case string:
		return appendText(dst, x, m)
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case float64:
		return appendFloat(dst, x, 64, m)
	case []any:
		if x == nil && m == exactJSON {
			return appendNull(dst, m), nil
		}
		return appendList(dst, len(x), m, func(dst []byte, i int) ([]byte, error) {
			return appendValue(dst, x[i], m, depth+1)
		})
	case []string:
		if x == nil && m == exactJSON {
			return appendNull(dst, m), nil
		}
		return appendList(dst, len(x), m, func(dst []byte, i int) ([]byte, error) {
			return appendText(dst, x[i], m)
		})
	case map[string]any:
		if x == nil && m == exactJSON {
			return appendNull(dst, m), nil
		}
		return appendMap(dst, sortedKeys(x), m, func(dst []byte, k string) ([]byte, error) {
			return appendValue(dst, x[k], m, depth+1)
		})
	case map[string]string:
		if x == nil && m == exactJSON {
			return appendNull(dst, m), nil
		}
		return appendMap(dst, sortedKeys(x), m, func(dst []byte, k string) ([]byte, error) {
			return appendText(dst, x[k], m)
		})
	}
	if m != exactJSON {
		switch x := v.(type) {
		case *big.Int:
			return x.Append(dst, 10), nil
		case fmt.Stringer:
			return appendText(dst, x.String(), m)
		}
	}
	return appendReflect(dst, reflect.ValueOf(v), m, depth)
}

// appendMarshaled is what the lenient modes write for a value of a kind
// they do not know: its JSON (which is YAML's flow style too), or a string
// saying it has none.
func appendMarshaled(dst []byte, v reflect.Value, m mode) ([]byte, error) {
	b, err := json.Marshal(v.Interface())
	if err != nil || !utf8.Valid(b) {
		return appendText(dst, "<unencodable value>", m)
	}
	return append(dst, b...), nil
}

func appendNull(dst []byte, m mode) []byte {
	if m == flowYAML {
		return append(dst, '~')
	}
	return append(dst, "null"...)
}

// appendText writes a string: in JSON escaped by AppendString (invalid
// UTF-8 refused by exactJSON, U+FFFD otherwise); in YAML single-quoted,
// or double-quoted with JSON's escapes (which are YAML's) when it holds a
// control character.
func appendText(dst []byte, s string, m mode) ([]byte, error) {
	switch m {
	case exactJSON:
		if !utf8.ValidString(s) {
			return nil, notUTF8("string", s)
		}
	case flowYAML:
		for _, r := range s {
			if !yamlPrintable(r) {
				return appendYAMLDouble(dst, s), nil
			}
		}
		dst = append(dst, '\'')
		dst = append(dst, strings.ReplaceAll(s, "'", "''")...)
		return append(dst, '\''), nil
	}
	return AppendString(dst, s), nil
}

// yamlPrintable: r may stand as it is in a YAML scalar (YAML 1.1's
// printable characters, less the line breaks U+0085, U+2028 and U+2029
// and the byte order mark; a byte that is not UTF-8 comes as RuneError).
func yamlPrintable(r rune) bool {
	switch {
	case r >= 0x20 && r < 0x7f:
		return true
	case r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff, r == utf8.RuneError:
		return false
	}
	return true
}

// appendYAMLDouble writes s in YAML's double quotes, with escapes for the
// characters yamlPrintable refuses (and U+FFFD for a byte that is not
// UTF-8), which single quotes cannot hold.
func appendYAMLDouble(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case !yamlPrintable(r):
			dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// appendFloat writes f (of bits 32 or 64) so that it reads back as a
// float; see the rules above.
func appendFloat(dst []byte, f float64, bits int, m mode) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		var s string
		switch {
		case math.IsNaN(f):
			s = ".nan"
		case f > 0:
			s = ".inf"
		default:
			s = "-.inf"
		}
		switch m {
		case exactJSON:
			return nil, fmt.Errorf("float %v has no JSON form", f)
		case flowYAML:
			return append(dst, s...), nil
		}
		return appendText(dst, s, m)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendFloat(dst, f, 'f', 1, bits), nil
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, bits)
	if m != flowYAML || strings.IndexByte(string(dst[start:]), '.') >= 0 {
		return dst, nil
	}
	e := strings.IndexAny(string(dst[start:]), "eE")
	if e < 0 {
		return append(dst, ".0"...), nil
	}
	exp := string(dst[start+e:])
	return append(append(dst[:start+e], ".0"...), exp...), nil
}

// appendList writes n elements, each by elem, as a JSON array or a YAML
// flow sequence.
func appendList(dst []byte, n int, m mode, elem func([]byte, int) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = appendSep(dst, m)
		}
		var err error
		if dst, err = elem(dst, i); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendMap writes the entries of keys (sorted), each value by val, as a
// JSON object or a YAML flow mapping.
func appendMap(dst []byte, keys []string, m mode, val func([]byte, string) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = appendSep(dst, m)
		}
		if m == exactJSON && !utf8.ValidString(k) {
			return nil, notUTF8("key", k)
		}
		dst, _ = appendText(dst, k, m)
		if m == flowYAML {
			dst = append(dst, ": "...)
		} else {
			dst = append(dst, ':')
		}
		var err error
		if dst, err = val(dst, k); err != nil {
			if m == exactJSON {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendSep(dst []byte, m mode) []byte {
	if m == flowYAML {
		return append(dst, ", "...)
	}
	return append(dst, ',')
}

// errTooDeep: the receiver reads values nested at most yamlparams.MaxDepth
// deep (a params object is at depth 0).
var errTooDeep = fmt.Errorf("nested deeper than %d levels", yamlparams.MaxDepth)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// appendReflect walks the Go kinds appendValue does not name: named
// types, every integer and float size, slices and arrays of any element,
// maps with string keys, pointers and interfaces. What it cannot write
// (a struct, a map with other keys, an integer beyond 64 bits) exactJSON
// refuses and the other modes write as appendMarshaled does.
func appendReflect(dst []byte, v reflect.Value, m mode, depth int) ([]byte, error) {
	if m == exactJSON && depth > yamlparams.MaxDepth {
		return nil, errTooDeep
	}
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return appendNull(dst, m), nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return appendNull(dst, m), nil
	}
	switch v.Kind() {
	case reflect.String:
		return appendText(dst, v.String(), m)
	case reflect.Bool:
		return strconv.AppendBool(dst, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := v.Uint()
		if u > math.MaxInt64 && m == exactJSON {
			return nil, fmt.Errorf("integer %d is beyond the receiver's integers (at most %d)", u, int64(math.MaxInt64))
		}
		return strconv.AppendUint(dst, u, 10), nil
	case reflect.Float32, reflect.Float64:
		return appendFloat(dst, v.Float(), v.Type().Bits(), m)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() && m == exactJSON {
			return appendNull(dst, m), nil
		}
		return appendList(dst, v.Len(), m, func(dst []byte, i int) ([]byte, error) {
			return appendReflect(dst, v.Index(i), m, depth+1)
		})
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			if m != exactJSON {
				return appendMarshaled(dst, v, m)
			}
			return nil, fmt.Errorf("a map with %s keys (keys must be strings)", v.Type().Key())
		}
		if v.IsNil() && m == exactJSON {
			return appendNull(dst, m), nil
		}
		vals := make(map[string]reflect.Value, v.Len())
		for it := v.MapRange(); it.Next(); {
			vals[it.Key().String()] = it.Value()
		}
		return appendMap(dst, sortedKeys(vals), m, func(dst []byte, k string) ([]byte, error) {
			return appendReflect(dst, vals[k], m, depth+1)
		})
	}
	if m != exactJSON {
		return appendMarshaled(dst, v, m)
	}
	return nil, fmt.Errorf("a Go %s has no YAML kind (use string, bool, a number, a slice or a map)", v.Type())
}

// notUTF8 is exactJSON's error for a string (or key) s that is not UTF-8:
// the string, its bad bytes shown as U+FFFD, cut short when long, and
// where the first bad byte is.
func notUTF8(what, s string) error {
	bad := 0
	for bad < len(s) {
		r, n := utf8.DecodeRuneInString(s[bad:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		bad += n
	}
	shown := strings.ToValidUTF8(s, "\uFFFD")
	if len(shown) > 64 {
		cut := 64
		for !utf8.RuneStart(shown[cut]) {
			cut--
		}
		shown = fmt.Sprintf("%s...(%d bytes)", shown[:cut], len(shown))
	}
	return fmt.Errorf("%s %q is not valid UTF-8 (byte %d)", what, shown, bad)
}
