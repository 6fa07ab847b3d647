package host_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/filebucket"
	"github.com/pippet/pippet/applier/types/host"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	"github.com/pippet/pippet/protocol"
)

// The whole request path: params as the protocol decodes them, validated
// and munged by the declaration, converged by the engine.
func TestRequests(t *testing.T) {
	reg := applier.NewRegistry()
	reg.Add(host.Type)
	dir := t.TempDir()
	state := t.TempDir()
	eng := engine.New(reg, &applier.Env{Options: applier.Options{StateDir: state}})
	target := filepath.Join(dir, "hosts")
	apply := func(title string, params map[string]any) protocol.Result {
		if params != nil {
			params["target"] = target
		}
		return eng.Apply(context.Background(), &protocol.Request{Type: "host", Title: title, Params: params})
	}
	steps := []struct {
		name   string
		title  string
		params map[string]any
		want   protocol.Result
		file   string // the file's body afterwards
	}{
		{"add without ensure", "db.example", map[string]any{"ip": "10.0.0.5"},
			protocol.Result{Resource: "Host[db.example]", Changed: true, Events: []protocol.Event{
				{Property: "ensure", Previous: "absent", Desired: "present", Message: "created", Status: "success"}}},
			"10.0.0.5\tdb.example\n"},
		{"again: in sync", "db.example", map[string]any{"ip": "10.0.0.5"},
			protocol.Result{Resource: "Host[db.example]"}, "10.0.0.5\tdb.example\n"},
		{"noop change", "db.example", map[string]any{"ip": "10.0.0.6", "noop": true},
			protocol.Result{Resource: "Host[db.example]", Noop: true, Events: []protocol.Event{
				{Property: "ip", Previous: "10.0.0.5", Desired: "10.0.0.6", Message: "current_value '10.0.0.5', should be '10.0.0.6' (noop)", Status: "noop"}}},
			"10.0.0.5\tdb.example\n"},
		{"change ip, add aliases", "db.example", map[string]any{"ip": "10.0.0.6", "host_aliases": []any{"db", "d"}, "provider": "parsed"},
			protocol.Result{Resource: "Host[db.example]", Changed: true, Events: []protocol.Event{
				{Property: "ip", Previous: "10.0.0.5", Desired: "10.0.0.6", Message: "ip changed '10.0.0.5' to '10.0.0.6'", Status: "success"},
				{Property: "host_aliases", Desired: []any{"db", "d"}, Message: "defined 'host_aliases' as 'db d'", Status: "success"}}},
			"10.0.0.6\tdb.example\tdb d\n"},
		{"a single alias as a scalar", "db.example", map[string]any{"host_aliases": "db"},
			protocol.Result{Resource: "Host[db.example]", Changed: true, Events: []protocol.Event{
				{Property: "host_aliases", Previous: []any{"db", "d"}, Desired: []any{"db"}, Message: "host_aliases changed 'db d' to 'db'", Status: "success"}}},
			"10.0.0.6\tdb.example\tdb\n"},
		{"title only: nothing managed", "db.example", map[string]any{},
			protocol.Result{Resource: "Host[db.example]"}, "10.0.0.6\tdb.example\tdb\n"},
		{"invalid ip", "db.example", map[string]any{"ip": "10.0.0.300"},
			protocol.ErrorResult("Host[db.example]", `Parameter ip failed on Host[db.example]: Invalid IP address "10.0.0.300"`),
			"10.0.0.6\tdb.example\tdb\n"},
		{"invalid name", "bad_-", map[string]any{"ip": "10.0.0.1"},
			protocol.ErrorResult("Host[bad_-]", `Parameter name failed on Host[bad_-]: Invalid host name`),
			"10.0.0.6\tdb.example\tdb\n"},
		{"alias with a space", "db.example", map[string]any{"host_aliases": []any{"a b"}},
			protocol.ErrorResult("Host[db.example]", `Parameter host_aliases failed on Host[db.example]: Host aliases cannot include whitespace`),
			"10.0.0.6\tdb.example\tdb\n"},
		{"relative target", "db.example", nil,
			protocol.ErrorResult("Host[db.example]", `Parameter target failed on Host[db.example]: File paths must be fully qualified, not 'hosts'`),
			"10.0.0.6\tdb.example\tdb\n"},
		{"create without ip fails", "new.example", map[string]any{"comment": "x"},
			protocol.Result{Resource: "Host[new.example]", Failed: true,
				Exception: "change from 'absent' to 'present' failed: ip is a required attribute for hosts",
				Events: []protocol.Event{{Property: "ensure", Previous: "absent", Desired: "present",
					Message: "change from 'absent' to 'present' failed: ip is a required attribute for hosts", Status: "failure"}}},
			"10.0.0.6\tdb.example\tdb\n"},
		{"remove", "db.example", map[string]any{"ensure": "absent"},
			protocol.Result{Resource: "Host[db.example]", Changed: true, Events: []protocol.Event{
				{Property: "ensure", Previous: "present", Desired: "absent", Message: "removed", Status: "success"}}},
			"\n"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.params == nil {
				got := eng.Apply(context.Background(), &protocol.Request{Type: "host", Title: s.title,
					Params: map[string]any{"ip": "10.0.0.1", "target": "hosts"}})
				assert.Equal(t, s.want, got)
			} else {
				assert.Equal(t, s.want, apply(s.title, s.params))
			}
			assert.Equal(t, s.file, parsedfiletest.Body(t, target))
		})
	}
	// Every rewrite of the existing file backed its old content up.
	entries, err := (&filebucket.Bucket{Dir: filebucket.Dir(state)}).List()
	require.NoError(t, err)
	assert.Len(t, entries, 3, "three rewrites of the existing file (change, alias, removal); creating it backs nothing up")
}
