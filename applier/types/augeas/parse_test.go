package augeas

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCommands(t *testing.T) {
	for _, tc := range []struct {
		in, ctx string
		want    []augCmd
		err     string
	}{
		{in: "set foo bar", ctx: "/files/etc/x", want: []augCmd{{"set", []string{"/files/etc/x/foo", "bar"}}}},
		{in: "set /abs 'a b'", ctx: "/c/", want: []augCmd{{"set", []string{"/abs", "a b"}}}},
		{in: "set $v/x \"q \\\"x\\\" \\\\n\"", want: []augCmd{{"set", []string{"$v/x", `q "x" \\n`}}}},
		{in: "set 'it''s' 'it\\'s'", want: []augCmd{{"set", []string{"it''s", "it's"}}}},
		{in: "set *[canonical = 'db a']/alias x y z", ctx: "/f", want: []augCmd{{"set", []string{"/f/*[canonical = 'db a']/alias", "x"}}}},
		{in: "rm dir/", ctx: "/f", want: []augCmd{{"rm", []string{"/f/dir"}}}},
		{in: "  \n\nclear a\n  touch b  ", want: []augCmd{{"clear", []string{"a"}}, {"touch", []string{"b"}}}},
		{in: "ins 01 after 1", ctx: "/h", want: []augCmd{{"ins", []string{"01", "after", "/h/1"}}}},
		{in: "match * size >= 2", ctx: "/h", want: []augCmd{{"match", []string{"/h/*", "size >= 2"}}}},
		{in: "get k =~ ^a b", want: []augCmd{{"get", []string{"k", "=~", "^a"}}}},
		{in: "size == x", want: []augCmd{{"size", []string{"==", "0"}}}},
		{in: "frob x", err: "Unknown command frob"},
		{in: "set x", err: "missing string argument 2 for set"},
		{in: "get x ~ y", err: "invalid comparator for command get"},
		{in: "set a] b", err: "unmatched ["},
	} {
		got, err := parseCommands([]string{tc.in}, tc.ctx)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseArray(t *testing.T) {
	for in, want := range map[string][]string{
		"[]":                               {},
		" [ 'a' , \"b\" ] ":                {"a", "b"},
		`['it\'s', "q\"\t\x41\u00e9\101"]`: {"it's", "q\"\tAé" + "A"},
		`['a\b']`:                          {`a\b`},
	} {
		got, err := parseArray(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"[a]", "['a'", "['a'] x", "'a'", `["\q"]`} {
		_, err := parseArray(in)
		assert.Error(t, err, in)
	}
}

// TestQuoteRoundTrip: what quote gives augtool, augtool's tokenizer reads
// back as the string itself (set in the tree, then read with dump-xml).
func TestQuoteRoundTrip(t *testing.T) {
	values := []string{"plain", "two words", `dq "x"`, "sq 'x'", `back\slash`, `\"`, "tab\there", "new\nline",
		"[bracketed]", "[open", "$var", "#hash", "  spaces  ", "", `a\nb`, "é ü 中"}
	s := newScript()
	steps := map[string]int{}
	for i, v := range values {
		l, err := line("set", "/pippet/v"+string(rune('a'+i)), v)
		require.NoError(t, err)
		s.add(l)
		steps[v] = s.add("dump-xml /pippet/v" + string(rune('a'+i)))
	}
	out, err := s.run(context.Background(), []string{"stdbuf", "-oL", "augtool", "-A", "-L", "-r", t.TempDir()})
	require.NoError(t, err)
	for _, v := range values {
		st := out[steps[v]]
		require.Empty(t, st.Err, v)
		ns, err := nodes(st.Out)
		require.NoError(t, err, v)
		require.Len(t, ns, 1, v)
		require.NotNil(t, ns[0].Value, v)
		assert.Equal(t, v, *ns[0].Value)
	}
	for _, bad := range []string{"a]b", "x\x00", "x\x01rm /files", "\x1b[A", "\r", "\x7f"} {
		_, err := quote(bad)
		assert.Error(t, err, bad)
	}
}

// TestStepErrors: an error is the step's own, the steps after it still
// answer.
func TestStepErrors(t *testing.T) {
	s := newScript()
	a := s.add("get /augeas/version")
	b := s.add("get /x[")
	c := s.add("set /a/b c")
	d := s.add("get /a/*")
	out, err := s.run(context.Background(), []string{"stdbuf", "-oL", "augtool", "-A", "-L", "-r", t.TempDir()})
	require.NoError(t, err)
	assert.Contains(t, out[a].Out, "/augeas/version = ")
	assert.Empty(t, out[a].Err)
	assert.Contains(t, out[b].Err, "unmatched [")
	assert.Empty(t, out[c].Err)
	assert.Equal(t, "/a/* = c\n", out[d].Out)
}
