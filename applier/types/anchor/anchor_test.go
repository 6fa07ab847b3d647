package anchor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/anchor"
	"github.com/pippet/pippet/protocol"
)

func TestAnchor(t *testing.T) {
	cases := []struct {
		name    string
		title   string
		params  map[string]any
		refresh bool
		want    protocol.Result
	}{
		{name: "unchanged", title: "ntp::begin", want: protocol.Result{Resource: "Anchor[ntp::begin]"}},
		{name: "name given", title: "a", params: map[string]any{"name": "b"}, want: protocol.Result{Resource: "Anchor[a]"}},
		// Puppet's transaction records the refresh of an anchor, whose refresh
		// does nothing: Triggered 'refresh' from 1 event, changed.
		{name: "refresh does nothing but is an event", title: "ntp::end", refresh: true, want: protocol.Result{Resource: "Anchor[ntp::end]", Changed: true,
			Events: []protocol.Event{{Property: "refresh", Message: "Triggered 'refresh' from 1 event (nothing to do)", Status: protocol.StatusSuccess}}}},
		{name: "noop", title: "n", params: map[string]any{"noop": true}, want: protocol.Result{Resource: "Anchor[n]", Noop: true}},
		{name: "metaparameters accepted", title: "m", params: map[string]any{"before": "Class[x]", "tag": "t"},
			want: protocol.Result{Resource: "Anchor[m]"}},
		{name: "unknown parameter", title: "u", params: map[string]any{"ensure": "present"},
			want: protocol.ErrorResult("Anchor[u]", "no parameter named 'ensure' on Anchor[u]")},
		{name: "no provider parameter", title: "p", params: map[string]any{"provider": "x"},
			want: protocol.ErrorResult("Anchor[p]", "no parameter named 'provider' on Anchor[p]")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := applier.NewRegistry()
			reg.Add(anchor.Type)
			e := engine.New(reg, nil)
			got := e.Apply(context.Background(), &protocol.Request{Type: "anchor", Title: tc.title, Params: tc.params, Refresh: tc.refresh})
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAnchorRegistered(t *testing.T) {
	ty, ok := applier.Default.Lookup("Anchor")
	assert.True(t, ok)
	assert.Same(t, anchor.Type, ty)
}
