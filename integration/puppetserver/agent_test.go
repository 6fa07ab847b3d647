package puppetserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The agent's end-to-end tests (issue 24): `receiver agent` and Puppet's
// own `puppet agent -t` against the same server, on the same node.
//
// The environment acore holds a site.pp including the module acore:
// native types from the Forge modules on the server's modulepath
// (stdlib's file_line, inifile's ini_setting), a file from a puppet:///
// source notifying a refreshonly exec (a refresh chain), a recursive
// puppet:/// directory, and acore_marker, a custom type whose Ruby only
// the module's lib/ holds: the agent gets it by pluginsync, and pippet
// delegates it to Puppet, which must find it in the agent's vardir/lib.
// Where the node's files go is the fact acore_root (FACTER_acore_root),
// so that two runs of the same node can be pointed at fresh directories.

const (
	acoreEnv     = "acore"
	acoreLeanEnv = "acorelean"
)

var acoreFiles = map[string]string{
	"manifests/site.pp": `node default {
  include acore
}
`,
	"modules/acore/manifests/init.pp": `class acore (String $root = $facts['acore_root']) {
  file { $root:
    ensure => directory,
    mode   => '0755',
  }
  file { "${root}/motd":
    ensure => file,
    source => 'puppet:///modules/acore/motd',
    mode   => '0644',
  }
  ~> exec { 'acore-refresh':
    command     => "/bin/sh -c 'echo refreshed >> ${root}/refresh.log'",
    refreshonly => true,
  }
  file { "${root}/conf.d":
    ensure  => directory,
    source  => 'puppet:///modules/acore/conf.d',
    recurse => true,
  }
  file { "${root}/motd.local":
    ensure => file,
  }
  -> file_line { 'acore-line':
    path => "${root}/motd.local",
    line => 'managed by acore',
  }
  ini_setting { 'acore-color':
    ensure  => present,
    path    => "${root}/settings.ini",
    section => 'main',
    setting => 'color',
    value   => 'blue',
    require => File[$root],
  }
  acore_marker { 'acore-marker':
    path    => "${root}/marker",
    content => 'brought by pluginsync',
    require => File[$root],
  }
}
`,
	"modules/acore/facts.d/acore_role.txt": "acore_role=webserver\n",
	"modules/acore/files/motd":             "Welcome to an acore node\n",
	"modules/acore/files/conf.d/a.conf":    "a = 1\n",
	"modules/acore/files/conf.d/b/b.conf":  "b = 2\n",
	"modules/acore/lib/puppet/type/acore_marker.rb": `Puppet::Type.newtype(:acore_marker) do
  @doc = 'A file holding one line; only pluginsync brings this type to an agent.'
  ensurable do
    defaultvalues
    defaultto :present
  end
  newparam(:name, namevar: true)
  newparam(:path)
  newproperty(:content)
end
`,
	"modules/acore/lib/puppet/provider/acore_marker/ruby.rb": `Puppet::Type.type(:acore_marker).provide(:ruby) do
  def exists?
    File.exist?(resource[:path])
  end

  def create
    File.write(resource[:path], resource[:content].to_s + "\n")
  end

  def destroy
    File.delete(resource[:path])
  end

  def content
    File.exist?(resource[:path]) ? File.read(resource[:path]).chomp : :absent
  end

  def content=(value)
    File.write(resource[:path], value.to_s + "\n")
  end
end
`,
}

func init() {
	fixtures = append(fixtures, func(s *server) error {
		dir := filepath.Join(s.dir, "code", "environments", acoreEnv)
		for name, data := range acoreFiles {
			if err := write(filepath.Join(dir, name), data); err != nil {
				return err
			}
		}
		// acorelean: the same node with only the modules it uses on its
		// modulepath (stdlib and inifile for their types), so that no
		// other module's plugins and custom facts come with pluginsync
		// (the benchmark's second case).
		lean := filepath.Join(s.dir, "code", "environments", acoreLeanEnv)
		for name, data := range acoreFiles {
			if err := write(filepath.Join(lean, name), data); err != nil {
				return err
			}
		}
		if err := write(filepath.Join(lean, "environment.conf"), "modulepath = modules\n"); err != nil {
			return err
		}
		for _, m := range []string{"stdlib", "inifile"} {
			if err := os.Symlink(filepath.Join("/usr/share/puppet/modules", m), filepath.Join(lean, "modules", m)); err != nil {
				return err
			}
		}
		// An environment whose catalog does not compile: the server
		// answers the catalog request with an error.
		return write(filepath.Join(s.dir, "code", "environments", "acorebroken", "manifests", "site.pp"),
			"fail('acore: broken on purpose')\n")
	})
}

