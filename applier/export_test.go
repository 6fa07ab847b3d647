package applier

import (
	"strconv"
	"strings"
)

// FoldInSync is an Attr.InSync for values compared case-insensitively
// (host names, hex digests): strings by strings.EqualFold, arrays element
// by element in order.
func FoldInSync(is, should any) bool {
	switch s := should.(type) {
	case string:
		i, ok := is.(string)
		return ok && strings.EqualFold(i, s)
	case []any:
		il, ok := toList(is)
		if !ok || len(il) != len(s) {
			return false
		}
		for k := range s {
			if !FoldInSync(il[k], s[k]) {
				return false
			}
		}
		return true
	}
	return ValuesEqual(is, should, false)
}

// NumericInSync is an Attr.InSync for values that may be read back in
// another numeric form: 3, "3", "03" and 3.0 are all in sync.
func NumericInSync(is, should any) bool {
	a, okA := asNumber(is)
	b, okB := asNumber(should)
	if okA && okB {
		return a == b
	}
	return ValuesEqual(is, should, false)
}

// Rebuild exposes buildResource's recycling to the external tests: it
// builds a request of t into reuse's storage, or returns nil on an error.
func Rebuild(t *Type, reuse *Resource, title string, params map[string]any, noop bool) *Resource {
	r, err := t.buildResource(reuse, title, params, noop, buildApply)
	if err != nil {
		return nil
	}
	return r
}

func asNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}
