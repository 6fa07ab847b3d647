package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPuppetSettingsFromPuppetConf(t *testing.T) {
	dir := t.TempDir()
	fqdn := func() string { return "Host.Example.COM" }
	// No puppet.conf: Puppet's defaults.
	o, err := ResolvePuppet(PuppetOptions{}, dir, fqdn)
	require.NoError(t, err)
	assert.Equal(t, "puppet", o.Server)
	assert.Equal(t, 8140, o.Port)
	assert.Equal(t, "production", o.Environment)
	assert.Equal(t, "host.example.com", o.Certname)
	assert.False(t, o.NoCRL)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "puppet.conf"), []byte(`# comment
[main]
server = main.example.com
certname = node1
ssldir = $confdir/myssl
environment = staging

[agent]
server = agent.example.com   # the agent's wins
serverport = 8141
certificate_revocation = false

[server]
environment = not-for-the-agent
`), 0o644))
	o, err = ResolvePuppet(PuppetOptions{}, dir, fqdn)
	require.NoError(t, err)
	assert.Equal(t, &PuppetOptions{Server: "agent.example.com", Port: 8141, Environment: "staging",
		Certname: "node1", SSLDir: filepath.Join(dir, "myssl"), NoCRL: true}, o)

	// Flags win.
	o, err = ResolvePuppet(PuppetOptions{Server: "flag.example.com", Port: 9000, Environment: "dev", Certname: "Me", SSLDir: "/x/ssl"}, dir, fqdn)
	require.NoError(t, err)
	assert.Equal(t, "flag.example.com", o.Server)
	assert.Equal(t, 9000, o.Port)
	assert.Equal(t, "dev", o.Environment)
	assert.Equal(t, "me", o.Certname)
	assert.Equal(t, "/x/ssl", o.SSLDir)

	_, err = ResolvePuppet(PuppetOptions{Port: 70000}, dir, fqdn)
	assert.ErrorContains(t, err, "not a port")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "puppet.conf"), []byte("[main]\nserverport = x\n"), 0o644))
	// A broken puppet.conf is a warning; the defaults apply.
	o, err = ResolvePuppet(PuppetOptions{}, dir, fqdn)
	assert.ErrorContains(t, err, `serverport "x" is not a port`)
	var w *ConfWarning
	assert.ErrorAs(t, err, &w)
	assert.Equal(t, 8140, o.Port)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "puppet.conf"), []byte("[main]\njunk\n"), 0o644))
	o, err = ResolvePuppet(PuppetOptions{}, dir, fqdn)
	assert.ErrorContains(t, err, "not a setting")
	assert.ErrorAs(t, err, &w)
	assert.Equal(t, "puppet", o.Server)
}
