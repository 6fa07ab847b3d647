package applier_test

import (
	"math"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
)

func TestMungeValueKinds(t *testing.T) {
	upper := func(v any) (any, error) { return v.(string) + "!", nil }
	positive := func(v any) error {
		if v.(int64) <= 0 {
			return assert.AnError
		}
		return nil
	}
	cases := []struct {
		name    string
		attr    applier.Attr
		raw     any
		want    any
		wantErr string
	}{
		{"string as is", applier.Attr{Kind: applier.KindString}, "x y", "x y", ""},
		{"string from int", applier.Attr{Kind: applier.KindString}, int64(42), "42", ""},
		{"string from int (plain)", applier.Attr{Kind: applier.KindString}, 7, "7", ""},
		{"string from float", applier.Attr{Kind: applier.KindString}, 1.5, "1.5", ""},
		{"string from bool", applier.Attr{Kind: applier.KindString}, true, "true", ""},
		{"string rejects array", applier.Attr{Kind: applier.KindString}, []any{"a"}, nil, "expected a single value, got an array"},
		{"string rejects hash", applier.Attr{Kind: applier.KindString}, map[string]any{"a": 1}, nil, "got a hash"},
		{"string pattern ok", applier.Attr{Kind: applier.KindString, Patterns: []*regexp.Regexp{regexp.MustCompile(`^[a-z]+$`)}}, "abc", "abc", ""},
		{"string pattern bad", applier.Attr{Kind: applier.KindString, Patterns: []*regexp.Regexp{regexp.MustCompile(`^[a-z]+$`)}}, "ab1", nil, `Invalid value "ab1". Valid values match /^[a-z]+$/.`},
		{"integer from int64", applier.Attr{Kind: applier.KindInteger}, int64(3), int64(3), ""},
		{"integer from int", applier.Attr{Kind: applier.KindInteger}, 3, int64(3), ""},
		{"integer from uint64", applier.Attr{Kind: applier.KindInteger}, uint64(9), int64(9), ""},
		{"integer from string", applier.Attr{Kind: applier.KindInteger}, "-12", int64(-12), ""},
		{"integer from integral float", applier.Attr{Kind: applier.KindInteger}, 4.0, int64(4), ""},
		{"integer rejects fraction", applier.Attr{Kind: applier.KindInteger}, 4.5, nil, "expected an integer"},
		{"integer rejects words", applier.Attr{Kind: applier.KindInteger}, "many", nil, "expected an integer, got 'many'"},
		{"integer literal value allowed", applier.Attr{Kind: applier.KindInteger, Values: []string{"absent"}}, "absent", "absent", ""},
		{"integer bad with values", applier.Attr{Kind: applier.KindInteger, Values: []string{"absent"}}, "x", nil, `Invalid value "x". Valid values are absent.`},
		{"integer validate ok", applier.Attr{Kind: applier.KindInteger, Validate: positive}, 5, int64(5), ""},
		{"integer validate fails", applier.Attr{Kind: applier.KindInteger, Validate: positive}, -5, nil, assert.AnError.Error()},
		{"boolean true", applier.Attr{Kind: applier.KindBoolean}, true, true, ""},
		{"boolean 'yes'", applier.Attr{Kind: applier.KindBoolean}, "yes", true, ""},
		{"boolean 'False'", applier.Attr{Kind: applier.KindBoolean}, "False", false, ""},
		{"boolean 'no'", applier.Attr{Kind: applier.KindBoolean}, "no", false, ""},
		{"boolean rejects", applier.Attr{Kind: applier.KindBoolean}, "maybe", nil, "expected a boolean"},
		{"boolean rejects number", applier.Attr{Kind: applier.KindBoolean}, int64(1), nil, "expected a boolean"},
		{"enum ok", applier.Attr{Kind: applier.KindEnum, Values: []string{"a", "b"}}, "b", "b", ""},
		{"enum from YAML boolean", applier.Attr{Kind: applier.KindEnum, Values: []string{"true", "false"}}, true, "true", ""},
		{"enum alias", applier.Attr{Kind: applier.KindEnum, Values: []string{"present", "absent"}, Aliases: map[string]string{"installed": "present"}}, "installed", "present", ""},
		{"enum bad", applier.Attr{Kind: applier.KindEnum, Values: []string{"a", "b"}}, "x", nil, `Invalid value "x". Valid values are a, b.`},
		{"enum case-sensitive", applier.Attr{Kind: applier.KindEnum, Values: []string{"a"}}, "A", nil, `Invalid value "A"`},
		{"enum pattern", applier.Attr{Kind: applier.KindEnum, Values: []string{"a"}, Patterns: []*regexp.Regexp{regexp.MustCompile(`^\d+$`)}}, int64(12), "12", ""},
		{"enum munge", applier.Attr{Kind: applier.KindEnum, Values: []string{"a"}, Munge: upper}, "a", "a!", ""},
		{"path ok", applier.Attr{Kind: applier.KindPath}, "/etc/motd", "/etc/motd", ""},
		{"path trailing slash", applier.Attr{Kind: applier.KindPath}, "/etc//ssh/", "/etc/ssh", ""},
		{"path root", applier.Attr{Kind: applier.KindPath}, "/", "/", ""},
		{"path relative", applier.Attr{Kind: applier.KindPath}, "etc/motd", nil, "File paths must be fully qualified, not 'etc/motd'"},
		{"path literal value", applier.Attr{Kind: applier.KindPath, Values: []string{"absent"}}, "absent", "absent", ""},
		{"any keeps hash", applier.Attr{Kind: applier.KindAny}, map[string]any{"a": "b"}, map[string]any{"a": "b"}, ""},
		{"any normalises int", applier.Attr{Kind: applier.KindAny}, 3, int64(3), ""},
		{"array from scalar", applier.Attr{Kind: applier.KindString, Array: true}, "a", []any{"a"}, ""},
		{"array of ints", applier.Attr{Kind: applier.KindInteger, Array: true}, []any{"1", 2}, []any{int64(1), int64(2)}, ""},
		{"array empty", applier.Attr{Kind: applier.KindString, Array: true}, []any{}, []any{}, ""},
		{"array element bad", applier.Attr{Kind: applier.KindInteger, Array: true}, []any{"1", "x"}, nil, "expected an integer, got 'x'"},
		{"array of enums with alias", applier.Attr{Kind: applier.KindEnum, Array: true, Values: []string{"a", "b"}, Aliases: map[string]string{"A": "a"}}, []any{"A", "b"}, []any{"a", "b"}, ""},
		{"string munge", applier.Attr{Kind: applier.KindString, Munge: upper}, "hi", "hi!", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applier.MungeValue(&tc.attr, tc.raw)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"/": "/", "//": "/", "/a": "/a", "/a/": "/a", "/a//b///": "/a/b", "/a/./b": "/a/./b",
	} {
		assert.Equal(t, want, applier.CleanPath(in), in)
	}
}

func TestValuesEqual(t *testing.T) {
	cases := []struct {
		is, should any
		unordered  bool
		want       bool
	}{
		{"a", "a", false, true},
		{"a", "b", false, false},
		{nil, "a", false, false},
		{int64(3), int64(3), false, true},
		{3, int64(3), false, true},
		{"3", int64(3), false, false},
		{true, true, false, true},
		{[]any{"a", "b"}, []any{"a", "b"}, false, true},
		{[]any{"b", "a"}, []any{"a", "b"}, false, false},
		{[]any{"b", "a"}, []any{"a", "b"}, true, true},
		{[]any{"a", "a"}, []any{"a", "b"}, true, false},
		{[]string{"a"}, []any{"a"}, false, true},
		{"a", []any{"a"}, false, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, applier.ValuesEqual(tc.is, tc.should, tc.unordered), "%v vs %v", tc.is, tc.should)
	}
}

func TestInSyncHelpers(t *testing.T) {
	fold := []struct {
		is, should any
		want       bool
	}{
		{"ABC", "abc", true},
		{"abc", "abd", false},
		{[]any{"A", "b"}, []any{"a", "B"}, true},
		{[]any{"A"}, []any{"a", "b"}, false},
		{nil, "a", false},
		{int64(1), int64(1), true},
	}
	for _, tc := range fold {
		assert.Equal(t, tc.want, applier.FoldInSync(tc.is, tc.should), "fold %v %v", tc.is, tc.should)
	}
	num := []struct {
		is, should any
		want       bool
	}{
		{"3", int64(3), true},
		{"03", int64(3), true},
		{3.0, "3", true},
		{"3.5", int64(3), false},
		{"abc", "abc", true},
		{"abc", int64(3), false},
		{nil, int64(0), false},
	}
	for _, tc := range num {
		assert.Equal(t, tc.want, applier.NumericInSync(tc.is, tc.should), "num %v %v", tc.is, tc.should)
	}
}

// TestMungeAccepts: an attribute's declared YAML kinds decide what it
// takes, as Puppet's attribute does (see integration/testdata/
// oracle-values.json for Puppet's answers, attribute by attribute).
func TestMungeAccepts(t *testing.T) {
	str := applier.Attr{Kind: applier.KindString, Accepts: applier.AcceptString}
	first := applier.Attr{Kind: applier.KindString, Accepts: applier.AcceptString | applier.AcceptInteger | applier.AcceptFirstOfList}
	last := applier.Attr{Kind: applier.KindString, Accepts: applier.AcceptString | applier.AcceptLastOfList}
	anyStr := applier.Attr{Kind: applier.KindAny, Accepts: applier.AcceptString}
	cases := []struct {
		name    string
		attr    applier.Attr
		raw     any
		want    any
		wantErr string
	}{
		{"string taken", str, "x", "x", ""},
		{"integer refused", str, int64(42), nil, "expected a string, got an integer (42)"},
		{"float refused", str, 1.5, nil, "expected a string, got a float (1.5)"},
		{"boolean refused", str, false, nil, "expected a string, got a boolean (false)"},
		{"hash refused", str, map[string]any{"a": "b"}, nil, "got a hash"},
		{"list refused", str, []any{"a"}, nil, "expected a string, got an array"},
		{"first of a list", first, []any{"a", int64(2)}, "a", ""},
		{"every element checked", first, []any{"a", true}, nil, "expected a string or an integer, got a boolean (true)"},
		{"empty list refused", first, []any{}, nil, "got an empty array"},
		{"nested list refused", first, []any{[]any{"a"}}, nil, "an array in the array"},
		{"integer as YAML wrote it", first, int64(7), "7", ""},
		{"last of a list", last, []any{"one", "two"}, "two", ""},
		{"KindAny list left to Munge", anyStr, []any{"a", "b"}, []any{"a", "b"}, ""},
		{"KindAny scalar checked", anyStr, int64(1), nil, "expected a string, got an integer (1)"},
		{"zero Accepts: any scalar", applier.Attr{Kind: applier.KindString}, true, "true", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applier.MungeValue(&tc.attr, tc.raw)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in      string
		id      int
		numeric bool
		err     bool
	}{
		{"0", 0, true, false},
		{"4294967294", 4294967294, true, false},
		{"4294967295", 0, true, true},
		{"4294967296", 0, true, true},
		{"99999999999", 0, true, true},
		{"18446744073709551616", 0, true, true},
		{"alice", 0, false, false},
		{"-1", 0, false, false},
		{"", 0, false, false},
	} {
		id, numeric, err := applier.ParseID(tc.in)
		assert.Equal(t, [2]any{tc.id, tc.numeric}, [2]any{id, numeric}, tc.in)
		assert.Equal(t, tc.err, err != nil, tc.in)
		assert.Equal(t, tc.err, applier.ValidID("owner")(tc.in) != nil, tc.in)
	}
}

// TestRange: Attr.Range bounds integers, floats and numbers a Munge kept
// as digits, after Validate; names, Values and in-range numbers pass.
func TestRange(t *testing.T) {
	id := &applier.Attr{Name: "uid", Kind: applier.KindAny, Range: applier.IDRange, Values: []string{"absent"}}
	secs := &applier.Attr{Name: "timeout", Kind: applier.KindAny, Range: &applier.Range{Min: 0, Max: applier.MaxSeconds, What: "timeout"}}
	for _, c := range []struct {
		a    *applier.Attr
		raw  any
		want string // "" accepted
	}{
		{id, int64(0), ""},
		{id, int64(applier.MaxID), ""},
		{id, int64(applier.MaxID + 1), "id 4294967295 is out of range (0 to 4294967294)"},
		{id, int64(-1), "id -1 is out of range (0 to 4294967294)"},
		{id, "4294967296", "id 4294967296 is out of range (0 to 4294967294)"},
		{id, "99999999999999999999999", "id 99999999999999999999999 is out of range (0 to 4294967294)"},
		{id, "-99999999999999999999999", "id -99999999999999999999999 is out of range (0 to 4294967294)"},
		{id, "+12", ""},
		{id, "root", ""},
		{id, "absent", ""},
		{id, "-", ""},
		{secs, 1.5, ""},
		{secs, float64(applier.MaxSeconds) * 2, "timeout 18446744072 is out of range (0 to 9223372036)"},
		{secs, 1e300, "timeout 1e+300 is out of range (0 to 9223372036)"},
		{secs, math.NaN(), "timeout NaN is out of range (0 to 9223372036)"},
		{&applier.Attr{Name: "n", Kind: applier.KindInteger, Range: applier.NonNegative}, int64(-1), "value -1 is out of range (0 or more)"},
	} {
		_, err := applier.MungeValue(c.a, c.raw)
		if c.want == "" {
			assert.NoError(t, err, "%v", c.raw)
		} else if assert.Error(t, err, "%v", c.raw) {
			assert.Equal(t, c.want, err.Error())
		}
	}
	assert.Equal(t, "0 to 4294967294", applier.IDRange.String())
}
