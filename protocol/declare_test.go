package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeDeclaration(t *testing.T) {
	tests := []struct {
		line string
		want Request
	}{
		{`{"op":"declare","resources":[]}`, Request{Op: OpDeclare, Resources: []RunResource{}}},
		{`{"op":"declare","resources":[{"type":"File","title":"/etc/a/"}],"id":7}`,
			Request{Op: OpDeclare, ID: []byte("7"), Resources: []RunResource{{Type: "file", Title: "/etc/a/", Params: map[string]any{}}}}},
		// Params as a request has them: a YAML string or a JSON object;
		// members in any order; the op after the resources.
		{`{"resources":[{"params":"{target: /m, order: 10}","title":"a","type":"concat_fragment"},{"type":"concat_fragment","title":"b","params":{"target":"/m","content":"x\n","order":20,"tag":["t"]}}],"op":"declare"}`,
			Request{Op: OpDeclare, Resources: []RunResource{
				{Type: "concat_fragment", Title: "a", Params: map[string]any{"target": "/m", "order": int64(10)}},
				{Type: "concat_fragment", Title: "b", Params: map[string]any{"target": "/m", "content": "x\n", "order": int64(20), "tag": []any{"t"}}},
			}}},
	}
	for _, tt := range tests {
		var req Request
		require.NoError(t, DecodeLine([]byte(tt.line), &req), tt.line)
		assert.Equal(t, tt.want, req, tt.line)
	}
}

// A Decoder reuses a request's params from line to line, never a
// declaration's resources: the receiver keeps them as its run.
func TestDeclarationNotReused(t *testing.T) {
	var d Decoder
	var req Request
	require.NoError(t, d.DecodeLine([]byte(`{"op":"declare","resources":[{"type":"file","title":"/a","params":"{ensure: file}"}]}`), &req))
	kept := req.Resources
	for range 3 {
		require.NoError(t, d.DecodeLine([]byte(`{"type":"file","title":"/b","params":"{ensure: absent}"}`), &req))
		require.NoError(t, d.DecodeLine([]byte(`{"op":"declare","resources":[{"type":"file","title":"/c","params":"{ensure: link}"}]}`), &req))
	}
	assert.Equal(t, []RunResource{{Type: "file", Title: "/a", Params: map[string]any{"ensure": "file"}}}, kept)
}