// acoreNode is one agent node of these tests: its certname, ssldir and
// the directories of its runs.
type acoreNode struct {
	certname, dir, ssldir, root string
	// env is the node's environment (acoreEnv when "").
	env string
}

// newNode gives certname a certificate signed by the server's CA (made
// through the running CA's API) in an ssldir of its own.
func newNode(t *testing.T, s *server, certname string) *acoreNode {
	t.Helper()
	n := &acoreNode{certname: certname, dir: t.TempDir()}
	n.ssldir = filepath.Join(n.dir, "ssl")
	n.root = filepath.Join(n.dir, "root")
	ssl := filepath.Join(s.dir, "puppet", "ssl")
	if _, err := os.Stat(filepath.Join(ssl, "certs", certname+".pem")); err != nil {
		require.NoError(t, ca(s.confFile, "generate", "--certname", certname))
	}
	for src, dst := range map[string]string{
		"certs/ca.pem":                      "certs/ca.pem",
		"crl.pem":                           "crl.pem",
		"certs/" + certname + ".pem":        "certs/" + certname + ".pem",
		"private_keys/" + certname + ".pem": "private_keys/" + certname + ".pem",
	} {
		require.NoError(t, copyFile(filepath.Join(ssl, src), filepath.Join(n.ssldir, dst), 0o600))
	}
	return n
}

// agentConf is the node's puppet.conf for an agent whose state is under
// vardir (extra: more lines for [agent]).
func agentConf(n *acoreNode, s *server, vardir string, extra ...string) string {
	env := n.env
	if env == "" {
		env = acoreEnv
	}
	return fmt.Sprintf(`[main]
ssldir = %s
vardir = %s
publicdir = %s
rundir = %s
logdir = %s
certname = %s
server = localhost
serverport = %d
[agent]
environment = %s
%s
`, n.ssldir, vardir, filepath.Join(vardir, "public"), filepath.Join(vardir, "run"), filepath.Join(vardir, "log"), n.certname, s.port, env, strings.Join(extra, "\n"))
}

// puppetConf writes the node's puppet.conf (agentConf) into a confdir of
// its own, named name, and returns that confdir.
func (n *acoreNode) puppetConf(t *testing.T, s *server, name, vardir string, extra ...string) string {
	t.Helper()
	confdir := filepath.Join(n.dir, name+"-conf")
	require.NoError(t, write(filepath.Join(confdir, "puppet.conf"), agentConf(n, s, vardir, extra...)))
	return confdir
}

// runPuppetAgent runs Puppet's own agent (`puppet agent -t`) with confdir.
func runPuppetAgent(t *testing.T, n *acoreNode, confdir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "puppet", append([]string{"agent", "-t", "--confdir", confdir}, args...)...)
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"FACTER_acore_root="+n.root, "HOME="+n.dir)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("puppet agent: %v\n%s", err, out.String())
	}
	return code, out.String()
}

// runReceiverAgent runs `receiver agent ARGS --confdir confdir`.
func runReceiverAgent(t *testing.T, n *acoreNode, confdir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, append(append([]string{"agent"}, args...),
		"--confdir", confdir, "--state-dir", filepath.Join(n.dir, "pippet-state"))...)
	cmd.Env = append(os.Environ(), "FACTER_acore_root="+n.root, "HOME="+n.dir)
	cmd.Dir = "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("receiver agent: %v\n%s%s", err, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}

