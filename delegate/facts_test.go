package delegate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

// factsAnswer is CustomFacts' answer, decoded.
type factsAnswer struct {
	Facts map[string]struct {
		Value  any   `json:"value"`
		Weight int64 `json:"weight"`
	} `json:"facts"`
	Errors []string `json:"errors"`
}

func customFacts(t *testing.T, f *Fallback, ctx context.Context, dirs ...string) (factsAnswer, error) {
	t.Helper()
	var a factsAnswer
	out, err := f.CustomFacts(ctx, dirs)
	if err == nil {
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	}
	return a, err
}

// The bridge evaluates custom facts with Puppet loaded, sees a fact file
// changed between two requests, bounds a fact that hangs, and applies
// resources in between as before.
func TestCustomFactsThroughTheBridge(t *testing.T) {
	if _, ok := FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent)")
	}
	libdir := t.TempDir()
	factdir := filepath.Join(libdir, "facter")
	require.NoError(t, os.MkdirAll(factdir, 0o755))
	write := func(name, src string) {
		require.NoError(t, os.WriteFile(filepath.Join(factdir, name), []byte(src), 0o644))
	}
	write("role.rb", "Facter.add(:pippet_role) { setcode { 'web' } }\n")
	// Facts that ask Puppet see it loaded, as in Puppet's agent.
	write("loaded.rb", "Facter.add(:pippet_puppet_loaded) { setcode { defined?(Puppet::Type) ? Puppet.version : 'no' } }\n")
	// A fact that prints cannot break the answers.
	write("chatty.rb", "Facter.add(:pippet_chatty) { setcode { puts '{\"resource\":\"X[y]\"}'; 'said' } }\n")
	f, err := New(Options{Fallback: ModePuppet, LibDir: libdir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(context.Background()) })
	ctx := context.Background()

	a, err := customFacts(t, f, ctx, factdir)
	require.NoError(t, err)
	assert.Equal(t, "web", a.Facts["pippet_role"].Value)
	assert.NotEqual(t, "no", a.Facts["pippet_puppet_loaded"].Value)
	assert.Equal(t, "said", a.Facts["pippet_chatty"].Value)
	assert.NotContains(t, a.Facts, "puppetversion", "Puppet's own facts are the caller's")
	assert.Empty(t, a.Errors)
	pid := f.Pid()
	require.NotZero(t, pid)

	// A resource between two evaluations.
	dir := t.TempDir()
	res := f.Apply(ctx, &protocol.Request{Type: "file", Title: filepath.Join(dir, "x"), Params: map[string]any{"ensure": "file", "content": "x\n"}})
	assert.False(t, res.Failed, res.Exception)
	assert.True(t, res.Changed)

	// pluginsync changed a file and removed another: read again.
	write("role.rb", "Facter.add(:pippet_role) { setcode { 'db' } }\n")
	require.NoError(t, os.Remove(filepath.Join(factdir, "chatty.rb")))
	write("raises.rb", "Facter.add(:pippet_raises) { setcode { raise 'boom' } }\n")
	a, err = customFacts(t, f, ctx, factdir)
	require.NoError(t, err)
	assert.Equal(t, "db", a.Facts["pippet_role"].Value)
	assert.NotContains(t, a.Facts, "pippet_chatty")
	assert.Nil(t, a.Facts["pippet_raises"].Value, "no value (agent/facts leaves it out)")
	assert.Equal(t, []string{"Error while resolving custom fact fact='pippet_raises', resolution='<anonymous>': boom"}, a.Errors)
	assert.Equal(t, pid, f.Pid(), "the same Puppet")

	// A fact that hangs: the context ends the wait, the bridge is
	// replaced, and the next request works.
	write("hangs.rb", "Facter.add(:pippet_hangs) { setcode { sleep 600 } }\n")
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	start := time.Now()
	_, err = customFacts(t, f, tctx, factdir)
	cancel()
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Less(t, time.Since(start), 30*time.Second)
	require.NoError(t, os.Remove(filepath.Join(factdir, "hangs.rb")))
	res = f.Apply(ctx, &protocol.Request{Type: "file", Title: filepath.Join(dir, "x"), Params: map[string]any{"ensure": "file", "content": "x\n"}})
	assert.False(t, res.Failed, res.Exception)
	assert.False(t, res.Changed)
	assert.NotEqual(t, pid, f.Pid(), "a new Puppet")
	a, err = customFacts(t, f, ctx, factdir)
	require.NoError(t, err)
	assert.Equal(t, "db", a.Facts["pippet_role"].Value)
}

func TestCustomFactsNotFromACommand(t *testing.T) {
	f := commandFallback(t, []string{"sh", "-c", "cat"})
	_, err := f.CustomFacts(context.Background(), nil)
	assert.ErrorIs(t, err, ErrNoFacts)
	var none *Fallback
	_, err = none.CustomFacts(context.Background(), nil)
	assert.ErrorIs(t, err, ErrNoFacts)
}
