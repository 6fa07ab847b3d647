package yamlparams

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// The expectations below were checked against Ruby 3.1's Psych, which
// Puppet 7 uses: ruby -ryaml -e 'p YAML.safe_load(ARGV[0], aliases: true)'.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]any
		err  string
	}{
		{"flow", "{ensure: file, mode: '0644'}", map[string]any{"ensure": "file", "mode": "0644"}, ""},
		{"block", "ensure: file\ncontent: |\n  line1\n  line2\n", map[string]any{"ensure": "file", "content": "line1\nline2\n"}, ""},
		{"empty mapping", "{}", map[string]any{}, ""},
		{"yaml 1.1 booleans", "{a: yes, b: Yes, c: YES, d: yEs, e: on, f: Off, g: NO, h: true, i: False, j: tRue}",
			map[string]any{"a": true, "b": true, "c": true, "d": true, "e": true, "f": false, "g": false, "h": true, "i": false, "j": true}, ""},
		{"y and n are strings", "{a: y, b: n, c: Y, d: N}", map[string]any{"a": "y", "b": "n", "c": "Y", "d": "N"}, ""},
		{"quoted booleans are strings", `{a: 'yes', b: "no"}`, map[string]any{"a": "yes", "b": "no"}, ""},
		{"nulls", "{a: ~, b: null, c: Null, d: NULL, e: }", map[string]any{"a": nil, "b": nil, "c": nil, "d": nil, "e": nil}, ""},
		{"octal and friends", "{a: 0644, b: 0o644, c: 0x1F, d: 1_000, e: 0b101, f: +12, g: 012, h: 09, i: -0x1F}",
			map[string]any{"a": int64(420), "b": "0o644", "c": int64(31), "d": int64(1000), "e": int64(5), "f": int64(12), "g": int64(10), "h": "09", "i": int64(-31)}, ""},
		{"floats", "{a: 1.5, b: .5, c: +.5, d: 1., e: 1.e+5, f: 1_0.5, g: 1.5E-3, h: 1e3, i: 1.5e3, j: 1.0e+3}",
			map[string]any{"a": 1.5, "b": 0.5, "c": 0.5, "d": 1.0, "e": 100000.0, "f": 10.5, "g": 0.0015, "h": "1e3", "i": "1.5e3", "j": 1000.0}, ""},
		{"base 60", "{a: 1:20, b: 1:20.5, c: -1:20}", map[string]any{"a": int64(4800), "b": 4830.0, "c": int64(-2400)}, ""},
		{"merge keys", "{<<: [{a: 1}, {a: 2, b: 3}], a: 0}", map[string]any{"a": int64(0), "b": int64(3)}, ""},
		{"merge overrides earlier", "{a: 1, <<: {a: 2}}", map[string]any{"a": int64(2)}, ""},
		{"aliases", "{a: &x [1, 2], b: *x}", map[string]any{"a": []any{int64(1), int64(2)}, "b": []any{int64(1), int64(2)}}, ""},
		{"str tag", "{a: !!str 12, b: !!int '12', c: !foo bar}", map[string]any{"a": "12", "b": int64(12), "c": "bar"}, ""},
		{"binary", "{a: !!binary aGk=}", map[string]any{"a": "hi"}, ""},
		{"long words stay strings", "{a: nullable, b: yesterday, c: onion}", map[string]any{"a": "nullable", "b": "yesterday", "c": "onion"}, ""},
		{"unicode", "{a: grüße, b: 日本}", map[string]any{"a": "grüße", "b": "日本"}, ""},
		{"invalid month is a string", "{a: 2001-13-14}", map[string]any{"a": "2001-13-14"}, ""},

		{"empty", "", nil, "empty document"},
		{"blank", "  \n", nil, "empty document"},
		{"null document", "~", nil, "got null"},
		{"list", "[a, b]", nil, "got a list"},
		{"scalar", "foo", nil, "got a string"},
		{"broken", "{this: will: not: parse}", nil, "invalid YAML"},
		{"date", "{a: 2001-12-14}", nil, "is a date"},
		{"impossible date is still a date", "{a: 2001-02-30}", nil, "is a date"},
		{"time", "{a: 2001-12-14 21:59:43.10 -5}", nil, "is a timestamp"},
		{"ruby object", "{a: !ruby/object {}}", nil, "not allowed"},
		{"bad int", "{a: 0b_}", nil, "not a valid integer"},
		{"big int", "{a: 123456789012345678901234567890}", nil, "out of range"},
		{"self alias", "{x: &a [1, *a]}", nil, "nesting deeper"},
		{"deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), nil, "nesting deeper"},
		{"deep mapping", "{a: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}", nil, "nesting deeper"},
		{"unknown alias", "{a: *nope}", nil, "unknown anchor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseNonFinite(t *testing.T) {
	got, err := Parse([]byte("{a: .inf, b: -.Inf, c: .NaN, d: +.INF}"))
	require.NoError(t, err)
	assert.True(t, math.IsInf(got["a"].(float64), 1))
	assert.True(t, math.IsInf(got["b"].(float64), -1))
	assert.True(t, math.IsNaN(got["c"].(float64)))
	assert.True(t, math.IsInf(got["d"].(float64), 1))
}

// A billion-laughs document is refused without building the expansion:
// it would make 9^9 (387 million) values; the work done, counted in
// allocations (deterministic, unlike a time), stays within what
// MaxValues values cost.
func TestParseBillionLaughs(t *testing.T) {
	doc := []byte(billionLaughs())
	_, err := Parse(doc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than")
	allocs := testing.AllocsPerRun(1, func() { _, _ = Parse(doc) })
	assert.LessOrEqual(t, allocs, float64(MaxValues+MaxValues/10))
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [")
		for k := 0; k < 9; k++ {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = n
	}
	return b.String()
}

// The fast path takes the common documents and agrees with the general
// path on them; it declines what it is not sure of.
func TestFastParams(t *testing.T) {
	takes := []string{
		"{ensure: file, mode: '0644'}", "{}", " { } ", "{ensure: file}", "{message: hi there}",
		"{a: yes, b: 0644, c: 1.5, e: -3, f: /etc/motd, g: 'it''s', h: \"q\", i: .inf}",
		"{ ensure : present , owner : root }",
		"{a: \"x\\ty\"}", "{a: 'café'}", `{content: "hello\n", mode: '0644'}`,
		"ensure: file\nmode: '0644'\ncontent: |\n  hello\n  world\n",
		"content: |-\n  a\n\n  b\n\n\nmode: '0600'", "content: |+\n  a\n\n", "a: |\n    x\n     y\n", "a: b\nc: 1.5\n", "ensure: file",
	}
	for _, s := range takes {
		fast, ok := fastParams([]byte(s))
		require.True(t, ok, "fast path declined %q", s)
		slow, err := parseYAML([]byte(s), nil)
		require.NoError(t, err, s)
		assert.True(t, testutil.EqualValues(fast, slow), "%q: fast %#v, slow %#v", s, fast, slow)
	}
	declines := []string{
		"", "{a: [1]}", "{a: {b: c}}", "{a: b,}", "{a: 2001-12-14}", "{a:b}", "{a: b #c}",
		"{a: \"x\\uffff\"}", "{a: 'caf\u0085'}", "{<<: {a: 1}}", "a: |\n\n  x\n", "a: >\n  x\n", "a: |\n  x\n \n", "a: |2\n  x\n",
		"- a\n", "a:\n  b: c\n", "a: b\n\nc: d\n", "a: b # c\n", " a: b\n", "{a: &x b}", "{a: b} x", "{'a': b}", "{a: }",
		"{a: http://x}", "{a: -}", "{a: b\tc}",
	}
	for _, s := range declines {
		_, ok := fastParams([]byte(s))
		assert.False(t, ok, "fast path took %q", s)
	}
}

// Big documents: many values are refused before yaml.v3 builds them; a big
// string is fine whichever way it is written.
func TestParseBigDocuments(t *testing.T) {
	// 14,000 lines with 112,000 indicator bytes: over the limit unless the
	// scan skips the scalar (kept small: yaml.v3 is slow under -race).
	text := strings.Repeat("a line, with: commas - and [brackets] {braces} 'quotes'\n", 14_000)
	quoted := strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), "\n", `\n`)
	tests := []struct {
		name string
		doc  string
		err  string
		want string // content, when accepted
	}{
		{"flow list", "{a: [" + strings.Repeat("1,", 4<<20) + "1]}", "document has more than 100000 values", ""},
		{"block list", "a:\n" + strings.Repeat("- 1\n", 2<<20), "document has more than 100000 values", ""},
		{"many keys", strings.Repeat("k: v\n", 1<<20), "document has more than 100000 values", ""},
		{"block literal", "ensure: file\ncontent: |\n  " + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n  ") + "\n", "", text},
		{"double quoted", `{ensure: file, content: "` + quoted + `"}`, "", text},
		{"single quoted", "{ensure: file, content: '" + strings.ReplaceAll(strings.ReplaceAll(text, "'", "''"), "\n", "\n\n") + "'}", "", text},
		{"plain text is not a quote", "a: x, \"\nb: [" + strings.Repeat("1,", 1<<20) + "1]\nc: \"", "document has more than 100000 values", ""},
		{"quote in a continuation line", "a: x\n  - \"\nb: [" + strings.Repeat("1,", 1<<20) + "1]\nc: \"", "document has more than 100000 values", ""},
		{"quote at a line start", "a: x\n  \"\nb: [" + strings.Repeat("1,", 1<<20) + "1]\nc: \"", "document has more than 100000 values", ""},
		{"block header in a plain scalar", "a: x |\nb: [" + strings.Repeat("1,", 1<<20) + "1]", "document has more than 100000 values", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(tt.doc)
			got, err := Parse(doc)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				// Refused by the scan, before yaml.v3 builds a node: a
				// handful of allocations for millions of values.
				allocs := testing.AllocsPerRun(1, func() { _, _ = Parse(doc) })
				assert.Less(t, allocs, 20.0)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got["content"])
		})
	}
}

// Literal block scalars, checked with Ruby's Psych.
func TestLiteralBlocks(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"a: |\n  hello", "hello"},
		{"a: |+\n  hello", "hello"},
		{"a: |\n  hello\n\n", "hello\n"},
		{"a: |+\n  hello\n\n\nb: 1", "hello\n\n\n"},
		{"a: |-\n  hello\n\n", "hello"},
		{"a: |\n  one\n\n   two\n", "one\n\n two\n"},
	}
	for _, tt := range tests {
		for name, parse := range map[string]func([]byte) (map[string]any, error){"Parse": Parse, "yaml.v3": func(b []byte) (map[string]any, error) { return parseYAML(b, nil) }} {
			m, err := parse([]byte(tt.doc))
			require.NoError(t, err, "%s %q", name, tt.doc)
			assert.Equal(t, tt.want, m["a"], "%s %q", name, tt.doc)
		}
	}
}

