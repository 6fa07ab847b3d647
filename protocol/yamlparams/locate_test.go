package yamlparams

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every YAML syntax error names the line and column of the token at fault
// within the params (yaml.v3 gives at most a line, the line of the
// enclosing collection for a parser error, counted from 0); a plain value
// YAML reads as structure gets a suggestion to quote it.
func TestYAMLErrorPositions(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		line, col int
		msg, hint string
	}{
		{"flow value with colon", "{ensure: file, content: key: value}", 1, 28,
			"did not find expected ',' or '}'", `a value containing ": " must be quoted, as in 'key: value'`},
		{"flow, line 2", "{ensure: file,\n content: key: value}", 2, 14, "did not find expected ',' or '}'", "'key: value'"},
		{"flow, line 3", "{ensure: file,\n mode: '0644',\n content: key: value}", 3, 14, "did not find expected ',' or '}'", "'key: value'"},
		{"flow, several colons", "{this: will: not: parse}", 1, 12, "did not find expected ',' or '}'", "'will: not: parse'"},
		{"block value with colon", "ensure: file\ncontent: key: value\n", 2, 13,
			"mapping values are not allowed in this context", "'key: value'"},
		{"block, line 3", "ensure: file\nmode: '0644'\ncontent: key: value\n", 3, 13, "mapping values are not allowed", "'key: value'"},
		{"block, first line", "content: a: b\nensure: file\n", 1, 11, "mapping values are not allowed", "'a: b'"},
		{"flow at sign", "{ensure: file, content: @foo}", 1, 25,
			"found character that cannot start any token", "a value starting with '@' must be quoted, as in '@foo'"},
		{"block at sign", "ensure: file\ncontent: @foo\n", 2, 10, "cannot start any token", "'@foo'"},
		{"flow backquote", "{content: `ls`}", 1, 11, "cannot start any token", "'`ls`'"},
		{"flow percent", "{ensure: file, content: %x}", 1, 25, "cannot start any token", "'%x'"},
		{"block percent", "ensure: file\ncontent: 100%\nmode: %x\n", 3, 7, "cannot start any token", "'%x'"},
		{"block dash", "ensure: file\ncontent: - x\n", 2, 10, "block sequence entries are not allowed", `a value starting with "- " must be quoted, as in '- x'`},
		{"flow dash", "{content: - x}", 1, 11, "did not find expected node content", "'- x'"},
		{"flow quote not closed", "{ensure: file, content: 'foo}", 1, 25, "quoted string is never closed", ""},
		{"block quote not closed", "ensure: file\ncontent: \"foo\nmode: x\n", 2, 10, "quoted string is never closed", ""},
		{"flow not closed", "{ensure: file, mode: '0644'", 1, 28, "the '{' opened at line 1 column 1 is not closed", ""},
		{"flow sequence", "{a: [1, 2}", 1, 10, "did not find expected ',' or ']'", ""},
		{"after a quoted value", "{a: 'x' y}", 1, 9, "did not find expected ',' or '}'", ""},
		{"plain continued with colon", "ensure: file\n  mode: x\n", 2, 7, "mapping values are not allowed", "continues the plain value above it"},
		{"tab indentation", "ensure: file\n\tmode: x\n", 2, 1, "tab character", ""},
		{"block scalar then less indented", "ensure: file\ncontent: |\n  a\n b\n", 4, 2, "did not find expected key", ""},
		{"dedent to no level", "a:\n  b: c\n d: e\n", 3, 2, "did not find expected key", ""},
		{"list entry expected", "a:\n  - x\n  y: z\n", 3, 3, "did not find expected '-' indicator", ""},
		{"columns count characters", "{a: 'é', b: c: d}", 1, 14, "did not find expected ',' or '}'", "'c: d'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			require.Error(t, err)
			var pe *Error
			require.True(t, errors.As(err, &pe), "%T", err)
			assert.Equal(t, [2]int{tt.line, tt.col}, [2]int{pe.Line, pe.Column}, err.Error())
			assert.Contains(t, pe.Msg, tt.msg)
			if tt.hint != "" {
				assert.Contains(t, pe.Msg, tt.hint)
			} else {
				assert.NotContains(t, pe.Msg, "quoted, as in", "no quoting hint where quoting is not the cause")
			}
		})
	}
}

// Whatever the document, locating an error terminates and stays within
// it; deep nesting is not followed.
func TestYAMLErrorLocationBounded(t *testing.T) {
	for _, doc := range []string{"", "{", "[", "'", "\"", ":", "- ", "{a: [b, {c: d}", "a: |\n", "a: >-\n  x\n y: z", "? x\n: y\n: z",
		string(make([]byte, 0)) + "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["} {
		pe := locateError([]byte(doc), "yaml: did not find expected node content")
		require.NotNil(t, pe)
		assert.LessOrEqual(t, pe.Line, 1+len(doc))
	}
}
