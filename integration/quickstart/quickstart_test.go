// Package quickstart runs docs/agent.md's "No server yet" section as a
// newcomer would: its shell blocks, as written there, on a host as
// Debian's packages leave it, from a Puppet Server that has never started
// to an agent run that applies the catalog and a second that has nothing
// to do.
//
// The host here has run other tests and has its own Puppet directories,
// so each test gives the blocks a host of their own: private mount and
// network namespaces, and a PID namespace that ends the server with the
// test (unshare), where /etc/puppet, /var/lib/puppet,
// /var/lib/puppetserver, /var/log/puppetserver, /var/cache/puppet,
// /var/log/puppet, /srv, /run and /tmp are fresh (the packages' files
// copied from this host, nothing a run made), and port 8140 on loopback
// is free. Two things stand in for what cannot run here, and the test
// says so: the package is installed already (apt-get install is not run),
// and `puppetserver foreground &` starts the server where the section
// says `systemctl start puppetserver` (systemd is not PID 1 on these
// machines), as the section itself offers.
package quickstart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// docBlocks returns the ```sh blocks of docs/agent.md's "No server yet"
// section, in order, each with its continuation lines joined.
func docBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "agent.md"))
	require.NoError(t, err)
	doc := string(b)
	start := strings.Index(doc, "### No server yet")
	require.GreaterOrEqual(t, start, 0, "docs/agent.md has no 'No server yet' section")
	section := doc[start:]
	if end := strings.Index(section[4:], "\n## "); end >= 0 {
		section = section[:end+4]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, strings.ReplaceAll(m[1], "\\\n", ""))
	}
	require.Len(t, blocks, 3, "the section's blocks: the server, the agent, the signing")
	return blocks
}

// serverBlock is the section's first block as the test runs it: the
// package's install left out (installed already; the test checks) and
// systemctl's line replaced by the foreground start its comment offers,
// then a wait until the server answers.
func serverBlock(t *testing.T, block string) string {
	t.Helper()
	var out []string
	installed, started := false, false
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "apt-get install -y puppetserver"):
			installed = true
			continue
		case strings.HasPrefix(line, "systemctl start puppetserver"):
			_, alt, ok := strings.Cut(line, "# or, without systemd: ")
			require.True(t, ok, "the systemctl line offers no start without systemd: %q", line)
			require.Equal(t, "puppetserver foreground &", strings.TrimSpace(alt))
			out = append(out, "puppetserver foreground >/var/log/puppetserver/foreground.log 2>&1 &", waitForServer)
			started = true
			continue
		}
		out = append(out, line)
	}
	require.True(t, installed && started, "the block installs and starts the server:\n%s", block)
	return strings.Join(out, "\n")
}

// waitForServer waits until the server answers its status, or fails
// when its JVM has ended.
const waitForServer = `for i in $(seq 900); do
  curl -sfk https://127.0.0.1:8140/status/v1/simple >/dev/null 2>&1 && break
  kill -0 $! 2>/dev/null || { echo "QS: the server ended"; tail -50 /var/log/puppetserver/foreground.log; exit 1; }
  sleep 1
done
echo "QS: the server answered after $i s"`

// agentRun runs the section's agent block in the background until its
// request is on the server, signs it with the section's signing block,
// and reports the agent's exit code; the block again afterwards is a
// run with a certificate.
func agentRun(agent, sign string) string {
	return fmt.Sprintf(`( %s ) >/srv/agent.out 2>&1 &
pid=$!
for i in $(seq 120); do [ -e /etc/puppet/puppetserver/ca/requests/pippet-test.pem ] && break; sleep 1; done
%s
rc=0; wait $pid || rc=$?
echo "QS: first run exit $rc"
cat /srv/agent.out
`, agent, sign)
}