// stored waits for the report the server stored for certname with the
// run's transaction_uuid (its reports processor store: one file a
// minute, so a later run may replace it) and returns it.
func stored(t *testing.T, s *server, certname, uuid string) map[string]any {
	t.Helper()
	dir := filepath.Join(s.dir, "var", "reports", certname)
	deadline := time.Now().Add(30 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !bytes.Contains(b, []byte(uuid)) {
				continue
			}
			var rep map[string]any
			require.NoError(t, yaml.Unmarshal(stripRubyTags(b), &rep), f)
			if rep["transaction_uuid"] == uuid {
				return rep
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server stored no report with transaction_uuid %s in %s", uuid, dir)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stripRubyTags drops the Ruby object tags of Puppet's YAML
// (!ruby/object:Puppet::Transaction::Report).
func stripRubyTags(b []byte) []byte {
	return regexp.MustCompile(`!ruby/[^\s]+`).ReplaceAll(b, nil)
}

// lastUUID is the transaction_uuid of the agent's last_run_report.yaml.
func lastUUID(t *testing.T, vardir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vardir, "state", "last_run_report.yaml"))
	require.NoError(t, err)
	var rep map[string]any
	require.NoError(t, yaml.Unmarshal(stripRubyTags(b), &rep))
	u, _ := rep["transaction_uuid"].(string)
	require.NotEmpty(t, u)
	return u
}

// outcome is what the comparison keeps of a resource's status.
type outcome struct {
	Changed, Failed, Skipped, OutOfSync bool
	Events                              []string // property status message
}

// outcomes are a stored report's resource statuses, by resource, leaving
// out the ones a recursive File generated (pippet reports the recursion
// on the File that asks for it: docs/compatibility.md).
func outcomes(t *testing.T, rep map[string]any, generatedUnder string) map[string]outcome {
	t.Helper()
	statuses, _ := rep["resource_statuses"].(map[string]any)
	out := map[string]outcome{}
	for ref, v := range statuses {
		if generatedUnder != "" && strings.HasPrefix(ref, "File["+generatedUnder+"/") {
			continue
		}
		st := v.(map[string]any)
		o := outcome{Changed: st["changed"] == true, Failed: st["failed"] == true, Skipped: st["skipped"] == true, OutOfSync: st["out_of_sync"] == true}
		evs, _ := st["events"].([]any)
		for _, e := range evs {
			ev := e.(map[string]any)
			o.Events = append(o.Events, fmt.Sprintf("%v %v %v", ev["property"], ev["status"], ev["message"]))
		}
		out[ref] = o
	}
	return out
}

// consoleLines are an agent's Info and Notice lines, made comparable:
// colours dropped, the vardir and the configuration version and times
// replaced by names, the lines about what only one side has left out
// (Facter's complaints on this machine, Puppet's state file, the
// resources a recursive File generates in Puppet's report).
func consoleLines(out, vardir, generatedUnder string) []string {
	return consoleLinesOf(out, vardir, generatedUnder, false)
}

// consoleLinesOf is consoleLines keeping, when diffs is true, the lines
// of a diff too (---, +++, @@, -, +, a space).
func consoleLinesOf(out, vardir, generatedUnder string, diffs bool) []string {
	colour := regexp.MustCompile(`\x1b\[[0-9;]*m`)
	version := regexp.MustCompile(`configuration version '[^']*'`)
	seconds := regexp.MustCompile(`in [0-9.]+ seconds`)
	var lines []string
	for _, l := range strings.Split(colour.ReplaceAllString(out, ""), "\n") {
		switch {
		case diffs && l != "" && strings.ContainsRune("-+ @\\", rune(l[0])):
		case !strings.HasPrefix(l, "Info: ") && !strings.HasPrefix(l, "Notice: "),
			strings.HasPrefix(l, "Info: Creating state file"),
			generatedUnder != "" && strings.Contains(l, "File["+generatedUnder+"/"):
			continue
		}
		l = strings.ReplaceAll(l, vardir, "VARDIR")
		l = version.ReplaceAllString(l, "configuration version 'V'")
		l = seconds.ReplaceAllString(l, "in N seconds")
		lines = append(lines, l)
	}
	return lines
}

// TestAgentConvergesAsPuppetDoes: `receiver agent -t` converges a node
// from the server's catalog (native types, a custom type pluginsync
// brings, puppet:/// sources, a refresh), then has nothing to change;
// the server stores both reports; Puppet's own agent on the same node
// (its directories reset) prints the same lines and the server stores
// the same resource statuses.
func TestAgentConvergesAsPuppetDoes(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-converge")
	confd := filepath.Join(n.root, "conf.d")

	pvar := filepath.Join(n.dir, "pippet-var")
	pconf := n.puppetConf(t, s, "pippet", pvar)
	code, out1, errs := runReceiverAgent(t, n, pconf, "-t")
	require.Equal(t, 2, code, "the first run changes the node\n%s%s", out1, errs)
	assert.Empty(t, errs, "nothing on stderr")
	for name, want := range map[string]string{
		"motd": "Welcome to an acore node\n", "conf.d/a.conf": "a = 1\n", "conf.d/b/b.conf": "b = 2\n",
		"refresh.log": "refreshed\n", "motd.local": "managed by acore\n", "marker": "brought by pluginsync\n",
	} {
		assert.Equal(t, want, read(t, filepath.Join(n.root, name)), name)
	}
	assert.Contains(t, read(t, filepath.Join(n.root, "settings.ini")), "color = blue")
	assert.FileExists(t, filepath.Join(pvar, "lib", "puppet", "type", "acore_marker.rb"), "pluginsync brought the type")
	assert.FileExists(t, filepath.Join(pvar, "facts.d", "acore_role.txt"), "pluginsync brought the pluginfacts")
	assert.FileExists(t, filepath.Join(pvar, "public", "last_run_summary.yaml"))
	assert.FileExists(t, filepath.Join(pvar, "client_data", "catalog", "acore-converge.json"), "the catalog cached")
	p1 := stored(t, s, n.certname, lastUUID(t, pvar))
	assert.Equal(t, "changed", p1["status"])

	code, out2, errs := runReceiverAgent(t, n, pconf, "-t")
	require.Equal(t, 0, code, "the second run has nothing to change\n%s%s", out2, errs)
	assert.NotContains(t, out2, "Notice: /Stage")
	p2 := stored(t, s, n.certname, lastUUID(t, pvar))
	assert.Equal(t, "unchanged", p2["status"])

	// Puppet's agent on the same node: the same paths, reset.
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet is not installed: no reference run")
	}
	require.NoError(t, os.RemoveAll(n.root))
	rvar := filepath.Join(n.dir, "puppet-var")
	rconf := n.puppetConf(t, s, "puppet", rvar)
	code, ref1 := runPuppetAgent(t, n, rconf)
	require.Equal(t, 2, code, ref1)
	r1 := stored(t, s, n.certname, lastUUID(t, rvar))
	code, ref2 := runPuppetAgent(t, n, rconf)
	require.Equal(t, 0, code, ref2)
	r2 := stored(t, s, n.certname, lastUUID(t, rvar))

	assert.Equal(t, outcomes(t, r1, confd), outcomes(t, p1, confd), "first run: resource statuses (want Puppet's)")
	assert.Equal(t, outcomes(t, r2, confd), outcomes(t, p2, confd), "second run: resource statuses (want Puppet's)")
	assert.Equal(t, r1["status"], p1["status"])
	assert.Equal(t, r2["status"], p2["status"])
	assert.Equal(t, consoleLines(ref1, rvar, confd), consoleLines(out1, pvar, confd), "first run: the console (want Puppet's)")
	assert.Equal(t, consoleLines(ref2, rvar, confd), consoleLines(out2, pvar, confd), "second run: the console (want Puppet's)")
}

