package puppetserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// afactsEnv is an environment whose module brings a custom fact that
// tells whether Puppet is loaded where it is evaluated, and with which
// settings; its catalog writes what the server received of it and of
// stdlib's puppet_vardir into a file.
const afactsEnv = "afacts"

func init() {
	fixtures = append(fixtures, func(s *server) error {
		dir := filepath.Join(s.dir, "code", "environments", afactsEnv)
		if err := write(filepath.Join(dir, "manifests", "site.pp"), `node default {
  file { "${facts['acore_root']}/facts.txt":
    ensure  => file,
    content => "probe=${facts['afacts_probe']} vardir=${facts['puppet_vardir']} env=${facts['agent_specified_environment']}\n",
  }
}
`); err != nil {
			return err
		}
		if err := write(filepath.Join(dir, "modules", "afacts", "lib", "facter", "afacts_probe.rb"),
			"Facter.add(:afacts_probe) { setcode { defined?(Puppet::Type) ? \"puppet server=#{Puppet[:server]}\" : 'no puppet' } }\n"); err != nil {
			return err
		}
		return os.Symlink("/usr/share/puppet/modules/stdlib", filepath.Join(dir, "modules", "stdlib"))
	})
}

// TestAgentCustomFactsInTheRunsPuppet: the custom facts pluginsync
// brings are evaluated by the run's one Puppet, with the agent's
// settings, as under Puppet's agent; on a converged node while pluginsync
// runs, with no Facter process of their own.
func TestAgentCustomFactsInTheRunsPuppet(t *testing.T) {
	s := need(t)
	n := newNode(t, s, uniqueName("afacts"))
	n.env = afactsEnv
	require.NoError(t, os.MkdirAll(n.root, 0o755))
	facts := filepath.Join(n.root, "facts.txt")

	if _, err := exec.LookPath("puppet"); err == nil {
		rvar := filepath.Join(n.dir, "puppet-var")
		code, out := runPuppetAgent(t, n, n.puppetConf(t, s, "puppet", rvar))
		require.Equal(t, 2, code, out)
		assert.Equal(t, "probe=puppet server=localhost vardir="+rvar+" env="+afactsEnv+"\n", read(t, facts), "Puppet's agent")
	}

	pvar := filepath.Join(n.dir, "pippet-var")
	pconf := n.puppetConf(t, s, "pippet", pvar)
	code, out, errs := runReceiverAgent(t, n, pconf, "-t", "--debug")
	require.Equal(t, 2, code, "%s%s", out, errs)
	assert.Equal(t, "probe=puppet server=localhost vardir="+pvar+" env="+afactsEnv+"\n", read(t, facts), "the same facts from receiver agent")
	assert.Contains(t, out, "Debug: Starting Puppet for the custom facts", "a first run: Puppet starts once pluginsync brought them")
	assert.Contains(t, out, "Debug: Custom facts evaluated by Puppet (pid ")

	code, out, errs = runReceiverAgent(t, n, pconf, "-t", "--debug")
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "Debug: Starting Puppet ahead for the custom facts")
	assert.Contains(t, out, ") during pluginsync", "a converged node: evaluated while pluginsync ran")
	assert.NotContains(t, out, "evaluating them with Facter instead")
	assert.Equal(t, 1, strings.Count(out, "Debug: Custom facts evaluated by Puppet"), out)

	// --fallback none: no Puppet; a Facter process evaluates them.
	code, out, errs = runReceiverAgent(t, n, pconf, "-t", "--debug", "--fallback", "none")
	require.Equal(t, 2, code, "%s%s", out, errs)
	assert.NotContains(t, out, "Custom facts evaluated by Puppet")
	// Evaluated, but not with the agent's settings: stdlib's facts load
	// Puppet into that process with its defaults (server=puppet), and
	// puppet_vardir is missing there.
	got := read(t, facts)
	assert.Regexp(t, `^probe=\S`, got, "the custom facts are evaluated")
	assert.NotEqual(t, "probe=puppet server=localhost vardir="+pvar+" env="+afactsEnv+"\n", got)
}