// inNamespaces runs script in the fresh host and returns its output.
func inNamespaces(t *testing.T, script string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the quick start runs as root (the server's packages write as root)")
	}
	for _, c := range []string{"unshare", "ip", "curl", "puppetserver", "puppet"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", c)
		}
	}
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "puppetserver").Output(); err != nil || !strings.Contains(string(out), "ok installed") {
		t.Skip("Debian's puppetserver package is not installed (.ci/run installs it)")
	}
	if out, err := exec.Command("unshare", "-m", "-n", "-p", "-f", "--mount-proc", "true").CombinedOutput(); err != nil {
		t.Skipf("this machine gives no private mount and network namespaces: %v %s", err, out)
	}
	dir := t.TempDir()
	bin, err := testutil.BuildReceiver(dir)
	require.NoError(t, err)
	root := filepath.Join(dir, "host")
	for _, d := range []string{"etc/code", "etc/puppetserver", "libpuppet/ssl", "libpserver", "logpserver", "cache", "logpuppet", "srv", "bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	// What the packages install: puppet.conf and hiera.yaml (puppet-agent),
	// the server's configuration and its gem home (puppetserver), with
	// their owners and modes; nothing a run made (no CA, no ssl, no code).
	cp := func(args ...string) {
		out, err := exec.Command("cp", append([]string{"-a"}, args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	cp("/etc/puppet/puppet.conf", "/etc/puppet/hiera.yaml", filepath.Join(root, "etc"))
	cp("/etc/puppet/puppetserver/conf.d", "/etc/puppet/puppetserver/services.d", "/etc/puppet/puppetserver/logback.xml",
		"/etc/puppet/puppetserver/request-logging.xml", filepath.Join(root, "etc/puppetserver"))
	if _, err := os.Stat("/var/lib/puppetserver/jruby-gems"); err == nil {
		cp("/var/lib/puppetserver/jruby-gems", filepath.Join(root, "libpserver"))
	}
	cp(bin, filepath.Join(root, "bin", "receiver"))
	for _, d := range []string{"etc/puppetserver", "libpuppet", "libpuppet/ssl", "libpserver", "logpserver", "cache"} {
		out, err := exec.Command("chown", "puppet:puppet", filepath.Join(root, d)).CombinedOutput()
		require.NoError(t, err, string(out))
		require.NoError(t, os.Chmod(filepath.Join(root, d), 0o750))
	}
	require.NoError(t, os.Chmod(filepath.Join(root, "cache"), 0o751))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script.sh"), []byte("set -e\n"+script), 0o644))

	// The server's name must reach it (below). Then each directory
	// replaced, /tmp last (the test's own files are under it), the script
	// read before.
	setup := fmt.Sprintf(`set -e
R=%[1]q
ip link set lo up
# The name the server's certificate will carry resolves as Debian's
# installer makes the host's name resolve (127.0.1.1 in /etc/hosts) where
# this machine's resolver does not know it; its addresses are on the
# namespace's loopback.
name=$(puppet config print certname 2>/dev/null)
if ! getent hosts "$name" >/dev/null; then
  { cat /etc/hosts; echo "127.0.1.1 $name"; } > "$R/hosts"
  mount --bind "$R/hosts" /etc/hosts
fi
for a in $(getent ahostsv4 "$name" | awk '{print $1}' | sort -u); do
  case $a in 127.*) ;; *) ip addr add "$a/32" dev lo ;; esac
done
mount --bind "$R/etc" /etc/puppet
mount --bind "$R/libpuppet" /var/lib/puppet
mount --bind "$R/libpserver" /var/lib/puppetserver
mount --bind "$R/logpserver" /var/log/puppetserver
mount --bind "$R/cache" /var/cache/puppet
mount --bind "$R/logpuppet" /var/log/puppet
mount --bind "$R/srv" /srv
mount --bind "$R/bin" /usr/local/bin
mount -t tmpfs tmpfs /run
exec 3<%[2]q
mount -t tmpfs tmpfs /tmp
export PATH=/usr/local/bin:$PATH
exec bash /dev/fd/3
`, root, filepath.Join(dir, "script.sh"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// A PID namespace too: the server's JVM ends with the script.
	cmd := exec.CommandContext(ctx, "unshare", "-m", "-n", "-p", "-f", "--mount-proc", "--propagation", "private", "bash", "-c", setup)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	require.NoError(t, err, "%s", out.String())
	return out.String()
}

// TestQuickStartFromNothing runs the section's three blocks as written:
// the server set up and started for the first time (it makes its CA),
// the agent's request, its signing, the first run (exit 2: the catalog's
// file written, the report stored by the server), the second (exit 0).
func TestQuickStartFromNothing(t *testing.T) {
	blocks := docBlocks(t)
	server, agent, sign := serverBlock(t, blocks[0]), strings.TrimSpace(blocks[1]), strings.TrimSpace(blocks[2])
	out := inNamespaces(t, server+"\n"+agentRun(agent, sign)+`
echo "QS: hello: $(cat /tmp/hello-pippet)"
echo "QS: reports: $(ls /var/lib/puppetserver/reports/pippet-test | wc -l)"
rc=0; ( `+agent+` ) >/srv/agent2.out 2>&1 || rc=$?
echo "QS: second run exit $rc"
cat /srv/agent2.out
`)
	assert.Contains(t, out, "QS: the server answered after", out)
	assert.Contains(t, out, "Info: Creating a new SSL certificate request for pippet-test", out)
	assert.Contains(t, out, "Notice: Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (pippet-test).")
	assert.Regexp(t, `Info: Downloaded certificate for pippet-test from https://[^:]+:8140/puppet-ca/v1`, out)
	assert.Contains(t, out, "QS: first run exit 2\n", "the first run changes the node")
	assert.Contains(t, out, "Notice: /Stage[main]/Main/File[/tmp/hello-pippet]/ensure: defined content as '{sha256}")
	assert.Contains(t, out, "QS: hello: hello\n")
	assert.Contains(t, out, "QS: reports: 1\n", "the server stored the report")
	assert.Contains(t, out, "QS: second run exit 0\n", "nothing to change")
	assert.NotContains(t, out, "Error:", "no error on the way")
}

// TestQuickStartEnvironmentMissing shows the failure the section warns
// of: a server started before /etc/puppet/code/environments/production
// existed, with the environments directory there, answers the report
// with Puppet Server's error 500 (it tries to create the directory as
// the puppet user), which the agent prints as Puppet's agent does; after
// the section's mkdir the next run's report is stored.
func TestQuickStartEnvironmentMissing(t *testing.T) {
	blocks := docBlocks(t)
	agent, sign := strings.TrimSpace(blocks[1]), strings.TrimSpace(blocks[2])
	var setServer, mkProduction string
	for _, line := range strings.Split(blocks[0], "\n") {
		switch {
		case strings.HasPrefix(line, "puppet config set server"):
			setServer = line
		case strings.HasPrefix(line, "mkdir -p /etc/puppet/code/environments/production"):
			mkProduction = line
		}
	}
	require.NotEmpty(t, setServer, "the block sets server")
	require.NotEmpty(t, mkProduction, "the block makes the production environment")
	out := inNamespaces(t, setServer+"\npuppetserver foreground >/var/log/puppetserver/foreground.log 2>&1 &\n"+waitForServer+`
mkdir -p /etc/puppet/code/environments
`+agentRun(agent, sign)+mkProduction+`
rc=0; ( `+agent+` ) >/srv/agent2.out 2>&1 || rc=$?
echo "QS: second run exit $rc"
cat /srv/agent2.out
echo "QS: reports: $(ls /var/lib/puppetserver/reports/pippet-test 2>/dev/null | wc -l)"
`)
	first, second, ok := strings.Cut(out, "QS: second run exit")
	require.True(t, ok, out)
	assert.Contains(t, first, "Error: Could not send report: Error 500 on SERVER: Server Error: Got 1 failure(s) while initializing: "+
		"File[/etc/puppet/code/environments/production]: change from 'absent' to 'directory' failed: "+
		"Could not set 'directory' on ensure: Permission denied - /etc/puppet/code/environments/production\n", out)
	assert.NotContains(t, second, "Error:", "after the mkdir the report is stored")
	assert.Contains(t, second, "QS: reports: 1\n", out)
}