// TestAgentCachedCatalogWhenServerUnreachable: with the server out of
// reach (a port nothing listens on), usecacheonfailure runs the cached
// catalog and says so; --test (no usecacheonfailure) applies nothing and
// exits 1.
func TestAgentCachedCatalogWhenServerUnreachable(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-cache")
	vardir := filepath.Join(n.dir, "var")
	conf := n.puppetConf(t, s, "pippet", vardir)
	code, out, errs := runReceiverAgent(t, n, conf, "-t")
	require.Equal(t, 2, code, "%s%s", out, errs)

	dead, err := freePort()
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(n.root, "motd.local")))
	code, out, errs = runReceiverAgent(t, n, conf, "-t", "--serverport", fmt.Sprint(dead))
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, errs, "Could not retrieve catalog; skipping run")
	assert.NoFileExists(t, filepath.Join(n.root, "motd.local"), "nothing applied")

	code, out, errs = runReceiverAgent(t, n, conf, "--onetime", "--no-daemonize", "--detailed-exitcodes", "--verbose",
		"--serverport", fmt.Sprint(dead))
	// The server's catalog is static (it has a code_id): the metadata of
	// the puppet:/// sources is in it, so the unchanged files need no
	// request and the cached catalog applies whole.
	assert.Equal(t, 2, code, "%s%s", out, errs)
	assert.NotContains(t, out+errs, "File["+filepath.Join(n.root, "motd")+"]")
	assert.Contains(t, out, "Info: Using cached catalog from environment 'acore'")
	assert.Contains(t, out, "Notice: /Stage[main]/Acore/File["+filepath.Join(n.root, "motd.local")+"]/ensure: created")
	assert.FileExists(t, filepath.Join(n.root, "motd.local"))
	assert.Contains(t, errs, "Could not send report")
}

