package puppetserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/agent/pluginsync"
	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/testutil"
)

// pippetplug is a module of the production environment that only
// pluginsync brings to an agent: a type, its provider, a custom fact and
// an external fact.
const pippetplugModule = "pippetplug"

var pippetplugFiles = map[string]string{
	"lib/puppet/type/pippetplug.rb": `Puppet::Type.newtype(:pippetplug) do
  @doc = "A type only pluginsync brings (pippet's pluginsync test)."
  newparam(:name, namevar: true)
  newproperty(:message)
end
`,
	"lib/puppet/provider/pippetplug/ruby.rb": `Puppet::Type.type(:pippetplug).provide(:ruby) do
  def message; 'unset'; end
  def message=(v); end
end
`,
	"lib/facter/pippetplug_custom.rb": `Facter.add(:pippetplug_custom) do
  setcode { "custom on " + Facter.value(:kernel).to_s }
end
`,
	"lib/facter/pippetplug_gone.rb": `Facter.add(:pippetplug_gone) { setcode { 'soon gone' } }
`,
	"facts.d/pippetplug.txt": "pippetplug_external=from facts.d\n",
}

func init() {
	fixtures = append(fixtures, func(s *server) error {
		dir := filepath.Join(s.dir, "code", "environments", "production", "modules", pippetplugModule)
		for name, data := range pippetplugFiles {
			if err := write(filepath.Join(dir, name), data); err != nil {
				return err
			}
		}
		return nil
	})
}

// pluginsyncOptions are an agent's options against the test server.
func pluginsyncOptions(t *testing.T, s *server, vardir string, log *testutil.SyncBuffer) pluginsync.Options {
	t.Helper()
	cfg, err := ssl.Files{Dir: s.agentSSL, Certname: "agent1"}.TLSConfig()
	require.NoError(t, err)
	return pluginsync.Options{
		Client: &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}},
		Server: fmt.Sprintf("https://localhost:%d", s.port), Environment: "production",
		Vardir: vardir, Log: slog.New(puppetlog.New(log, slog.LevelInfo)), Timeout: time.Minute,
	}
}

// accessLines are the access log's lines so far.
func (s *server) accessLines(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(s.access)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// mountRequests counts the access log's requests to endpoint below a
// mount (plugins, pluginfacts).
func (s *server) mountRequests(t testing.TB, endpoint, mount string) int {
	t.Helper()
	b, err := os.ReadFile(s.access)
	require.NoError(t, err)
	re := regexp.MustCompile(`"GET /puppet/v3/` + endpoint + `/` + mount + `[/?]`)
	return len(re.FindAll(b, -1))
}

func TestPluginsyncFromPuppetServer(t *testing.T) {
	s := need(t)
	ctx := context.Background()
	vardir := filepath.Join(t.TempDir(), "cache")
	log := &testutil.SyncBuffer{}
	o := pluginsyncOptions(t, s, vardir, log)
	lib, factsd := filepath.Join(vardir, "lib"), filepath.Join(vardir, "facts.d")
	module := filepath.Join(s.dir, "code", "environments", "production", "modules", pippetplugModule)

	// First sync: everything is written, each file downloaded once.
	contentBefore := s.mountRequests(t, "file_content", "plugins") + s.mountRequests(t, "file_content", "pluginfacts")
	res, err := pluginsync.Sync(ctx, o)
	require.NoError(t, err)
	for name, data := range pippetplugFiles {
		dst := filepath.Join(lib, strings.TrimPrefix(name, "lib/"))
		if strings.HasPrefix(name, "facts.d/") {
			dst = filepath.Join(factsd, strings.TrimPrefix(name, "facts.d/"))
		}
		b, err := os.ReadFile(dst)
		require.NoError(t, err, name)
		assert.Equal(t, data, string(b), name)
		assert.Contains(t, res.Changed, dst)
	}
	first := log.Take()
	assert.True(t, strings.HasPrefix(first, "Info: Retrieving pluginfacts\n"), first)
	assert.Contains(t, first, "\nInfo: Retrieving plugin\n")
	assert.Contains(t, first, "Notice: /File["+filepath.Join(lib, "puppet/type/pippetplug.rb")+"]/ensure: defined content as '{sha256}"+
		source.SumString("sha256", pippetplugFiles["lib/puppet/type/pippetplug.rb"])+"'\n")
	n := len(res.Changed)
	contentAfter := s.settleMount(t, "file_content", contentBefore+1)
	assert.Positive(t, contentAfter-contentBefore)
	assert.LessOrEqual(t, contentAfter-contentBefore, n, "at most one download per entry")

	// Second sync: nothing changes, no file_content request.
	metaBefore := s.mountRequests(t, "file_metadatas", "plugins")
	res, err = pluginsync.Sync(ctx, o)
	require.NoError(t, err)
	assert.Empty(t, res.Changed)
	assert.Empty(t, res.Removed)
	assert.Equal(t, "Info: Retrieving pluginfacts\nInfo: Retrieving plugin\n", log.Take())
	s.settleMountAtLeast(t, "file_metadatas", "plugins", metaBefore+1)
	assert.Equal(t, contentAfter, s.mountRequests(t, "file_content", "plugins")+s.mountRequests(t, "file_content", "pluginfacts"),
		"an unchanged plugin is not downloaded again")

	// A file removed on the server is purged from the agent.
	gone := filepath.Join(module, "lib/facter/pippetplug_gone.rb")
	require.NoError(t, os.Remove(gone))
	t.Cleanup(func() { _ = write(gone, pippetplugFiles["lib/facter/pippetplug_gone.rb"]) })
	res, err = pluginsync.Sync(ctx, o)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(lib, "facter/pippetplug_gone.rb")}, res.Removed)
	assert.NoFileExists(t, filepath.Join(lib, "facter/pippetplug_gone.rb"))
	assert.Contains(t, log.Take(), "Notice: /File["+filepath.Join(lib, "facter/pippetplug_gone.rb")+"]/ensure: removed\n")

	// The synced facts are in the agent's fact set, with the values real
	// Facter gives them.
	fo := facts.Options{}
	fo.UseVardir(vardir)
	got, errs := facts.Gather(ctx, fo)
	for _, e := range errs {
		assert.NotContains(t, e.Error(), "pippetplug")
	}
	assert.Equal(t, "from facts.d", got["pippetplug_external"])
	assert.NotContains(t, got, "pippetplug_gone", "purged with its file")
	if _, err := exec.LookPath("facter"); err != nil {
		t.Skip("Facter is not installed: the custom fact's value is not compared")
	}
	out, err := exec.Command("facter", "--json", "--custom-dir", filepath.Join(lib, "facter"), "--external-dir", factsd,
		"pippetplug_custom", "pippetplug_external").Output()
	if err != nil {
		// Facter exits 1 for an error of any fact it resolved on the
		// way, such as its virtual resolver's "Permission denied ...
		// /proc/1/environ" where PID 1 is not readable (a sandbox): its
		// answer on stdout is what is compared.
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "facter did not run")
		require.NotEmpty(t, out, "facter exited %v with no answer: %s", err, ee.Stderr)
	}
	var want map[string]any
	require.NoError(t, json.Unmarshal(out, &want))
	assert.Equal(t, "custom on Linux", want["pippetplug_custom"])
	assert.Equal(t, want["pippetplug_custom"], got["pippetplug_custom"])
	assert.Equal(t, want["pippetplug_external"], got["pippetplug_external"])
}

