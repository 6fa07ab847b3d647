// Package dsl writes values in the Puppet language, as `puppet resource`
// prints them and a manifest takes them: single-quoted strings with
// backslash and quote escaped, lists, hashes in key order, undef.
package dsl

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// String is s as a single-quoted Puppet string.
func String(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// Value is v as a Puppet value; an integral float keeps its ".0".
func Value(v any) string {
	switch x := v.(type) {
	case string:
		return String(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Value(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = String(k) + " => " + Value(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case nil:
		return "undef"
	}
	return String(fmt.Sprint(v))
}
