package applier

import (
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// Values as the transaction compares and prints them: the default
// in-sync test (ValuesEqual) and the default rendering in messages
// (FormatValue).

// ValuesEqual is the default in-sync test: equality of munged values;
// arrays element by element, in order unless unordered. Integers compare
// across int/int64 and strings of digits are not numbers.
func ValuesEqual(is, should any, unordered bool) bool {
	switch s := should.(type) {
	case string:
		i, ok := is.(string)
		return ok && i == s
	case bool:
		i, ok := is.(bool)
		return ok && i == s
	case int64:
		switch i := is.(type) {
		case int64:
			return i == s
		case int:
			return int64(i) == s
		}
		return false
	case nil:
		return is == nil
	case []any:
		il, ok := toList(is)
		if !ok || len(il) != len(s) {
			return false
		}
		if !unordered {
			for k := range s {
				if !ValuesEqual(il[k], s[k], false) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(il))
	outer:
		for _, sv := range s {
			for k, iv := range il {
				if !used[k] && ValuesEqual(iv, sv, false) {
					used[k] = true
					continue outer
				}
			}
			return false
		}
		return true
	default:
		return reflect.DeepEqual(is, should)
	}
}

func toList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// QuoteValue renders v for a message as Puppet's is_to_s and should_to_s
// do: scalars in single quotes, arrays as ['a', 'b'], through the
// attribute's Format when it has one (a may be nil).
func QuoteValue(a *Attr, v any) string {
	var s string
	if a != nil && a.Format != nil && v != nil {
		s = a.Format(v)
	} else {
		s = FormatValue(v)
	}
	switch v.(type) {
	case []any, []string, map[string]any:
		return s
	case int64, int, float64:
		// A number is Puppet's Integer or Float, which its messages
		// print bare (gid changed 47001 to 47002, defined 'message' as
		// 5); a string of digits stays quoted ('0644').
		return s
	}
	return "'" + s + "'"
}

// FormatValue renders a munged value the way event messages and describe
// print it: strings as they are, arrays as ['a', 'b'].
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = "'" + e + "'"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = "'" + FormatValue(e) + "'"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}

// RubyClass is the class Puppet's Ruby gives a value in its messages
// ("must be a String not TrueClass"): Integer, Float, TrueClass,
// FalseClass, String, Array, Hash, NilClass. The types name a value of
// the wrong kind with it.
func RubyClass(v any) string {
	switch x := v.(type) {
	case int, int64, uint64, *big.Int:
		return "Integer"
	case float64:
		return "Float"
	case bool:
		if x {
			return "TrueClass"
		}
		return "FalseClass"
	case string:
		return "String"
	case []any:
		return "Array"
	case map[string]any:
		return "Hash"
	case nil:
		return "NilClass"
	}
	return fmt.Sprintf("%T", v)
}
