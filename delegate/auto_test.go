package delegate

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real puppetlabs-firewall type's autorequire of its package, found by
// Puppet for the whole catalog: a rule comes after Package[iptables] (and
// a Firewallchain it jumps to), whatever the catalog's order. A purge of
// firewall whose instances Puppet cannot read (no iptables-save here)
// declares no edge and fails nothing. A class the type autorequires is no
// edge: Puppet 7 skips it (Puppet::Type.type(:class) is nil).
func TestAutoRelationsFirewall(t *testing.T) {
	if _, ok := FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent)")
	}
	for _, m := range []string{"firewall", "postgresql"} {
		if _, err := os.Stat("/usr/share/puppet/modules/" + m); err != nil {
			t.Skipf("puppet-module-puppetlabs-%s not installed", m)
		}
	}
	f, err := New(Options{Fallback: ModePuppet, ModulePath: "/usr/share/puppet/modules"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(context.Background()) })
	require.True(t, f.DeclaresAuto("firewall"))
	require.True(t, f.DeclaresAuto("postgresql_psql"))
	edges, err := f.AutoRelations(context.Background(), []AutoResource{
		{Type: "Firewall", Title: "001 accept ssh", Params: map[string]any{"proto": "tcp", "dport": 22, "action": "accept"}, Ask: true},
		{Type: "Resources", Title: "firewall", Params: map[string]any{"purge": true}, Ask: true},
		{Type: "Postgresql_psql", Title: "ALTER ROLE x", Params: map[string]any{"command": "ALTER ROLE x", "db": "postgres"}, Ask: true},
		{Type: "Class", Title: "Postgresql::Server::Service"},
		{Type: "Package", Title: "iptables", Params: map[string]any{"ensure": "installed"}},
	})
	require.NoError(t, err)
	var got []string
	for _, e := range edges {
		got = append(got, e.Source+" -> "+e.Target+" ("+e.Kind+")")
	}
	assert.Equal(t, []string{"Package[iptables] -> Firewall[001 accept ssh] (require)"}, got)
}
