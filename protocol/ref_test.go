package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

func TestRef(t *testing.T) {
	tests := []struct{ typ, title, want string }{
		{"file", "/etc/motd", "File[/etc/motd]"},
		{"EXEC", "ls", "Exec[ls]"},
		{"ssh_authorized_key", "k", "Ssh_authorized_key[k]"},
		{"foo::bar", "x", "Foo::Bar[x]"},
		{"Foo::BAR::baz", "x", "Foo::Bar::Baz[x]"},
		{"apt::source", "main", "Apt::Source[main]"},
		{"notify", "with ] bracket", "Notify[with ] bracket]"},
		{"", "bare title", "bare title"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, protocol.Ref(tt.typ, tt.title), "%s %s", tt.typ, tt.title)
	}
	assert.Equal(t, "Foo::Bar", protocol.RefType("foo::bar"))
}

func TestDecodeResult(t *testing.T) {
	tests := []struct {
		name, line string
		want       protocol.Result
		err        string
	}{
		{name: "ours", line: `{"resource":"Notify[a]","failed":false,"changed":false,"noop":true,"error":false,"exception":null,"id":"r1","events":[{"property":"message","previous":null,"desired":"a","message":"m","status":"noop"}]}` + "\n",
			want: protocol.Result{Resource: "Notify[a]", Noop: true, ID: []byte(`"r1"`),
				Events: []protocol.Event{{Property: "message", Desired: "a", Message: "m", Status: "noop"}}}},
		{name: "a diff", line: `{"resource":"File[/a]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"events":[{"property":"content","previous":"{md5}1","desired":"{md5}2","message":"content changed","status":"success","diff":"--- /a\t2026-11-29 01:00:00.000000000 +0000\n+++ /a (new)\n@@ -1 +1 @@\n-x\n+y"}]}`,
			want: protocol.Result{Resource: "File[/a]", Changed: true, Events: []protocol.Event{{Property: "content", Previous: "{md5}1", Desired: "{md5}2",
				Message: "content changed", Status: "success", Diff: "--- /a\t2026-11-29 01:00:00.000000000 +0000\n+++ /a (new)\n@@ -1 +1 @@\n-x\n+y"}}}},
		{name: "Puppet's, no resource", line: `{"failed":true,"changed":false,"error":true,"exception":"bad line"}`,
			want: protocol.Result{Failed: true, Error: true, Exception: "bad line"}},
		{name: "the banner", line: `{"ready":true,"protocol":1}`, err: "lacks failed, changed or error"},
		{name: "not an object", line: `Notice: hi`, err: "not a JSON object"},
		{name: "wrong kind", line: `{"failed":"no","changed":false,"error":false}`, err: "invalid answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r protocol.Result
			err := protocol.DecodeResult([]byte(tt.line), &r)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, r)
			// And back: what AppendResult writes decodes to the same.
			var again protocol.Result
			require.NoError(t, protocol.DecodeResult(protocol.AppendResult(nil, &r, false), &again))
			assert.Equal(t, r, again)
		})
	}
}

// pippet-bridge's run_changes (what a delegated type set on other
// resources of its run) are read into RunChanges; a change naming no type
// or setting nothing is dropped. pippet's own answers never write them.
func TestDecodeResultRunChanges(t *testing.T) {
	line := `{"resource":"Datacat_collector[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":3,` +
		`"run_changes":[{"type":"file","title":"/x","params":{"content":"a=1\n","mode":420}},{"type":"","title":"y","params":{"a":1}},{"type":"file","title":"/z","params":{}}]}`
	var r protocol.Result
	require.NoError(t, protocol.DecodeResult([]byte(line), &r))
	assert.Equal(t, []protocol.RunResource{{Type: "file", Title: "/x", Params: map[string]any{"content": "a=1\n", "mode": float64(420)}}}, r.RunChanges)
	assert.NotContains(t, string(protocol.AppendResult(nil, &r, false)), "run_changes")
}
