package applier

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParamError is a bad value for one attribute. It prints as Puppet does:
// `Parameter mode failed on File[/x]: <reason>`.
type ParamError struct {
	// Resource is the reference, e.g. File[/x]; left empty by a type's
	// Validate or a provider's New, it is filled in (by named, the one
	// place that does) before the error is answered.
	Resource string
	// Param is the attribute's name.
	Param string
	// Err is the rule that was broken.
	Err error
}

func (e *ParamError) Error() string {
	if e.Resource == "" {
		return "Parameter " + e.Param + " failed: " + e.Err.Error()
	}
	return "Parameter " + e.Param + " failed on " + e.Resource + ": " + e.Err.Error()
}

func (e *ParamError) Unwrap() error { return e.Err }

// named fills in r's reference in err when err is a ParamError that names
// no resource; it returns err, and reports whether it is a ParamError.
func named(r *Resource, err error) (error, bool) {
	var pe *ParamError
	if !errors.As(err, &pe) {
		return err, false
	}
	if pe.Resource == "" {
		pe.Resource = r.Ref()
	}
	return err, true
}

// ParamErrorf builds a ParamError for attribute param; Type.Validate
// functions return it to name the attribute at fault.
func ParamErrorf(param, format string, args ...any) error {
	return &ParamError{Param: param, Err: fmt.Errorf(format, args...)}
}

// InvalidValueError is Puppet's wording for a value outside an
// attribute's Values and Patterns.
func InvalidValueError(a *Attr, v string) error {
	var b strings.Builder
	b.WriteString("Invalid value ")
	b.WriteString(strconv.Quote(v))
	b.WriteString(".")
	if len(a.Values) > 0 {
		b.WriteString(" Valid values are ")
		b.WriteString(strings.Join(a.Values, ", "))
		b.WriteString(".")
		if c := closest(v, a.Values); c != "" {
			b.WriteString(" Did you mean '" + c + "'?")
		}
	}
	if len(a.Patterns) > 0 {
		b.WriteString(" Valid values match ")
		for i, re := range a.Patterns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("/" + re.String() + "/")
		}
		b.WriteString(".")
	}
	return errors.New(b.String())
}

// MungeValue converts a raw request value for attribute a into its
// canonical form exactly as a request would: kind conversion, aliases,
// values and patterns, Munge, Validate. Arrays become []any.
func MungeValue(a *Attr, raw any) (any, error) { return mungeAttr(a, raw) }

func mungeAttr(a *Attr, raw any) (any, error) {
	if !a.Array {
		if l, isList := raw.([]any); isList && a.Accepts&(AcceptFirstOfList|AcceptLastOfList) != 0 {
			return mungeFirst(a, l)
		} else if isList && a.Accepts != 0 && a.Kind != KindAny {
			return nil, fmt.Errorf("expected %s, got an array", a.Accepts)
		}
		if _, isList := raw.([]any); isList && a.Kind != KindAny {
			return nil, fmt.Errorf("expected a single value, got an array")
		}
		return mungeOne(a, raw)
	}
	switch l := raw.(type) {
	case []any:
		return mungeList(a, l)
	case []string:
		return mungeList(a, l)
	default:
		v, err := mungeOne(a, raw)
		if err != nil {
			return nil, err
		}
		return []any{v}, nil
	}
}

// mungeFirst is Puppet's property given a list where it takes one value:
// every element is checked and munged, the first (or, AcceptLastOfList,
// the last) is the value.
func mungeFirst(a *Attr, l []any) (any, error) {
	if len(l) == 0 {
		return nil, fmt.Errorf("expected %s, got an empty array", a.Accepts&^(AcceptFirstOfList|AcceptLastOfList))
	}
	last := a.Accepts&AcceptLastOfList != 0
	var first any
	for i, e := range l {
		if _, isList := e.([]any); isList {
			return nil, fmt.Errorf("expected %s, got an array in the array", a.Accepts&^(AcceptFirstOfList|AcceptLastOfList))
		}
		v, err := mungeOne(a, e)
		if err != nil {
			return nil, err
		}
		if i == 0 || last {
			first = v
		}
	}
	return first, nil
}

// yamlKind is the ValueKinds bit of a decoded value (0 for nil and lists).
func yamlKind(raw any) ValueKinds {
	switch raw.(type) {
	case string:
		return AcceptString
	case int64, int, int32, uint32, uint64:
		return AcceptInteger
	case float64:
		return AcceptFloat
	case bool:
		return AcceptBoolean
	case map[string]any:
		return AcceptMap
	}
	return 0
}

