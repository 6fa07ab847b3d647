package puppetserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The secrets environment: Sensitive file contents, a Sensitive exec
// command that fails, a Sensitive unless, a Sensitive notify message, a
// plain file whose diff -t shows.
const asecretsEnv = "asecrets"

const asecretsSite = `node default {
  $r = $facts['acore_root']
  file { $r: ensure => directory }
  file { "${r}/f": content => Sensitive("NEWSECRET1\n") }
  file { "${r}/new": content => Sensitive("NEWSECRET2\n"), mode => '0600' }
  file { "${r}/plain": content => "plain new\n" }
  exec { 'e1': command => Sensitive("/bin/sh -c 'echo SECRET3; exit 3'"), logoutput => true }
  exec { 'e2': command => "/bin/sh -c 'echo SECRET4; exit 0'", unless => Sensitive("/bin/sh -c 'echo SECRET5; exit 1'"), logoutput => true }
  notify { 'n': message => Sensitive("SECRET6") }
}
`

var asecrets = []string{"NEWSECRET1", "NEWSECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6"}

func init() {
	fixtures = append(fixtures, func(s *server) error {
		return write(filepath.Join(s.dir, "code", "environments", asecretsEnv, "manifests", "site.pp"), asecretsSite)
	})
}

// TestAgentSecretsNeverWritten (issue 36, done when): `receiver agent -t`
// against the real Puppet Server applies a catalog with Sensitive values
// that changes, fails and diffs (-t sets show_diff); no secret is in its
// output, the report it uploaded (the server's stored copy), or any file
// it wrote under its vardir and state directory, but the cached catalog,
// which holds them as Puppet's own agent's does (it must, to be applied
// again) and as Puppet's compiler sent them, named in
// sensitive_parameters.
func TestAgentSecretsNeverWritten(t *testing.T) {
	s := need(t)
	n := newNode(t, s, uniqueName("asecrets"))
	n.env = asecretsEnv
	require.NoError(t, os.MkdirAll(n.root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(n.root, "f"), []byte("OLD\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(n.root, "plain"), []byte("plain old\n"), 0o644))
	vardir := filepath.Join(n.dir, "var")
	confdir := n.puppetConf(t, s, "receiver", vardir)
	before := time.Now()
	code, out, errs := runReceiverAgent(t, n, confdir, "-t", "--no-pluginsync")
	assert.Equal(t, 6, code, out+errs)
	all := out + errs
	assert.Contains(t, all, "/File["+n.root+"/f]/content: [diff redacted]")
	assert.Contains(t, all, "/File["+n.root+"/f]/content: changed [redacted] to [redacted]")
	assert.Contains(t, all, "/Exec[e1]/returns: [output redacted]")
	assert.Contains(t, all, "[command redacted] returned 3 instead of one of [0]")
	assert.Contains(t, all, "Sensitive [value redacted]")
	assert.Contains(t, all, "-plain old", "-t shows a plain file's diff (the test can fail)")
	for _, sec := range asecrets {
		assert.NotContains(t, all, sec, "the agent's output")
	}
	b, err := os.ReadFile(filepath.Join(n.root, "f"))
	require.NoError(t, err)
	assert.Equal(t, "NEWSECRET1\n", string(b), "the secret is applied")

	cached := filepath.Join(vardir, "client_data", "catalog", n.certname+".json")
	raw, err := os.ReadFile(cached)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "sensitive_parameters", "the cached catalog is the server's")
	var leaks []string
	for _, dir := range []string{vardir, filepath.Join(n.dir, "pippet-state")} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == cached || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, sec := range asecrets {
				if strings.Contains(string(b), sec) {
					leaks = append(leaks, p+": "+sec)
				}
			}
			return nil
		}))
	}
	assert.Empty(t, leaks)

	// The report the server stored.
	files, _ := filepath.Glob(filepath.Join(s.dir, "var", "reports", n.certname, "*.yaml"))
	deadline := time.Now().Add(20 * time.Second)
	for len(files) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		files, _ = filepath.Glob(filepath.Join(s.dir, "var", "reports", n.certname, "*.yaml"))
	}
	require.NotEmpty(t, files, "the server stored the report (run at %v)", before)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Contains(t, string(b), "[command redacted]")
		for _, sec := range asecrets {
			assert.NotContains(t, string(b), sec, "the stored report %s", f)
		}
	}
}
