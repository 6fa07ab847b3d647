package assemble

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
)

// TestProviderUsedLikePuppet: a report's provider_used is Puppet's for
// skipped resources of multi-provider types (package's default apt, the
// provider parameter, service's default) and for delegated resources
// (sysctl, which pippet has not, and ini_setting, sent to Puppet with
// --delegate, both applied by the bridge in temporary files; a
// skipped delegated one with its provider parameter): the
// same manifest applied with --tags bar by puppet apply and by pippet,
// their reports compared.
func TestProviderUsedLikePuppet(t *testing.T) {
	puppet := "/usr/bin/puppet"
	if _, err := os.Stat(puppet); err != nil {
		t.Skip("puppet is not installed")
	}
	dir := t.TempDir()
	manifest := func(sub string) string {
		d := filepath.Join(dir, sub)
		require.NoError(t, os.MkdirAll(d, 0o755))
		return strings.ReplaceAll(`
package { 'pippet-tidy-no-such-package': ensure => installed }
package { 'pippet-tidy-no-such-package2': ensure => absent, provider => dpkg }
service { 'pippet-tidy-no-such-service': ensure => stopped }
sysctl { 'pippet.tidy.key': val => '1', target => 'DIR/sysctl.conf', tag => bar }
ini_setting { 'pippet-tidy-applied': path => 'DIR/a.ini', section => 's', setting => 'k', value => 'v', tag => bar }
ini_setting { 'pippet-tidy-skipped': path => 'DIR/b.ini', section => 's', setting => 'k', value => 'v', provider => ruby }
`, "DIR", d)
	}
	refs := []string{"Package[pippet-tidy-no-such-package]", "Package[pippet-tidy-no-such-package2]", "Service[pippet-tidy-no-such-service]",
		"Sysctl[pippet.tidy.key]", "Ini_setting[pippet-tidy-applied]", "Ini_setting[pippet-tidy-skipped]"}

	// Puppet's report.
	vardir := filepath.Join(dir, "var")
	cmd := exec.Command(puppet, "apply", "--vardir", vardir, "--confdir", filepath.Join(dir, "conf"), "--tags", "bar",
		"--modulepath", "/usr/share/puppet/modules", "-e", manifest("puppet"))
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	yml, err := os.ReadFile(filepath.Join(vardir, "state", "last_run_report.yaml"))
	require.NoError(t, err)
	want := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  (\S.*\]):\n(?:    .*\n)*?    provider_used: ?(.*)$`).FindAllStringSubmatch(string(yml), -1) {
		want[strings.Trim(m[1], `'"`)] = m[2]
	}

	// pippet's, the same manifest compiled by Puppet.
	code := manifest("pippet")
	data, err := delegate.Compile(context.Background(), delegate.CompileOptions{Code: code, ModulePath: "/usr/share/puppet/modules"})
	require.NoError(t, err)
	cat, err := catalog.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	var log bytes.Buffer
	p, err := NewPuppet(PuppetConfig{Delegate: []string{"ini_setting"}, ModulePath: "/usr/share/puppet/modules", Level: slog.LevelInfo})
	require.NoError(t, err)
	defer p.Close(context.Background())
	rep, err := Apply(context.Background(), cat, Options{StateDir: t.TempDir(), Tags: []string{"bar"}, Puppet: p, Log: catalog.NewLog(nil)})
	require.NoError(t, err, log.String())
	got := map[string]string{}
	for _, s := range rep.Statuses {
		got[strings.ReplaceAll(s.Resource, filepath.Join(dir, "pippet"), filepath.Join(dir, "puppet"))] = s.Provider
	}
	for _, ref := range refs {
		assert.NotEmpty(t, want[ref], "Puppet's report names %s's provider", ref)
		assert.Equal(t, want[ref], got[ref], ref)
	}
	assert.FileExists(t, filepath.Join(dir, "pippet", "a.ini"), "applied by Puppet through the bridge")
	assert.NoFileExists(t, filepath.Join(dir, "pippet", "b.ini"), "skipped")
	b, err := os.ReadFile(filepath.Join(dir, "pippet", "sysctl.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "pippet.tidy.key=1")
}
