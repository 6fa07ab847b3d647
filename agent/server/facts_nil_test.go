package server_test

import (
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/server"
)

// TestFactsJSONNilAsPuppet: a null inside a fact is sent as "", as
// Puppet's agent sends it (Puppet::Node::Facts#sanitize_fact turns what
// is not a string, number, boolean, hash or array into its to_s: `puppet
// facts show dhcp_servers --render-as json` gives
// {"dhcp_servers":{"system":""}} where Facter's value is {"system": nil}),
// so that PuppetDB stores the same value for both agents.
func TestFactsJSONNilAsPuppet(t *testing.T) {
	b, err := server.FactsJSON("n1", map[string]any{
		"dhcp_servers": map[string]any{"system": nil},
		"list":         []any{nil, "a", map[string]any{"x": nil}},
	}, server.FactsOptions{Now: time.Unix(0, 0)})
	require.NoError(t, err)
	var doc struct {
		Values map[string]any `json:"values"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, map[string]any{"system": ""}, doc.Values["dhcp_servers"])
	assert.Equal(t, []any{"", "a", map[string]any{"x": ""}}, doc.Values["list"])
}