// String names the kinds, for errors: "a string or an integer".
func (k ValueKinds) String() string {
	var names []string
	for _, n := range []struct {
		bit  ValueKinds
		name string
	}{{AcceptString, "a string"}, {AcceptInteger, "an integer"}, {AcceptFloat, "a float"},
		{AcceptBoolean, "a boolean"}, {AcceptMap, "a hash"}, {AcceptFirstOfList | AcceptLastOfList, "an array"}} {
		if k&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// describeKind names a decoded value's kind with the value, for errors.
func describeKind(raw any) string {
	s, ok := scalarString(raw)
	switch k := yamlKind(raw); {
	case k == AcceptMap:
		return "a hash"
	case ok:
		return k.String() + " (" + s + ")"
	}
	return describeRaw(raw)
}

// mungeList munges each element of an array attribute's value.
func mungeList[E any](a *Attr, l []E) ([]any, error) {
	out := make([]any, len(l))
	for i, e := range l {
		v, err := mungeOne(a, e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// scalarString renders a decoded scalar the way YAML wrote it; ok is false
// for nil, lists and maps.
func scalarString(raw any) (string, bool) {
	switch x := raw.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	default:
		return "", false
	}
}

func describeRaw(raw any) string {
	switch raw.(type) {
	case nil:
		return "an undefined value"
	case []any, []string:
		return "an array"
	case map[string]any:
		return "a hash"
	default:
		return fmt.Sprintf("a %T", raw)
	}
}

func inValues(vals []string, s string) bool {
	for _, v := range vals {
		if v == s {
			return true
		}
	}
	return false
}

func mungeOne(a *Attr, raw any) (any, error) {
	// Values of other Go types (a default's, a list given whole to a
	// KindAny attribute) are the Munge's business.
	if k := yamlKind(raw); a.Accepts != 0 && k != 0 && a.Accepts&k == 0 {
		return nil, fmt.Errorf("expected %s, got %s", a.Accepts&^(AcceptFirstOfList|AcceptLastOfList), describeKind(raw))
	}
	if a.Kind == KindAny {
		v := normaliseAny(raw)
		return finish(a, v)
	}
	s, ok := scalarString(raw)
	if !ok {
		return nil, fmt.Errorf("expected a single value, got %s", describeRaw(raw))
	}
	if a.Aliases != nil {
		if c, ok := a.Aliases[s]; ok {
			s, raw = c, c
		}
	}
	if a.Kind == KindEnum {
		if !inValues(a.Values, s) && !matchesAny(a, s) {
			return nil, InvalidValueError(a, s)
		}
		return finish(a, boxed(raw, s))
	}
	// For the other kinds a literal from Values (e.g. "absent") is an
	// extra allowance, kept as that string without Munge or Validate.
	if len(a.Values) > 0 && inValues(a.Values, s) {
		return boxed(raw, s), nil
	}
	if len(a.Patterns) > 0 && !matchesAny(a, s) {
		return nil, InvalidValueError(a, s)
	}
	var v any
	switch a.Kind {
	case KindString:
		v = boxed(raw, s)
	case KindInteger:
		i, err := toInt(raw, s)
		if err != nil {
			if len(a.Values) > 0 {
				return nil, InvalidValueError(a, s)
			}
			return nil, err
		}
		v = i
	case KindBoolean:
		b, err := toBool(raw, s)
		if err != nil {
			if len(a.Values) > 0 {
				return nil, InvalidValueError(a, s)
			}
			return nil, err
		}
		v = b
	case KindPath:
		if !strings.HasPrefix(s, "/") {
			return nil, fmt.Errorf("File paths must be fully qualified, not '%s'", s)
		}
		v = boxed(raw, CleanPath(s))
	default:
		return nil, fmt.Errorf("unknown kind %d", a.Kind)
	}
	return finish(a, v)
}

// boxed returns s as an interface value, reusing raw when it already holds
// the same string: converting a string to an interface allocates, and a
// request's values mostly arrive as the strings they stay.
func boxed(raw any, s string) any {
	if r, ok := raw.(string); ok && r == s {
		return raw
	}
	return s
}

func finish(a *Attr, v any) (any, error) {
	if a.Munge != nil {
		m, err := a.Munge(v)
		if err != nil {
			return nil, err
		}
		v = m
	}
	if a.Validate != nil {
		if err := a.Validate(v); err != nil {
			return nil, err
		}
	}
	if a.Range != nil {
		if err := a.Range.Check(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func matchesAny(a *Attr, s string) bool {
	for _, re := range a.Patterns {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func toInt(raw any, s string) (int64, error) {
	switch x := raw.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d is too large", x)
		}
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("expected an integer, got %s", s)
		}
		return int64(x), nil
	case string:
		t := strings.TrimSpace(x)
		i, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("expected an integer, got '%s'", x)
		}
		return i, nil
	default:
		return 0, fmt.Errorf("expected an integer, got '%s'", s)
	}
}

func toBool(raw any, s string) (bool, error) {
	if b, ok := raw.(bool); ok {
		return b, nil
	}
	switch strings.ToLower(s) {
	case "true", "yes":
		return true, nil
	case "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("expected a boolean (true or false), got '%s'", s)
}

// normaliseAny turns the integer forms a decoder may produce into int64.
func normaliseAny(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
	}
	return v
}

// CleanPath drops repeated and trailing slashes from an absolute path
// ("/a//b/" becomes "/a/b"); "/" stays "/". It does not resolve "..".
func CleanPath(s string) string {
	// The common case, already clean, with two vectorised searches.
	if len(s) <= 1 || s[len(s)-1] != '/' && !strings.Contains(s, "//") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '/' && len(b) > 0 && b[len(b)-1] == '/' {
			continue
		}
		b = append(b, s[i])
	}
	if len(b) > 1 && b[len(b)-1] == '/' {
		b = b[:len(b)-1]
	}
	return string(b)
}
