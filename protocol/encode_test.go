package protocol

import (
	"encoding/json" // the standard decoder judges the hand-written encoder
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendResult(t *testing.T) {
	events := []Event{{Property: "ensure", Previous: "absent", Desired: "file", Message: "created", Status: StatusSuccess}}
	tests := []struct {
		name   string
		r      Result
		compat bool
		want   string
	}{
		{"changed", Result{Resource: "File[/tmp/x]", Changed: true},
			false, `{"resource":"File[/tmp/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}`},
		{"error with id", ErrorResult("Notify[x]", "bad \"thing\"\n"),
			false, `{"resource":"Notify[x]","failed":true,"changed":false,"noop":false,"error":true,"exception":"bad \"thing\"\n"}`},
		{"undecodable", ErrorResult("", "invalid request"),
			false, `{"failed":true,"changed":false,"error":true,"exception":"invalid request"}`},
		{"id and events", Result{Resource: "File[/x]", Changed: true, ID: []byte(`"a-1"`), Events: events},
			false, `{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"id":"a-1","events":[{"property":"ensure","previous":"absent","desired":"file","message":"created","status":"success"}]}`},
		{"compat drops extensions", Result{Resource: "File[/x]", Noop: true, ID: []byte(`7`), Events: events},
			true, `{"resource":"File[/x]","failed":false,"changed":false,"noop":true,"error":false,"exception":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendResult(nil, &tt.r, tt.compat)
			assert.Equal(t, tt.want+"\n", string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"a\"b\\c", `"a\"b\\c"`},
		{"\x00\x01\x1f\t\r\n", `"\u0000\u0001\u001f\t\r\n"`},
		{"é日本😀", `"é日本😀"`},
		{"bad\xffutf8\xc3", `"bad\ufffdutf8\ufffd"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"<html>&", `"<html>&"`},
		// Longer strings go eight bytes at a time: specials in and
		// across words.
		{"File[/srv/app/conf/a.conf]", `"File[/srv/app/conf/a.conf]"`},
		{"0123456\"89abcde\\ghijklmn\n", `"0123456\"89abcde\\ghijklmn\n"`},
		{"01234567\x0189abcdef\xffgh", `"01234567\u000189abcdef\ufffdgh"`},
		{"Could not evaluate é in File[/a]: \u2028 x", `"Could not evaluate é in File[/a]: \u2028 x"`},
	}
	for _, tt := range tests {
		got := AppendString(nil, tt.in)
		assert.Equal(t, tt.want, string(got), "%q", tt.in)
		require.True(t, json.Valid(got), "%q", got)
	}
}

func TestAppendValue(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, `null`}, {"s", `"s"`}, {true, `true`}, {int64(-3), `-3`}, {7, `7`},
		{1.5, `1.5`}, {2.0, `2.0`}, {1e300, `1e+300`}, {math.NaN(), `".nan"`}, {math.Inf(-1), `"-.inf"`},
		{[]any{"a", int64(1)}, `["a",1]`}, {[]string{"a", "b"}, `["a","b"]`},
		{map[string]any{"b": 1, "a": []any{}}, `{"a":[],"b":1}`},
		{map[string]string{"k": "v"}, `{"k":"v"}`},
		{struct{ A int }{1}, `{"A":1}`},
	}
	for _, tt := range tests {
		got := AppendValue(nil, tt.in)
		assert.Equal(t, tt.want, string(got))
		assert.True(t, json.Valid(got), "%s", got)
	}
}

func TestBannerFits(t *testing.T) {
	assert.LessOrEqual(t, len(Banner), 80)
	var b map[string]any
	require.NoError(t, json.Unmarshal([]byte(Banner), &b))
	assert.Equal(t, true, b["ready"])
	assert.Equal(t, 3.0, b["protocol"], "protocol 3: the read verbs and declare")
	assert.Equal(t, Version, b["version"])
}

func BenchmarkRoundTrip(b *testing.B) {
	line := []byte(`{"type":"file","title":"/tmp/pippet/a","params":"{ensure: file, mode: '0644', owner: root}","id":42}`)
	var req Request
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeLine(line, &req); err != nil {
			b.Fatal(err)
		}
		r := Result{Resource: "File[/tmp/pippet/a]", Changed: true, ID: req.ID,
			Events: []Event{{Property: "ensure", Previous: "absent", Desired: "file", Message: "created", Status: StatusSuccess}}}
		out = AppendResult(out[:0], &r, false)
	}
}