// TestAgentDisabledAndLocked: a disabled agent and a run in progress
// each skip the run, exit 1 and apply nothing; --enable lets it run.
func TestAgentDisabledAndLocked(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-lock")
	vardir := filepath.Join(n.dir, "var")
	conf := n.puppetConf(t, s, "pippet", vardir)

	code, out, errs := runReceiverAgent(t, n, conf, "--disable", "maintenance window", "--logdest", "console")
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "Notice: Disabling Puppet.")
	lock := filepath.Join(vardir, "state", "agent_disabled.lock")
	assert.JSONEq(t, `{"disabled_message":"maintenance window"}`, read(t, lock))
	code, out, errs = runReceiverAgent(t, n, conf, "-t")
	assert.Equal(t, 1, code)
	// Puppet's two-line notice; each line gets its prefix.
	assert.Contains(t, out, "Notice: Skipping run of Puppet configuration client; administratively disabled (Reason: 'maintenance window');\n")
	assert.Contains(t, out, "Use 'puppet agent --enable' to re-enable.\n")
	assert.NoDirExists(t, n.root, "nothing applied")
	code, out, _ = runReceiverAgent(t, n, conf, "--enable", "--logdest", "console")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "Notice: Enabling Puppet.")
	assert.NoFileExists(t, lock)

	// A run in progress: Puppet's lock file naming a live Puppet process.
	holder := filepath.Join(n.dir, "puppet")
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	require.NoError(t, copyFile(sleep, holder, 0o755))
	cmd := exec.Command(holder, "60")
	require.NoError(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	runLock := filepath.Join(vardir, "state", "agent_catalog_run.lock")
	require.NoError(t, os.WriteFile(runLock, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644))
	code, out, errs = runReceiverAgent(t, n, conf, "-t")
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, out, "Notice: Run of Puppet configuration client already in progress; skipping  ("+runLock+" exists)")
	assert.NoDirExists(t, n.root, "nothing applied")

	cmd.Process.Kill()
	cmd.Wait()
	code, out, errs = runReceiverAgent(t, n, conf, "-t")
	assert.Equal(t, 2, code, "a stale lock is taken over\n%s%s", out, errs)
	assert.DirExists(t, n.root)
}