func TestDecodeDeclarationErrors(t *testing.T) {
	tests := []struct {
		line, msg, typ, title, id string
	}{
		{`{"op":"declare"}`, `invalid request: a declaration needs "resources", a list of {"type","title","params"} objects (an empty list clears the run)`, "", "", ""},
		{`{"op":"declare","resources":null,"id":1}`, `invalid request: invalid JSON at byte 29: "resources" must be a list of {"type","title","params"} objects, found 'n'`, "", "", ""},
		{`{"op":"declare","type":"file","title":"x","resources":[],"id":2}`, `invalid request: a declaration takes no "type", "title": its resources are in "resources"`, "", "", "2"},
		{`{"type":"file","title":"x","params":{},"resources":[]}`, `invalid request: "resources" belongs to a declaration ("op":"declare") only`, "", "", ""},
		{`{"op":"find","type":"file","title":"x","resources":[]}`, `invalid request: "resources" belongs to a declaration ("op":"declare") only`, "", "", ""},
		{`{"op":"declar","resources":[]}`, `invalid request: unknown op "declar" (expected apply, find, search, describe or declare)`, "", "", ""},
		{`{"op":"declare","resources":[{"title":"x"}]}`, `invalid request: invalid JSON at byte 42: declared resource 1 has no "type"`, "", "", ""},
		{`{"op":"declare","resources":[{"type":"file"}]}`, `invalid request: invalid JSON at byte 44: declared resource 1 (type file) has no "title" or an empty one`, "", "", ""},
		{`{"op":"declare","resources":[{"type":"no such","title":"x"}]}`, `invalid request: invalid JSON at byte 59: declared resource 1: "no such" is not a resource type name`, "", "", ""},
		{`{"op":"declare","resources":[{"type":"file","title":"x","ensure":"file"}]}`, `invalid request: invalid JSON at byte 57: unknown member "ensure" in declared resource 1 (expected type, title, params)`, "", "", ""},
		{`{"op":"declare","resources":[{"type":"file","title":"x","title":"y"}]}`, `invalid request: invalid JSON at byte 57: member "title" given twice in declared resource 1`, "", "", ""},
		{`{"op":"declare","resources":["file x"]}`, `invalid request: invalid JSON at byte 30: declared resource 1 must be a {"type","title","params"} object, found '"'`, "", "", ""},
		{`{"op":"declare","resources":[{"type":"file","title":"x","params":3}]}`, `invalid request: invalid JSON at byte 66: "params" of declared resource 1 must be a YAML string or a JSON object, found '3'`, "", "", ""},
		// Bad params name the resource and keep the id that follows.
		{`{"op":"declare","resources":[{"type":"file","title":"/a"},{"type":"concat_fragment","title":"b","params":"{a: [}"}],"id":9}`,
			`invalid declaration: resource 2 (Concat_fragment[b]): params: line 1 column 6: invalid YAML: did not find expected ',' or ']'`, "concat_fragment", "b", "9"},
		{`{"op":"declare","resources":[{"type":"file","title":"/a","params":"[1]"}],"id":"x"}`,
			`invalid declaration: resource 1 (File[/a]): params: line 1 column 1: expected a mapping such as {ensure: file}, got a list`, "file", "/a", `"x"`},
	}
	for _, tt := range tests {
		var req Request
		err := DecodeLine([]byte(tt.line), &req)
		var de *DecodeError
		require.True(t, errors.As(err, &de), "%s: %v", tt.line, err)
		assert.Equal(t, tt.msg, de.Msg, tt.line)
		assert.Equal(t, tt.typ, de.Type, tt.line)
		assert.Equal(t, tt.title, de.Title, tt.line)
		assert.Equal(t, tt.id, string(de.ID), tt.line)
	}
}

// A declaration is bounded: MaxDeclared resources, and MaxDeclaredValues
// values in all (YAML aliases expanded), each resource's params as a
// request's.
func TestDeclarationLimits(t *testing.T) {
	one := `{"type":"file","title":"/a"}`
	line := `{"op":"declare","resources":[` + strings.Repeat(one+",", MaxDeclared) + one + `],"id":1}`
	var req Request
	err := DecodeLine([]byte(line), &req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 100000 resources in one declaration")

	line = `{"op":"declare","resources":[` + strings.Repeat(one+",", MaxDeclared-1) + one + `]}`
	require.NoError(t, DecodeLine([]byte(line), &req))
	assert.Len(t, req.Resources, MaxDeclared)

	// 74,733 values each, under a request's limit; 14 of them are more
	// than a declaration holds.
	doc := `a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n`
	var rs []string
	for i := range 14 {
		rs = append(rs, `{"type":"concat_fragment","title":"f`+string(rune('a'+i))+`","params":"`+doc+`"}`)
	}
	err = DecodeLine([]byte(`{"op":"declare","resources":[`+strings.Join(rs, ",")+`],"id":3}`), &req)
	var de *DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Contains(t, de.Msg, "the declaration's params hold more than 1000000 values")
	assert.Equal(t, "3", string(de.ID))
	require.NoError(t, DecodeLine([]byte(`{"op":"declare","resources":[`+strings.Join(rs[:13], ",")+`]}`), &req))
	assert.Len(t, req.Resources, 13)

	// One resource's params alone are bounded as a request's.
	big := `{"type":"x","title":"y","params":[` + strings.Repeat("1,", 100_000) + `1]}`
	err = DecodeLine([]byte(`{"op":"declare","resources":[`+big+`]}`), &req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must be a YAML string or a JSON object")
	big = `{"type":"x","title":"y","params":{"a":[` + strings.Repeat("1,", 100_000) + `1]}}`
	err = DecodeLine([]byte(`{"op":"declare","resources":[`+big+`]}`), &req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 100000 values")
}
