package protocol

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeOp(t *testing.T) {
	tests := []struct {
		line string
		want Request
	}{
		{`{"op":"find","type":"user","title":"root"}`, Request{Op: OpFind, Type: "user", Title: "root"}},
		{`{"type":"user","title":"root","op":"find","params":"{provider: useradd}"}`,
			Request{Op: OpFind, Type: "user", Title: "root", Params: map[string]any{"provider": "useradd"}}},
		{`{"op":"search","type":"user"}`, Request{Op: OpSearch, Type: "user"}},
		{`{"op":"search","type":"user","params":{"shell":"/bin/sh"}}`,
			Request{Op: OpSearch, Type: "user", Params: map[string]any{"shell": "/bin/sh"}}},
		{`{"op":"describe","type":"file"}`, Request{Op: OpDescribe, Type: "file"}},
		{`{"op":"apply","type":"notify","title":"x","params":"{}"}`, Request{Type: "notify", Title: "x", Params: map[string]any{}}},
		// A legacy line is an apply whatever it says.
		{`notify find {}`, Request{Type: "notify", Title: "find", Params: map[string]any{}}},
	}
	for _, tt := range tests {
		var req Request
		require.NoError(t, DecodeLine([]byte(tt.line), &req), tt.line)
		assert.Equal(t, tt.want, req, tt.line)
	}
}

func TestDecodeOpErrors(t *testing.T) {
	tests := []struct{ line, msg, typ, title string }{
		{`{"op":"destroy","type":"user","title":"x"}`, `invalid request: unknown op "destroy" (expected apply, find, search, describe or declare)`, "user", "x"},
		{`{"op":"destroy","type":"user"}`, `invalid request: unknown op "destroy" (expected apply, find, search, describe or declare)`, "user", ""},
		{`{"op":1,"type":"user","title":"x"}`, `invalid request: invalid JSON at byte 7: "op" must be a string, found '1'`, "", ""},
		{`{"op":"apply","type":"user"}`, `invalid request: missing or empty "title" for type user`, "", ""},
		{`{"type":"user","title":"x"}`, `invalid request: missing member "params" (use "{}" for none)`, "user", "x"},
		{`{"op":"find","op":"find","type":"user"}`, `invalid request: invalid JSON at byte 14: member "op" given twice`, "", ""},
	}
	for _, tt := range tests {
		var req Request
		err := DecodeLine([]byte(tt.line), &req)
		var de *DecodeError
		require.True(t, errors.As(err, &de), tt.line)
		assert.Equal(t, tt.msg, de.Msg, tt.line)
		assert.Equal(t, tt.typ, de.Type, tt.line)
		assert.Equal(t, tt.title, de.Title, tt.line)
	}
}

func TestOpString(t *testing.T) {
	for _, o := range []Op{OpApply, OpFind, OpSearch, OpDescribe} {
		p, ok := ParseOp(o.String())
		assert.True(t, ok)
		assert.Equal(t, o, p)
	}
	assert.Equal(t, "op(9)", Op(9).String())
}

func TestEncodeVerbMembers(t *testing.T) {
	r := Result{Resource: "User", Instances: []Instance{
		{Title: "a", State: State{{"ensure", "present"}, {"uid", int64(5)}}},
		{Title: "b", State: State{{"ensure", "present"}, {"groups", []any{"x", "y"}}}},
	}}
	line := AppendResult(nil, &r, true)
	assert.Equal(t, `{"resource":"User","failed":false,"changed":false,"noop":false,"error":false,"exception":null,`+
		`"instances":[{"title":"a","state":{"ensure":"present","uid":5}},{"title":"b","state":{"ensure":"present","groups":["x","y"]}}]}`+"\n", string(line))
	var back Result
	require.NoError(t, DecodeResult(line, &back))
	assert.Equal(t, r, back)

	d := Result{Resource: "File", ID: []byte("3"), Declaration: []byte(`{"name":"file"}`)}
	line = AppendResult(nil, &d, false)
	assert.Equal(t, `{"resource":"File","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":3,"declaration":{"name":"file"}}`+"\n", string(line))
	back = Result{}
	require.NoError(t, DecodeResult(line, &back))
	assert.Equal(t, d, back)
}
