package puppetserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentDaemonPuppetBetweenRuns (issue 34, item 2): the receiver's
// daemon on a node whose catalog has a type only Puppet has
// (acorelean's acore_marker). By default the Puppet process a run starts
// is gone once the run is over; with --puppet-between-runs keep it stays
// and the next run uses it (the same process), until pluginsync changes
// code it may have loaded (a provider): then a new one.
func TestAgentDaemonPuppetBetweenRuns(t *testing.T) {
	s := need(t)
	if _, err := os.Stat("/usr/lib/ruby/vendor_ruby/puppet.rb"); err != nil {
		t.Skip("Puppet is not installed")
	}
	for _, mode := range []string{"stop", "keep"} {
		t.Run(mode, func(t *testing.T) {
			d := startDaemon(t, s, acoreLeanEnv, "receiver-"+mode)
			d.waitRun(t, fileStat{})
			d.settle()
			d.run(t)
			require.Equal(t, "unchanged", reportStatus(t, d.report()), d.logged())
			kept := d.rubies()
			if mode == "stop" {
				assert.Empty(t, kept, "no Puppet between runs")
				return
			}
			require.Len(t, kept, 1, "the Puppet kept between runs")
			d.run(t)
			require.Equal(t, "unchanged", reportStatus(t, d.report()), d.logged())
			assert.Equal(t, kept, d.rubies(), "the next run used the kept Puppet")

			// The provider changes on the server: pluginsync brings it, the
			// kept Puppet (which loaded the old one) is replaced.
			provider := filepath.Join(s.dir, "code", "environments", acoreLeanEnv, "modules", "acore", "lib", "puppet", "provider", "acore_marker", "ruby.rb")
			old, err := os.ReadFile(provider)
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.WriteFile(provider, old, 0o644) })
			require.NoError(t, os.WriteFile(provider, append([]byte("# changed by TestAgentDaemonPuppetBetweenRuns\n"), old...), 0o644))
			d.run(t)
			log := d.logged()
			// What pluginsync changes is no resource of the run's (as
			// Puppet's).
			require.Equal(t, "unchanged", reportStatus(t, d.report()), log)
			assert.Contains(t, log, "acore_marker/ruby.rb]/content", "pluginsync brought the new provider")
			now := d.rubies()
			require.Len(t, now, 1, log)
			assert.NotEqual(t, kept, now, "a new Puppet for the new provider")
			assert.False(t, strings.Contains(log, "Could not"), log)
		})
	}
}
