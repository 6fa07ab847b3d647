package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/config"
	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/delegate"
)

// TestRunHonoursFacterCache: the facts an agent run sends come through
// Facter's cache (facts.ttls of Facter's facter.conf, here pointed at a
// temporary one through facts.FacterLocations): a cached custom fact
// that pluginsync brought is not evaluated again within its ttl, and no
// Ruby starts for it.
func TestRunHonoursFacterCache(t *testing.T) {
	if exec.Command("ruby", "-e", "require 'facter'").Run() != nil {
		t.Skip("Ruby cannot load Facter")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "facter.conf")
	require.NoError(t, os.WriteFile(conf, []byte(`facts : { ttls : [ { "ttl_agent" : 1 hour } ] }`), 0o644))
	saved := facts.FacterLocations
	t.Cleanup(func() { facts.FacterLocations = saved })
	facts.FacterLocations = []facts.FacterLocation{{Conf: conf, CacheDir: filepath.Join(dir, "cache")}}

	puppetConf := filepath.Join(dir, "puppet.conf")
	require.NoError(t, os.WriteFile(puppetConf, []byte("[agent]\n"), 0o644))
	s, err := config.Load(puppetConf, map[string]string{
		"confdir": dir, "vardir": filepath.Join(dir, "var"), "certname": "node.example",
		"pluginsync": "false", "server": "127.0.0.1", "environment": "production",
	})
	require.NoError(t, err)
	counter := filepath.Join(dir, "count")
	fact := `Facter.add(:ttl_agent) { setcode { Facter::Core::Execution.execute("sh -c 'echo run >> ` + counter + `; echo cached-by-ttl'") } }` + "\n"
	require.NoError(t, os.MkdirAll(filepath.Join(s.Vardir, "lib", "facter"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.Vardir, "lib", "facter", "ttl_agent.rb"), []byte(fact), 0o644))

	for i := 0; i < 3; i++ {
		r := newRun(s, Options{Fallback: delegate.ModeNone})
		if i > 0 {
			assert.False(t, facts.NeedsFacter(r.gatherOptions()), "cached: no Ruby for the facts")
		}
		b, err := r.prepare(context.Background(), nil, "", "production", false)
		require.NoError(t, err)
		var sent struct {
			Values map[string]any `json:"values"`
		}
		require.NoError(t, json.Unmarshal(b, &sent), "%s", b)
		assert.Equal(t, "cached-by-ttl", sent.Values["ttl_agent"], "run %d", i)
	}
	b, err := os.ReadFile(counter)
	require.NoError(t, err)
	assert.Equal(t, 1, bytes.Count(b, []byte("run\n")), "evaluated once in three runs")
	_, err = os.Stat(filepath.Join(dir, "cache", "ttl_agent"))
	assert.NoError(t, err, "Facter's cache file")
}
