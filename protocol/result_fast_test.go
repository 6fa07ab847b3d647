package protocol

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The one-pass reading of an in-sync answer gives what the JSON decoder
// gives, and takes exactly the lines it is meant for.
func TestDecodeResultFastAgrees(t *testing.T) {
	tests := []struct {
		line string
		fast bool
	}{
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}`, true},
		{`{"resource":"Exec[/bin/true 1]","failed":false,"changed":true,"noop":true,"error":false,"exception":null,"id":42}`, true},
		{`{"resource":"Notify[n]","failed":true,"changed":false,"noop":false,"error":true,"exception":null,"id":-7}`, true},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":0}`, true},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":007}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":"a"}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":1.5}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":-}`, false},
		{`{"resource":"File[/a\"b]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}`, false},
		{`{"resource":"File[/é]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}`, false},
		{`{"resource":"File[/x]","failed":true,"changed":false,"noop":false,"error":false,"exception":"boom"}`, false},
		{`{"resource":"Notify[n]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"message","previous":"absent","desired":"hi","message":"defined 'message' as 'hi'","status":"success"}]}`, true},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":true,"error":false,"exception":null,"id":3,"events":[{"property":"ensure","previous":null,"desired":true,"message":"m","status":"noop"},{"property":"mode","previous":false,"desired":"0644","message":"","status":"noop"}]}`, true},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"mode","previous":"0600","desired":"0644","message":"a \"b\"","status":"success"}]}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"mode","previous":1,"desired":2,"message":"m","status":"success"}]}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"tags","previous":["a"],"desired":["b"],"message":"m","status":"success"}]}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"m","previous":"é","desired":"e","message":"m","status":"success"}]}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"previous":"a","property":"m","desired":"e","message":"m","status":"success"}]}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"m","previous":"a","desired":"e","message":"m","status":"success"}}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"m","previous":"a","desired":"e","message":"m","status":"success"},]}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"m","previous":"a","desired":"e","message":"m","status":"success"}]`, false},
		{`{"resource":"File[/x]", "failed":false,"changed":false,"noop":false,"error":false,"exception":null}`, false},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}x`, false},
		{`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"events":[]}`, false},
		{`{"resource":"File[/x]","failed":fals,"changed":false,"noop":false,"error":false,"exception":null}`, false},
	}
	for _, tt := range tests {
		var fast, slow Result
		got := decodeResultFast([]byte(tt.line), &fast)
		assert.Equal(t, tt.fast, got, tt.line)
		errSlow := decodeResultJSON([]byte(tt.line), &slow)
		if got {
			require.NoError(t, errSlow, tt.line)
			assert.Equal(t, slow, fast, tt.line)
		}
		var r Result
		errAll := DecodeResult([]byte(tt.line+"\n"), &r)
		if errSlow == nil {
			require.NoError(t, errAll, tt.line)
			assert.Equal(t, slow, r, tt.line)
		} else {
			assert.Error(t, errAll, tt.line)
		}
	}
}

// What AppendResult writes for results in sync reads back through the
// one-pass path.
func TestDecodeResultFastRoundTrip(t *testing.T) {
	for _, want := range []Result{
		{Resource: "File[/etc/motd]"},
		{Resource: "Exec[x]", Changed: true, ID: []byte("12345")},
		{Resource: "Notify[a]", Noop: true, Failed: true, Error: true, ID: []byte("-1")},
		{Resource: "Notify[a]", Changed: true, Events: []Event{
			{Property: "message", Previous: "absent", Desired: "hi", Message: "defined 'message' as 'hi'", Status: StatusSuccess}}},
		{Resource: "File[/a]", Noop: true, ID: []byte("9"), Events: []Event{
			{Property: "ensure", Previous: nil, Desired: "file", Message: "current_value 'absent', should be 'file' (noop)", Status: StatusNoop},
			{Property: "x", Previous: true, Desired: false, Message: "", Status: StatusNoop}}},
		{Resource: "File[/b]", Changed: true, Events: []Event{
			{Property: "content", Previous: "{md5}1", Desired: "{md5}2", Message: "content changed", Status: StatusSuccess, Diff: "@@ -1 +1 @@"}}},
	} {
		line := AppendResult(nil, &want, false)
		var got Result
		require.True(t, decodeResultFast(bytes.TrimSpace(line), &got), string(line))
		assert.Equal(t, want, got)
	}
}

func BenchmarkDecodeResultEvent(b *testing.B) {
	line := []byte(`{"resource":"Notify[bench]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"message","previous":"absent","desired":"hi","message":"defined 'message' as 'hi'","status":"success"}]}`)
	var r Result
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeResult(line, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResultInSync(b *testing.B) {
	line := []byte(`{"resource":"File[/tmp/pippet/f1]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}`)
	var r Result
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeResult(line, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// Whatever line the one-pass reading takes, the JSON decoder reads the
// same Result from it.
func FuzzDecodeResultFast(f *testing.F) {
	for _, s := range []string{
		`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":42}`,
		`{"resource":"Notify[n]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"message","previous":"absent","desired":"hi","message":"m","status":"success"},{"property":"x","previous":null,"desired":true,"message":"","status":"noop"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast Result
		if !decodeResultFast(line, &fast) {
			return
		}
		var slow Result
		require.NoError(t, decodeResultJSON(line, &slow), "%q", line)
		assert.Equal(t, slow, fast, "%q", line)
	})
}