// TestAgentFaults: a server that answers an error, an environment it
// does not have, a revoked certificate: each a clear message, the exit
// status that says so, nothing applied.
func TestAgentFaults(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-faults")
	vardir := filepath.Join(n.dir, "var")
	conf := n.puppetConf(t, s, "pippet", vardir)

	code, out, errs := runReceiverAgent(t, n, conf, "-t", "--environment", "acorebroken")
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, errs, "Error: Could not retrieve catalog from remote server: Error 500 on SERVER: ")
	assert.Contains(t, errs, "acore: broken on purpose")
	assert.Contains(t, errs, "Error: Could not retrieve catalog; skipping run")
	assert.NoDirExists(t, n.root)

	// The server answers production's (empty) catalog: the agent says
	// so and applies that.
	code, out, errs = runReceiverAgent(t, n, conf, "-t", "--environment", "acorenosuch")
	assert.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "Notice: Environment 'acorenosuch' not found on server, skipping initial pluginsync.\n")
	assert.Contains(t, out, "Notice: Local environment: 'acorenosuch' doesn't match server specified environment 'production', restarting agent run with environment 'production'\n")
	assert.NoDirExists(t, n.root)

	require.NoError(t, ca(s.confFile, "revoke", "--certname", n.certname))
	time.Sleep(time.Second) // the server takes the new CRL
	code, out, errs = runReceiverAgent(t, n, conf, "-t")
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, errs, "Error: Could not retrieve catalog from remote server: Request to https://localhost:")
	assert.Contains(t, errs, "tls: unknown certificate")
	assert.NoDirExists(t, n.root)
}

// TestAgentPrerunPostrun: prerun_command runs before the apply and
// postrun_command after it; a failing prerun_command fails the run and
// nothing is applied.
func TestAgentPrerunPostrun(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-hooks")
	vardir := filepath.Join(n.dir, "var")
	log := filepath.Join(n.dir, "hooks.log")
	script := func(name, body string) string {
		p := filepath.Join(n.dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		return p
	}
	pre := script("pre", "test -d "+n.root+" && echo pre-after >> "+log+" || echo pre >> "+log)
	post := script("post", "test -f "+filepath.Join(n.root, "marker")+" && echo post >> "+log)
	conf := n.puppetConf(t, s, "pippet", vardir, "prerun_command = "+pre, "postrun_command = "+post)
	code, out, errs := runReceiverAgent(t, n, conf, "-t")
	require.Equal(t, 2, code, "%s%s", out, errs)
	assert.Equal(t, "pre\npost\n", read(t, log), "prerun before the apply, postrun after")

	require.NoError(t, os.Remove(filepath.Join(n.root, "motd.local")))
	conf = n.puppetConf(t, s, "pippet", vardir, "prerun_command = "+script("fails", "echo no way >&2; exit 3"))
	code, out, errs = runReceiverAgent(t, n, conf, "-t")
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, errs, "Error: Could not run command from prerun_command: Execution of '"+filepath.Join(n.dir, "fails")+"' returned 3: no way")
	assert.NoFileExists(t, filepath.Join(n.root, "motd.local"), "nothing applied")
}

// TestAgentDaemonLoop: without --onetime the agent runs, waits
// runinterval, runs again, and stops cleanly on TERM.
func TestAgentDaemonLoop(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-daemon")
	vardir := filepath.Join(n.dir, "var")
	conf := n.puppetConf(t, s, "pippet", vardir)
	var out, errs testutil.SyncBuffer
	// As Puppet's, the agent logs to the console only when told.
	cmd := exec.Command(receiverBin, "agent", "--no-daemonize", "--logdest", "console", "--runinterval", "1", "--confdir", conf,
		"--state-dir", filepath.Join(n.dir, "pippet-state"))
	cmd.Env = append(os.Environ(), "FACTER_acore_root="+n.root, "HOME="+n.dir)
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	deadline := time.Now().Add(3 * time.Minute)
	for strings.Count(out.String(), "Notice: Applied catalog in") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("two runs did not happen:\n%s%s", out.String(), errs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "%s%s", out.String(), errs.String())
	assert.Contains(t, out.String(), "Notice: Starting Puppet client version")
	assert.Contains(t, out.String(), "Notice: Caught TERM; exiting")
	assert.FileExists(t, filepath.Join(n.root, "marker"))
	assert.NoFileExists(t, filepath.Join(vardir, "state", "agent_catalog_run.lock"), "the run lock released")
}

