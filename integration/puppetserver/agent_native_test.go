package puppetserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// anativeEnv is issue 34's environment: `modulepath = modules` holding
// Debian's stdlib, ssh, systemd, host_core and cron_core, and a module of
// native resources (a puppet:/// file notifying a refreshonly exec, 40
// files whose content uses the facts, custom ones included, a host, a
// cron), whose facts.txt renders the modules' custom facts.
const anativeEnv = "anative"

// anativeFacts is facts.txt's content: the custom facts of the modules
// (not puppet_vardir, which is each agent's own).
const anativeFacts = `package_provider=${facts['package_provider']}
service_provider=${facts['service_provider']}
root_home=${facts['root_home']}
is_pe=${facts['is_pe']} pe_version=${facts['pe_version']}
puppet_server=${facts['puppet_server']} puppet_environmentpath=${facts['puppet_environmentpath']}
ssh_server=${facts['ssh_server_version_full']} ${facts['ssh_server_version_major']} ${facts['ssh_server_version_release']}
ssh_client=${facts['ssh_client_version_full']} ${facts['ssh_client_version_major']} ${facts['ssh_client_version_release']}
systemd=${facts['systemd']} ${facts['systemd_version']} ${facts['systemd_internal_services']}
vardir_set=${facts['puppet_vardir'] =~ String}
`

func init() {
	fixtures = append(fixtures, func(s *server) error {
		dir := filepath.Join(s.dir, "code", "environments", anativeEnv)
		files := map[string]string{
			"environment.conf":  "modulepath = modules\n",
			"manifests/site.pp": "node default {\n  include anative\n}\n",
			"modules/anative/manifests/init.pp": `class anative (String $root = $facts['acore_root']) {
  file { $root:
    ensure => directory,
    mode   => '0755',
  }
  file { "${root}/motd":
    ensure => file,
    source => 'puppet:///modules/anative/motd',
    mode   => '0644',
  }
  ~> exec { 'anative-refresh':
    command     => "/bin/sh -c 'echo refreshed >> ${root}/refresh.log'",
    refreshonly => true,
  }
  range(1, 40).each |$i| {
    file { "${root}/f${i}.conf":
      ensure  => file,
      content => "host=${facts['networking']['hostname']} os=${facts['os']['family']} i=${i} ssh=${facts['ssh_server_version_major']} root=${facts['root_home']}\n",
    }
  }
  file { "${root}/facts.txt":
    ensure  => file,
    content => @("END"),
` + anativeFacts + `      | END
  }
  host { 'anative.example':
    ip     => '10.9.8.7',
    target => "${root}/hosts",
  }
  cron { 'anative-facts':
    command => '/bin/true',
    user    => 'nobody',
    minute  => '17',
  }
}
`,
			"modules/anative/files/motd": "Welcome to an anative node\n",
		}
		for name, data := range files {
			if err := write(filepath.Join(dir, name), data); err != nil {
				return err
			}
		}
		for _, m := range []string{"stdlib", "ssh", "systemd", "host_core", "cron_core"} {
			if err := os.Symlink(filepath.Join("/usr/share/puppet/modules", m), filepath.Join(dir, "modules", m)); err != nil {
				return err
			}
		}
		return nil
	})
}

// rubyExec matches an execve of Ruby, Puppet or Facter in strace's log.
var rubyExec = regexp.MustCompile(`execve\("[^"]*/(ruby[0-9.]*|puppet|facter)"`)

// TestAgentNativeFactsStartNoRuby (issue 34): on issue 34's environment,
// the custom facts pluginsync brings are Debian's known files: receiver
// agent resolves them natively, renders the same facts.txt as Puppet's
// agent, and starts no Ruby, Puppet or Facter (strace -f -e
// trace=execve), neither on the first run nor converged.
func TestAgentNativeFactsStartNoRuby(t *testing.T) {
	s := need(t)
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet is not installed")
	}
	t.Cleanup(func() { removeCron(t, "anative-facts") })
	n := newNode(t, s, uniqueName("anative"))
	n.env = anativeEnv
	require.NoError(t, os.MkdirAll(n.root, 0o755))
	factsTxt := filepath.Join(n.root, "facts.txt")

	rvar := filepath.Join(n.dir, "puppet-var")
	code, out := runPuppetAgent(t, n, n.puppetConf(t, s, "puppet", rvar))
	require.Equal(t, 2, code, out)
	want := read(t, factsTxt)
	assert.Contains(t, want, "package_provider=apt\n")
	require.NoError(t, os.RemoveAll(n.root))
	require.NoError(t, os.MkdirAll(n.root, 0o755))

	pconf := n.puppetConf(t, s, "pippet", filepath.Join(n.dir, "pippet-var"))
	for i, wantCode := range []int{2, 0} {
		log := filepath.Join(n.dir, "strace.log")
		code, out, errs := runReceiverAgentWrapped(t, n, pconf, []string{strace, "-f", "-qq", "-e", "trace=execve", "-o", log}, "-t")
		require.Equal(t, wantCode, code, "run %d\n%s%s", i+1, out, errs)
		assert.NotContains(t, out+errs, "Facter:", "run %d: no fact went wrong", i+1)
		trace, err := os.ReadFile(log)
		require.NoError(t, err)
		require.Contains(t, string(trace), "execve(", "strace saw the processes")
		for _, line := range strings.Split(string(trace), "\n") {
			if rubyExec.MatchString(line) {
				t.Errorf("run %d started %s", i+1, line)
			}
		}
		assert.Equal(t, want, read(t, factsTxt), "run %d: the facts Puppet's agent rendered", i+1)
	}
}

// runReceiverAgentWrapped is runReceiverAgent with the receiver run by
// wrapper (strace ...).
func runReceiverAgentWrapped(t *testing.T, n *acoreNode, confdir string, wrapper []string, args ...string) (int, string, string) {
	t.Helper()
	saved := receiverBin
	script := filepath.Join(t.TempDir(), "receiver")
	q := make([]string, 0, len(wrapper)+1)
	for _, w := range append(wrapper, saved) {
		q = append(q, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec "+strings.Join(q, " ")+" \"$@\"\n"), 0o755))
	receiverBin = script
	defer func() { receiverBin = saved }()
	return runReceiverAgent(t, n, confdir, args...)
}

// removeCron removes the cron entries of user nobody named name (Puppet's
// "# Puppet Name: NAME" line and the line after it).
func removeCron(t testing.TB, name string) {
	out, err := exec.Command("crontab", "-u", "nobody", "-l").Output()
	if err != nil {
		return
	}
	var keep []string
	lines := strings.Split(string(out), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "# Puppet Name: "+name {
			i++
			continue
		}
		keep = append(keep, lines[i])
	}
	cmd := exec.Command("crontab", "-u", "nobody", "-")
	cmd.Stdin = strings.NewReader(strings.Join(keep, "\n"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Logf("crontab -u nobody: %v: %s", err, b)
	}
}
