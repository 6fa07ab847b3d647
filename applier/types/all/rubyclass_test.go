package all_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/typetest"
)

// TestRubyClassInMessages: a value of the wrong kind is named by its Ruby
// class, as Puppet 7 names it (each message recorded with `puppet apply
// --noop -e`; a boolean is a TrueClass or a FalseClass, not a Boolean).
// The types share one namer (applier.RubyClass). Puppet's messages are
// compared from "file mode": its capital "The" is pippet's "the", as a
// message of pippet's goes on after a colon.
func TestRubyClassInMessages(t *testing.T) {
	e := typetest.New(t, applier.Default.Types())
	dir := t.TempDir()
	cases := []struct{ typ, title, params, puppet string }{
		{"file", dir + "/f", "{mode: true}", "file mode specification must be a string, not 'TrueClass'"},
		{"file", dir + "/f", "{mode: false}", "file mode specification must be a string, not 'FalseClass'"},
		{"file", dir + "/f", "{mode: 1.5}", "file mode specification must be a string, not 'Float'"},
		{"file", dir + "/f", "{mode: 644}", "file mode specification must be a string, not 'Integer'"},
		{"user", "pippet-rc", "{purge_ssh_keys: [true]}", "Each entry for purge_ssh_keys must be a string, not a TrueClass"},
		{"user", "pippet-rc", "{purge_ssh_keys: [false]}", "Each entry for purge_ssh_keys must be a string, not a FalseClass"},
		{"user", "pippet-rc", "{purge_ssh_keys: [1]}", "Each entry for purge_ssh_keys must be a string, not a Integer"},
		{"user", "pippet-rc", "{purge_ssh_keys: [1.5]}", "Each entry for purge_ssh_keys must be a string, not a Float"},
		{"user", "pippet-rc", "{purge_ssh_keys: [[1]]}", "Each entry for purge_ssh_keys must be a string, not a Array"},
		{"user", "pippet-rc", "{purge_ssh_keys: [{a: 1}]}", "Each entry for purge_ssh_keys must be a string, not a Hash"},
		{"package", "pippet-rc", "{name: true}", "Name must be a String not TrueClass"},
		{"package", "pippet-rc", "{name: false}", "Name must be a String not FalseClass"},
		{"package", "pippet-rc", "{name: 1.5}", "Name must be a String not Float"},
		{"package", "pippet-rc", "{name: {a: 1}}", "Name must be a String not Hash"},
		{"exec", "pippet-rc", "{command: {a: 1}}", "Command must be a String or Array<String>, got value of class Hash"},
	}
	for _, c := range cases {
		res := e.Apply(c.typ, c.title, c.params)
		assert.True(t, res.Failed, "%s %s: %+v", c.typ, c.params, res)
		assert.Contains(t, res.Exception, c.puppet, "%s %s", c.typ, c.params)
	}
}