// TestAgentQuickStart is docs/agent.md's quick start: a node with nothing
// (no puppet.conf, no ssldir) runs `receiver agent -t --server HOST
// --waitforcert N`, which makes its key and request and waits; the CA
// signs; the run goes on, converges the node (exit 2) and the server
// stores its report; the next run has nothing to change (exit 0).
func TestAgentQuickStart(t *testing.T) {
	s := need(t)
	dir := t.TempDir()
	const certname = "acore-quickstart"
	root := filepath.Join(dir, "root")
	vardir := filepath.Join(dir, "var")
	args := []string{"agent", "-t", "--server", "localhost", "--serverport", fmt.Sprint(s.port),
		"--certname", certname, "--environment", acoreEnv, "--waitforcert", "1",
		// Everything of the node under dir (the machine's own Puppet
		// directories left alone); a real node keeps Puppet's defaults.
		"--confdir", filepath.Join(dir, "etc"), "--ssldir", filepath.Join(dir, "ssl"),
		"--vardir", vardir, "--publicdir", filepath.Join(vardir, "public"),
		"--rundir", filepath.Join(vardir, "run"), "--logdir", filepath.Join(vardir, "log"),
		"--keylength", "2048", "--state-dir", filepath.Join(dir, "pippet-state")}
	run := func() *exec.Cmd {
		cmd := exec.Command(receiverBin, args...)
		cmd.Env = append(os.Environ(), "FACTER_acore_root="+root, "HOME="+dir)
		cmd.Dir = "/"
		return cmd
	}
	var out, errs testutil.SyncBuffer
	cmd := run()
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	request := filepath.Join(s.dir, "puppet", "ca", "requests", certname+".pem")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(request); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certificate request reached the CA:\n%s%s", out.String(), errs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, ca(s.confFile, "sign", "--certname", certname))
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s%s", out.String(), errs.String())
	require.Equal(t, 2, ee.ExitCode(), "%s%s", out.String(), errs.String())
	for _, line := range []string{
		"Info: Creating a new RSA SSL key for " + certname + "\n",
		"Info: Creating a new SSL certificate request for " + certname + "\n",
		"Info: Certificate Request fingerprint (SHA256): ",
		"Info: Certificate for " + certname + " has not been signed yet\n",
		"Info: Will try again in 1 seconds.\n",
		"Notice: Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (" + certname + ").\n",
		"Info: Downloaded certificate for " + certname + " from https://localhost:" + fmt.Sprint(s.port) + "/puppet-ca/v1\n",
		"Info: Using environment 'acore'\n",
		"Info: Caching catalog for " + certname + "\n",
		"Notice: Applied catalog in ",
	} {
		assert.Contains(t, out.String(), line)
	}
	assert.FileExists(t, filepath.Join(root, "marker"))
	stored(t, s, certname, lastUUID(t, vardir))

	second, err := run().CombinedOutput()
	require.NoError(t, err, "the second run has nothing to change (exit 0)\n%s", second)
	assert.NotContains(t, string(second), "Notice: /Stage")
	stored(t, s, certname, lastUUID(t, vardir))
}

// TestAgentNoopAndTags: --noop changes nothing and says what it would
// do (exit 0: noop events are no changes); --tags applies only the
// resources with one of the tags.
func TestAgentNoopAndTags(t *testing.T) {
	s := need(t)
	n := newNode(t, s, "acore-noop")
	vardir := filepath.Join(n.dir, "var")
	conf := n.puppetConf(t, s, "pippet", vardir)

	code, out, errs := runReceiverAgent(t, n, conf, "-t", "--noop")
	assert.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "Notice: /Stage[main]/Acore/File["+n.root+"]/ensure: current_value 'absent', should be 'directory' (noop)")
	assert.NoDirExists(t, n.root, "nothing changed")
	assert.NoFileExists(t, filepath.Join(vardir, "client_data", "catalog", n.certname+".json"), "a noop run does not cache its catalog")

	require.NoError(t, os.MkdirAll(n.root, 0o755))
	code, out, errs = runReceiverAgent(t, n, conf, "-t", "--tags", "ini_setting")
	assert.Equal(t, 2, code, "%s%s", out, errs)
	assert.Contains(t, read(t, filepath.Join(n.root, "settings.ini")), "color = blue")
	assert.NoFileExists(t, filepath.Join(n.root, "marker"), "not tagged")
	assert.NoFileExists(t, filepath.Join(n.root, "motd"), "not tagged")
}
