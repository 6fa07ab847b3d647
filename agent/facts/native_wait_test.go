package facts_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
)

// logged is what the fake programs wrote to log, one "NAME SECONDS"
// line each, in the order they ran.
func logged(t *testing.T, log string) (names []string, at map[string]float64) {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	at = map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, ts, ok := strings.Cut(line, " ")
		require.True(t, ok, "log line %q", line)
		s, err := strconv.ParseFloat(ts, 64)
		require.NoError(t, err, "log line %q", line)
		if _, seen := at[name]; !seen {
			names = append(names, name)
			at[name] = s
		}
	}
	return names, at
}

// A fact file Facter evaluates (unknown to pippet) whose fact takes
// seconds, beside known files: the known facts that do not ask for its
// fact are resolved while Ruby works (haproxy's command starts before
// the slow one ends), the one that asks (systemd's facts ask for
// service_provider, which the unknown file defines) waits for it alone
// (systemctl runs after the slow command ended); every value is what
// facter -p says of the same files.
func TestNativeFactsDoNotWaitForRuby(t *testing.T) {
	needFacter(t)
	bin, dir, logDir := t.TempDir(), t.TempDir(), t.TempDir()
	log := filepath.Join(logDir, "log")
	stamp := "echo \"$(basename \"$0\")$1 $(date +%s.%N)\" >> '" + log + "'\n"
	writeFile(t, bin, "haproxy", "#!/bin/sh\n"+stamp+"echo 'HAProxy version 2.6.12-1+deb12u1 2023/12/16 - https://haproxy.org/'\n", 0o755)
	writeFile(t, bin, "systemctl", "#!/bin/sh\n"+stamp+`case "$1" in
--version) echo 'systemd 252 (252.22-1~deb12u1)'; echo '+PAM +AUDIT +SELINUX';;
list-unit-files) echo 'systemd-networkd.service disabled enabled'; echo 'systemd-timesyncd.service enabled enabled';;
esac
`, 0o755)
	slow := writeFile(t, bin, "slow", "#!/bin/sh\n"+stamp+"sleep 3\necho \"slow-end $(date +%s.%N)\" >> '"+log+"'\n", 0o755)
	// An edited stdlib's service_provider.rb, as far as pippet knows.
	writeFile(t, dir, "service_provider.rb", "Facter.add(:service_provider) do\n  setcode do\n    Facter::Core::Execution.execute('"+slow+" -start')\n    'systemd'\n  end\nend\n", 0o644)
	debianFactFile(t, dir, "haproxy", "haproxy_version.rb")
	debianFactFile(t, dir, "systemd", "systemd.rb")
	names := []string{"service_provider", "haproxy_version", "systemd", "systemd_version", "systemd_internal_services"}
	env := pathWith(bin)

	want := facterP(t, dir, names, env...)
	require.NoError(t, os.Remove(log))

	o := nativeOptions(t, dir)
	o.Ruby, o.Env = "", env
	got, errs := facts.Gather(context.Background(), o)
	assert.Empty(t, errs)
	for _, n := range names {
		assert.Equal(t, encodeFact(t, want[n]), encodeFact(t, got[n]), n)
	}
	assert.Equal(t, "systemd", got["service_provider"], "Ruby evaluated the unknown file")

	order, at := logged(t, log)
	t.Logf("order: %v, at %v", order, at)
	for _, n := range []string{"slow-start", "slow-end", "haproxy-v", "systemctl--version"} {
		require.Contains(t, order, n)
	}
	assert.Less(t, slices.Index(order, "haproxy-v"), slices.Index(order, "slow-end"), "haproxy's command ran while Ruby worked")
	assert.Less(t, at["haproxy-v"], at["slow-end"])
	assert.Greater(t, slices.Index(order, "systemctl--version"), slices.Index(order, "slow-end"), "systemd's facts waited for service_provider")
	assert.GreaterOrEqual(t, at["systemctl--version"], at["slow-end"])
}

// A fact defined both by a known file and by a file Facter evaluates:
// the resolution of the greater weight wins, as in Facter (one Facter
// holds both resolutions of the fact), the earlier file on a tie, and
// the known file's other facts that ask for it see the winner; the
// values are facter -p's.
func TestNativeAndRubyResolutionsOfOneFact(t *testing.T) {
	needFacter(t)
	dir := t.TempDir()
	debianFactFile(t, dir, "apt", "apt_reboot_required.rb") // weight 1 (its confine)
	debianFactFile(t, dir, "apt", "apt_sources.rb")         // weight 1
	debianFactFile(t, dir, "stdlib", "pe_version.rb")       // is_pe: weight 0
	// No weight: apt's resolution wins.
	writeFile(t, dir, "site_a.rb", "Facter.add(:apt_reboot_required) { setcode { 'site' } }\n", 0o644)
	// More weight: the site's wins.
	writeFile(t, dir, "site_b.rb", "Facter.add(:apt_sources) do\n  has_weight 5\n  setcode { ['site'] }\nend\n", 0o644)
	// The same weight (0), the site's file after stdlib's: stdlib's wins;
	// before it, the site's.
	writeFile(t, dir, "site_c.rb", "Facter.add(:is_pe) { setcode { 'site' } }\n", 0o644)
	writeFile(t, dir, "a_site.rb", "Facter.add(:pe_version) { setcode { 'site' } }\n", 0o644)
	// A fact the known file's other facts ask for (systemd's are
	// confined on systemd): Facter's answer is the site's.
	debianFactFile(t, dir, "systemd", "systemd.rb")
	writeFile(t, dir, "site_d.rb", "Facter.add(:systemd) do\n  has_weight 10\n  setcode { true }\nend\n", 0o644)
	names := []string{"apt_reboot_required", "apt_sources", "is_pe", "pe_version", "systemd", "systemd_version", "systemd_internal_services"}
	want := facterP(t, dir, nil)
	o := nativeOptions(t, dir)
	o.Ruby = ""
	got, errs := facts.Gather(context.Background(), o)
	assert.Empty(t, errs)
	for _, n := range names {
		assert.Equal(t, encodeFact(t, want[n]), encodeFact(t, got[n]), n)
	}
	assert.Equal(t, true, got["systemd"])
	_, ok := got["systemd_version"]
	assert.True(t, ok, "systemd_version resolved natively, as Facter's systemd is true")
}