// TestParseIntegerRangeNamesAttribute: an integer beyond 64 bits in a
// top-level value names the attribute, so the error answer says which
// value is at fault (the top-level one, when it is nested).
func TestParseIntegerRangeNamesAttribute(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{uid: 99999999999999999999}", "params: line 1 column 7: uid: integer 99999999999999999999 is out of range (64 bits)"},
		{"ensure: present\ngid: -9223372036854775809\n", "params: line 2 column 6: gid: integer -9223372036854775809 is out of range (64 bits)"},
		{"{returns: [0, 18446744073709551616]}", "params: line 1 column 15: returns: integer 18446744073709551616 is out of range (64 bits)"},
		{"{a: {b: 99999999999999999999}}", "params: line 1 column 9: a: integer 99999999999999999999 is out of range (64 bits)"},
	} {
		_, err := Parse([]byte(c.doc))
		if assert.Error(t, err, c.doc) {
			assert.Equal(t, c.want, err.Error(), c.doc)
		}
	}
}

// A plain value cut at a comma in a flow mapping leaves keys without a
// value; each gets the hint to quote the whole value. Nothing else does.
func TestCommaHints(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want []Hint
	}{
		{"{mode: u=rw,go=r}", []Hint{{Key: "go=r", Text: "quote a value that holds a comma, as in mode: 'u=rw,go=r' (in a flow mapping a plain value ends at the first ',')"}}},
		{"{ensure: file, mode: u=rw,g=r,o=r, owner: root}", []Hint{
			{Key: "g=r", Text: "quote a value that holds a comma, as in mode: 'u=rw,g=r,o=r' (in a flow mapping a plain value ends at the first ',')"},
			{Key: "o=r", Text: "quote a value that holds a comma, as in mode: 'u=rw,g=r,o=r' (in a flow mapping a plain value ends at the first ',')"},
		}},
		{"{message: it's,here}", []Hint{{Key: "here", Text: "quote a value that holds a comma, as in message: 'it''s,here' (in a flow mapping a plain value ends at the first ',')"}}},
		{"{mode: 'u=rw,go=r'}", nil},
		{"{a: b, c: d}", nil},
		{"{a: 'b', c}", nil}, // the value before is quoted: not cut at a comma
		{"{a: b, c: ~}", nil},
		{"mode: u=rw\ngo=r:\n", nil}, // a block mapping
	} {
		var r Reader
		_, err := r.ParseInto([]byte(tt.doc), nil)
		require.NoError(t, err, tt.doc)
		assert.Equal(t, tt.want, r.Hints(), tt.doc)
	}
}
