package notify_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/notify"
	"github.com/pippet/pippet/protocol"
)

func TestNotify(t *testing.T) {
	cases := []struct {
		name     string
		title    string
		params   map[string]any
		want     protocol.Result
		wantLog  string
		forbidLg string
	}{
		{name: "message logged, changed", title: "hello", params: map[string]any{"message": "hi there"},
			want: protocol.Result{Resource: "Notify[hello]", Changed: true, Events: []protocol.Event{{
				Property: "message", Desired: "hi there", Message: "defined 'message' as 'hi there'", Status: "success"}}},
			wantLog: `level=INFO+2 msg="hi there"`},
		{name: "message defaults to the title", title: "just the title", params: nil,
			want: protocol.Result{Resource: "Notify[just the title]", Changed: true, Events: []protocol.Event{{
				Property: "message", Desired: "just the title", Message: "defined 'message' as 'just the title'", Status: "success"}}},
			wantLog: `msg="just the title"`},
		{name: "withpath", title: "p", params: map[string]any{"message": "m", "withpath": true},
			want: protocol.Result{Resource: "Notify[p]", Changed: true, Events: []protocol.Event{{
				Property: "message", Desired: "m", Message: "defined 'message' as 'm'", Status: "success"}}},
			wantLog: `msg="/Notify[p]/message: m"`},
		{name: "loglevel", title: "w", params: map[string]any{"message": 42, "loglevel": "warning"},
			want: protocol.Result{Resource: "Notify[w]", Changed: true, Events: []protocol.Event{{
				Property: "message", Desired: "42", Message: "defined 'message' as '42'", Status: "success"}}},
			wantLog: `level=WARN msg=42`},
		{name: "noop", title: "spec", params: map[string]any{"message": "x", "noop": true},
			want: protocol.Result{Resource: "Notify[spec]", Noop: true, Events: []protocol.Event{{
				Property: "message", Desired: "x", Message: "current_value 'absent', should be 'x' (noop)", Status: "noop"}}},
			forbidLg: "msg=x\n"},
		{name: "unknown parameter", title: "spec", params: map[string]any{"adjunctive": "froopily"},
			want: protocol.ErrorResult("Notify[spec]", "no parameter named 'adjunctive' on Notify[spec]")},
		{name: "no provider parameter", title: "spec", params: map[string]any{"provider": "x"},
			want: protocol.ErrorResult("Notify[spec]", "no parameter named 'provider' on Notify[spec]")},
		{name: "bad withpath", title: "spec", params: map[string]any{"withpath": "sometimes"},
			want: protocol.ErrorResult("Notify[spec]", `Parameter withpath failed on Notify[spec]: Invalid value "sometimes". Valid values are true, false.`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := applier.NewRegistry()
			reg.Add(notify.Type)
			var logs bytes.Buffer
			e := engine.New(reg, &applier.Env{Log: slog.New(slog.NewTextHandler(&logs, nil))})
			got := e.Apply(context.Background(), &protocol.Request{Type: "notify", Title: tc.title, Params: tc.params})
			assert.Equal(t, tc.want, got)
			if tc.wantLog != "" {
				assert.Contains(t, logs.String(), tc.wantLog)
			}
			if tc.forbidLg != "" {
				assert.NotContains(t, logs.String(), tc.forbidLg)
			}
		})
	}
}

func TestNotifyRegistered(t *testing.T) {
	ty, ok := applier.Default.Lookup("Notify")
	assert.True(t, ok)
	assert.Same(t, notify.Type, ty)
}
