package facts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a fact file Facter evaluates may define, as the native facts that
// ask for a fact wait for it: the literal names of its Facter.add calls,
// or anything when its text cannot tell.
func TestDefinedBy(t *testing.T) {
	for _, c := range []struct {
		name, ruby string
		defines    []string // nil: anything
	}{
		{"symbol", "Facter.add(:site_role) do\n  setcode { 'web' }\nend\n", []string{"site_role"}},
		{"strings and weight", "Facter.add('Rack', :type => :aggregate) { }\nFacter.add \"row\" do\nend\nFacter.add(:site_role)\n", []string{"rack", "row", "site_role"}},
		{"libraries", "require 'json'\nrequire 'puppet/type/service'\nrequire('open3')\nFacter.add(:x) { setcode { JSON.generate([1]) } }\n", []string{"x"}},
		{"a computed name", "%w[a b].each do |n|\n  Facter.add(\"pippet_#{n}\") { setcode { n } }\nend\n", nil},
		{"a name in a variable", "name = :x\nFacter.add(name) { setcode { 1 } }\n", nil},
		{"the module's code", "require 'facter/util/puppet_settings'\nFacter.add(:x) { setcode { 1 } }\n", nil},
		{"a file loaded", "load '/etc/site.rb'\nFacter.add(:x) { setcode { 1 } }\n", nil},
		{"a file loaded, in a block", "Facter.add(:x) { setcode { load('/etc/site.rb'); 1 } }\n", nil},
		{"Kernel's eval", "eval(\"Facter.add(:y) {}\")\nFacter.add(:x) { setcode { 1 } }\n", nil},
		{"an object's load", "require 'augeas'\nFacter.add(:sssd_services) do\n  setcode do\n    Augeas.open do |aug|\n      aug.load\n    end\n  end\nend\n", []string{"sssd_services"}},
		{"require_relative", "require_relative 'other'\nFacter.add(:x) { setcode { 1 } }\n", nil},
		{"a require computed", "require File.join(__dir__, 'x')\nFacter.add(:x) { setcode { 1 } }\n", nil},
		{"define_fact", "Facter.define_fact(:x)\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.rb")
			require.NoError(t, os.WriteFile(p, []byte(c.ruby), 0o644))
			may := scanRuby([]string{p}).mayDefine
			if c.defines == nil {
				assert.True(t, may("kernel"), "anything")
				return
			}
			for _, n := range c.defines {
				assert.True(t, may(n), n)
			}
			assert.False(t, may("kernel"))
			assert.False(t, may("osfamily"))
		})
	}
	assert.True(t, scanRuby([]string{filepath.Join(t.TempDir(), "missing.rb")}).mayDefine("kernel"), "a file that cannot be read may define anything")
}

// Debian's ipaclient files (unknown to pippet: Facter evaluates them)
// define their facts literally: a native fact asking for osfamily does
// not wait for them.
func TestDefinedByIPAClient(t *testing.T) {
	dir := "/usr/share/puppet/modules/ipaclient/lib/facter"
	files := []string{filepath.Join(dir, "ipa_facts.rb"), filepath.Join(dir, "sssd_facts.rb")}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("Debian's ipaclient module (installed by .ci/run): %v", err)
		}
	}
	may := scanRuby(files).mayDefine
	for _, n := range []string{"ipa_domain", "ipa_server", "ipa_enrolled", "sssd_version", "sssd_services"} {
		assert.True(t, may(n), n)
	}
	assert.False(t, may("osfamily"))
	assert.False(t, may("kernel"))
}

// Whether Facter, evaluating a file, loads every file of its directories
// (it does when a fact asks for one it cannot find): then the known
// files are resolved after it, not beside it, and not again when it gave
// their facts (apt-get runs once).
func TestLoadsAll(t *testing.T) {
	have := func(name string) bool { return name == "kernel" || name == "os.family" || name == "site_role" }
	for _, c := range []struct {
		name, ruby string
		all        bool
	}{
		{"asks for nothing", "Facter.add(:a) { setcode { 'x' } }\n", false},
		{"asks for a core fact", "Facter.add(:a) { setcode { Facter.value(:kernel) } }\n", false},
		{"asks for a dotted core fact", "Facter.add(:a) { setcode { Facter.value('os.family') } }\n", false},
		{"asks for an unknown fact", "if Facter.value(:ipa_server).nil?\nend\n", true},
		{"asks by a computed name", "n = 'x'\nFacter.value(n)\n", true},
		{"Facter.fact of an unknown fact", "Facter.fact(\"nosuch\")\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.rb")
			require.NoError(t, os.WriteFile(p, []byte(c.ruby), 0o644))
			assert.Equal(t, c.all, scanRuby([]string{p}).loadsAll(have))
		})
	}
	ipa := "/usr/share/puppet/modules/ipaclient/lib/facter/ipa_facts.rb"
	if _, err := os.Stat(ipa); err == nil {
		assert.True(t, scanRuby([]string{ipa}).loadsAll(func(string) bool { return false }), "ipaclient's asks for ipa_server as it loads")
	}
}
