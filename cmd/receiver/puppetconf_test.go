package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/ssl"
)

// puppetUserPrint is `puppet config print NAMES --section user` (what
// puppet apply reads) for the puppet.conf in confdir.
func puppetUserPrint(t *testing.T, confdir string, args ...string) map[string]string {
	t.Helper()
	bin := "/usr/bin/puppet"
	if _, err := os.Stat(bin); err != nil {
		t.Skip("puppet is not installed")
	}
	argv := append([]string{"config", "print", "server", "serverport", "environment", "certname", "ssldir", "certificate_revocation",
		"--section", "user", "--config", filepath.Join(confdir, "puppet.conf")}, args...)
	cmd := exec.Command(bin, argv...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	out, err := cmd.Output()
	require.NoError(t, err, "%v", argv)
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, " = ")
		m[k] = v
	}
	return m
}

// TestReceiverApplyPuppetConf: receiver apply's puppet:// settings are
// puppet apply's (run mode user: [user] over [main], [agent] never read;
// the first line of a setting wins; quotes dropped; a # is part of the
// value; $vardir as set), each case settled by Puppet's config print.
// Its old reader took [agent] over [main], the last line, cut values at
// " #", kept quotes and took $vardir as /var/cache/puppet.
func TestReceiverApplyPuppetConf(t *testing.T) {
	cases := []struct {
		name, conf string
		flags      puppetFlags
		args       []string
	}{
		{"sections", `[main]
server = main.example.org
serverport = 8141
certname = node1.example.org
[agent]
server = agent.example.org
serverport = 8142
certificate_revocation = false
environment = agentenv
[user]
environment = userenv
[main]
server = later.example.org
`, puppetFlags{}, nil},
		{"quotes, comments, interpolation", `# a comment
[main]
vardir = VARDIR
ssldir = $vardir/ssl#x
certname = "quoted.example.org"
server = 'srv.example.org' # not a comment
environment = "staging"
[user]
certificate_revocation = leaf
`, puppetFlags{}, nil},
		{"flags win", `[user]
server = user.example.org
certname = conf.example.org
ssldir = $confdir/s
`, puppetFlags{Server: "flag.example.org", Port: 9000, Certname: "flag.example.org", Environment: "dev"},
			[]string{"--server", "flag.example.org", "--serverport", "9000", "--certname", "flag.example.org", "--environment", "dev"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := strings.ReplaceAll(c.conf, "VARDIR", filepath.Join(dir, "var"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "puppet.conf"), []byte(conf), 0o644))
			want := puppetUserPrint(t, dir, c.args...)
			o, _, warn, err := puppetSettings("user", filepath.Join(dir, "puppet.conf"), c.flags)
			require.NoError(t, err)
			require.NoError(t, warn)
			files, ok := o.TLS.(ssl.Files)
			require.True(t, ok, "puppet:// sources read the agent's SSL files: %#v", o.TLS)
			got := map[string]string{"server": o.Server, "serverport": itoa(o.Port), "environment": o.Environment,
				"certname": files.Certname, "ssldir": files.Dir, "certificate_revocation": files.Revocation}
			assert.Equal(t, map[string]string{"server": want["server"], "serverport": want["serverport"], "environment": want["environment"],
				"certname": want["certname"], "ssldir": want["ssldir"], "certificate_revocation": want["certificate_revocation"]}, got)
		})
	}
}

// TestReceiverApplyBrokenPuppetConf: a puppet.conf Puppet refuses is a
// warning naming the line; the defaults and the flags apply. A bad flag
// is an error.
func TestReceiverApplyBrokenPuppetConf(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "puppet.conf")
	require.NoError(t, os.WriteFile(p, []byte("[main]\nserver = s.example.org\n[production]\nmodulepath = x\n"), 0o644))
	o, s, warn, err := puppetSettings("user", p, puppetFlags{Certname: "me.example.org"})
	require.NoError(t, err)
	assert.ErrorContains(t, warn, p+":3: illegal section [production]")
	assert.Equal(t, "puppet", o.Server)
	assert.Equal(t, 8140, o.Port)
	assert.Equal(t, ssl.Files{Dir: s.SSLDir, Certname: "me.example.org", Revocation: s.CertificateRevocation}, o.TLS)
	assert.False(t, s.SetByConfig("server"))

	_, _, _, err = puppetSettings("user", p, puppetFlags{Port: 70000})
	assert.EqualError(t, err, "--serverport 70000 is not a port")
	require.NoError(t, os.WriteFile(p, []byte("[user]\nserver_list = a.example.org:8150,b.example.org\n"), 0o644))
	o, s, warn, err = puppetSettings("user", p, puppetFlags{})
	require.NoError(t, err)
	require.NoError(t, warn)
	assert.Equal(t, "a.example.org", o.Server)
	assert.Equal(t, 8150, o.Port)
	assert.True(t, s.SetByConfig("server_list"), "puppet:///modules/ then asks the server, not the modulepath")
}

func itoa(n int) string { return strconv.Itoa(n) }