// settleMount waits until the access log holds at least want
// file_content lines for the two plugin mounts, then a moment more.
func (s *server) settleMount(t testing.TB, endpoint string, want int) int {
	t.Helper()
	count := func() int {
		return s.mountRequests(t, endpoint, "plugins") + s.mountRequests(t, endpoint, "pluginfacts")
	}
	deadline := time.Now().Add(10 * time.Second)
	for count() < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	return count()
}

func (s *server) settleMountAtLeast(t testing.TB, endpoint, mount string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.mountRequests(t, endpoint, mount) < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
}

// TestPluginsyncAsPuppetDoes syncs the same server into two vardirs,
// with `puppet plugin download` (Puppet's agent's own pluginsync) and
// with pippet's: the same entries with the same kinds, modes and
// contents, and the same notices.
func TestPluginsyncAsPuppetDoes(t *testing.T) {
	s := need(t)
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("Puppet is not installed")
	}
	root := t.TempDir()
	theirs, ours := filepath.Join(root, "puppet-vardir"), filepath.Join(root, "pippet-vardir")
	require.NoError(t, os.MkdirAll(theirs, 0o750))
	before := len(s.accessLines(t))
	cmd := exec.Command("puppet", "plugin", "download", "--confdir", filepath.Join(root, "conf"), "--vardir", theirs,
		"--ssldir", s.agentSSL, "--certname", "agent1", "--server", "localhost", "--serverport", fmt.Sprint(s.port),
		"--environment", "production", "--color", "false")
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	time.Sleep(300 * time.Millisecond) // the access log's line follows the answer
	theirsReqs := s.accessLines(t)
	log := &testutil.SyncBuffer{}
	_, err = pluginsync.Sync(context.Background(), pluginsyncOptions(t, s, ours, log))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	oursReqs := s.accessLines(t)[len(theirsReqs):]
	// The same requests, in the same order: one listing per mount, whose
	// root entry describes the mount (no file_metadata of its own).
	endpoints := func(lines []string) []string {
		var l []string
		re := regexp.MustCompile(`"GET (/puppet/v3/file_metadatas?/[^?" ]*)\?[^"]*recurse=true`)
		for _, line := range lines {
			if m := re.FindStringSubmatch(line); m != nil {
				l = append(l, m[1])
			} else if strings.Contains(line, "/file_metadata/") {
				l = append(l, "file_metadata: "+line)
			}
		}
		return l
	}
	assert.Equal(t, []string{"/puppet/v3/file_metadatas/pluginfacts", "/puppet/v3/file_metadatas/plugins"}, endpoints(theirsReqs[before:]))
	assert.Equal(t, []string{"/puppet/v3/file_metadatas/pluginfacts", "/puppet/v3/file_metadatas/plugins"}, endpoints(oursReqs))

	tree := func(dir string) map[string]string {
		m := map[string]string{}
		for _, sub := range []string{"lib", "facts.d"} {
			base := filepath.Join(dir, sub)
			require.NoError(t, filepath.Walk(base, func(p string, fi os.FileInfo, err error) error {
				require.NoError(t, err)
				rel, _ := filepath.Rel(dir, p)
				desc := fmt.Sprintf("%s %04o", fi.Mode().Type(), fi.Mode().Perm())
				if fi.Mode().IsRegular() {
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					desc += " " + source.SumString("sha256", string(b))
				}
				m[rel] = desc
				return nil
			}))
		}
		return m
	}
	assert.Equal(t, tree(theirs), tree(ours))

	notices := func(text, vardir string) []string {
		var l []string
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "Notice: /File[") {
				l = append(l, strings.ReplaceAll(line, vardir, "VARDIR"))
			}
		}
		sort.Strings(l)
		return l
	}
	want := notices(string(out), theirs)
	assert.NotEmpty(t, want)
	assert.Equal(t, want, notices(log.Take(), ours))
}
