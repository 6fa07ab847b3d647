package catalog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/catalog"
)

// TestSensitiveParametersAreNeverLogged: Puppet's compiler writes a
// Sensitive value into the catalog unwrapped and names the parameter in
// the resource's sensitive_parameters (Puppet::Parser::Resource
// #replace_sensitive_data); the agent wraps it again. Such a value is a
// secret as much as a rich-data Sensitive one: never in the log, the
// answer's events or the report.
func TestSensitiveParametersAreNeverLogged(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "secret")
	secret := "hunter3-" + t.Name()
	data := build(t,
		res{typ: "File", title: f, params: map[string]any{"ensure": "file", "mode": "0600", "content": secret}},
		res{typ: "Notify", title: "n", params: map[string]any{"message": "note " + secret}},
	)
	var c map[string]any
	require.NoError(t, json.Unmarshal(data, &c))
	for _, r := range c["resources"].([]any) {
		r := r.(map[string]any)
		switch r["type"] {
		case "File":
			r["sensitive_parameters"] = []string{"content"}
		case "Notify":
			r["sensitive_parameters"] = []string{"message"}
		}
	}
	data, err := json.Marshal(c)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(f, []byte("old "+secret+"\n"), 0o600))
	store := filepath.Join(dir, "transactionstore.json")
	rep, out := applied(t, data, catalog.Options{TransactionStore: store})
	st, err := os.ReadFile(store)
	require.NoError(t, err)
	assert.NotContains(t, string(st), secret, "the transaction store")
	got, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, secret, string(got), "the value is applied")
	assert.NotContains(t, out, secret)
	var yml bytes.Buffer
	require.NoError(t, rep.WriteYAML(&yml))
	assert.NotContains(t, yml.String(), secret)
	s := status(t, rep, "File["+f+"]")
	require.NotEmpty(t, s.Events)
	assert.Equal(t, "changed [redacted] to [redacted]", s.Events[0].Message)
	assert.True(t, status(t, rep, "Notify[n]").Changed)
}
