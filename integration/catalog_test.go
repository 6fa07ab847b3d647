package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The real catalogs of ../../shared/catalogs, apache and those compiled
// from Debian's Forge modules (forgeCatalogs; all kept in
// testdata/catalogs with Puppet's recorded outcomes), applied by `receiver
// apply` on this machine as Puppet applied them: run 1 from the state
// Puppet started from (the test puts the machine there where it can), run
// 2 right after. They install packages (postfix, rsync), change /etc
// (sshd_config, aliases, sysctl.conf) and start services: they run as root
// only, on a machine that may be changed (CI's, or a developer's scratch
// VM), with PIPPET_CHANGE_MACHINE=1 (make test-catalogs; .ci/run runs it
// after make test, alone, so that its apt runs and account changes meet
// no other test's).

// puppetOutcome is one recorded run: per resource, Puppet's flags and
// events.
type puppetOutcome struct {
	Status    string `json:"status"`
	Resources map[string]struct {
		Changed         bool `json:"changed"`
		Failed          bool `json:"failed"`
		Skipped         bool `json:"skipped"`
		FailedToRestart bool `json:"failed_to_restart"`
		// ContainmentPath is recorded for the catalogs added with
		// generated resources (apache): held to ours when given.
		ContainmentPath []string `json:"containment_path"`
		Events          []struct {
			Property *string `json:"property"`
			Message  string  `json:"message"`
			Status   string  `json:"status"`
		} `json:"events"`
	} `json:"resources"`
}

// ourStatus is a resource status of our report (the YAML).
type ourStatus struct {
	Changed         bool     `yaml:"changed"`
	Failed          bool     `yaml:"failed"`
	Skipped         bool     `yaml:"skipped"`
	FailedToRestart bool     `yaml:"failed_to_restart"`
	ContainmentPath []string `yaml:"containment_path"`
	Events          []struct {
		Property *string `yaml:"property"`
		Message  string  `yaml:"message"`
		Status   string  `yaml:"status"`
	} `yaml:"events"`
}

const catalogsDir = "testdata/catalogs"

func mayChangeMachine(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("applies real catalogs to the machine: root only")
	}
	if os.Getenv("PIPPET_CHANGE_MACHINE") != "1" {
		t.Skip("changes /etc, packages and services: make test-catalogs (PIPPET_CHANGE_MACHINE=1), which .ci/run runs after make test")
	}
	needPuppet(t)
	for _, m := range []string{"ssh", "rsync", "concat", "postfix", "systemd", "sysctl", "stdlib", "apache"} {
		if _, err := os.Stat(filepath.Join("/usr/share/puppet/modules", m)); err != nil {
			t.Skipf("Puppet module %s not installed (.ci/run installs puppet-module-*)", m)
		}
	}
}

func sh(t *testing.T, script string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("%s: %v\n%s", script, err, out)
	}
	return err
}

// resets put the machine where Puppet's run 1 started; false when it
// cannot (run 1 is then held to Puppet's failures only).
var resets = map[string]func(t *testing.T) bool{
	"concat": func(t *testing.T) bool {
		return sh(t, "rm -f /etc/pippet-motd") == nil
	},
	"sysctl": func(t *testing.T) bool {
		return sh(t, "sed -i '/^vm.swappiness/d' /etc/sysctl.conf && sysctl -q -w vm.swappiness=60") == nil
	},
	"systemd": func(t *testing.T) bool {
		return sh(t, "rm -rf /etc/tmpfiles.d/pippet.conf /etc/systemd/system/cron.service.d") == nil
	},
	"ssh": func(t *testing.T) bool {
		return sh(t, `set -e
dpkg -s openssh-server >/dev/null 2>&1 || apt-get install -y -qq openssh-server >/dev/null
install -m 0644 /usr/share/openssh/sshd_config /etc/ssh/sshd_config
printf 'Host *\n    SendEnv LANG LC_*\n    HashKnownHosts yes\n    GSSAPIAuthentication yes\n' > /etc/ssh/ssh_config
rm -f /etc/ssh/ssh_known_hosts
service ssh stop >/dev/null 2>&1 || true`) == nil
	},
	"apache": func(t *testing.T) bool {
		// Puppet's run started without Apache (its config directory held
		// only javascript-common's conf), so the purged directories and
		// the recursion find what the package installs.
		return sh(t, `set -e
service apache2 stop >/dev/null 2>&1 || true
apt-get purge -y -qq -o DPkg::Lock::Timeout=300 apache2 apache2-bin apache2-data apache2-utils mime-support >/dev/null
find /etc/apache2 -mindepth 1 ! -path /etc/apache2/conf-available ! -path /etc/apache2/conf-available/javascript-common.conf -exec rm -rf {} + 2>/dev/null || true
rm -rf /var/www/pippet`) == nil
	},
	"rsync_server": func(t *testing.T) bool {
		return sh(t, `set -e
service rsync stop >/dev/null 2>&1 || true
apt-get purge -y -qq -o DPkg::Lock::Timeout=300 rsync >/dev/null
rm -rf /etc/rsyncd.conf /etc/default/rsync /srv/pippet-repo`) == nil
	},
	"postfix": func(t *testing.T) bool {
		return sh(t, `set -e
service postfix stop >/dev/null 2>&1 || true
apt-get purge -y -qq -o DPkg::Lock::Timeout=300 postfix >/dev/null
apt-get install -y -qq -o DPkg::Lock::Timeout=300 exim4-daemon-light bsd-mailx >/dev/null
sed -i '/^root:/d' /etc/aliases
printf 'vm\n' > /etc/mailname`) == nil
	},
}

// applyCatalog runs receiver apply on the named real catalog and reads
// its report.
func applyCatalog(t *testing.T, name string, args ...string) (map[string]ourStatus, string) {
	t.Helper()
	return applyHand(t, filepath.Join(catalogsDir, "catalogs", name+".json"), args...)
}

func readOutcome(t *testing.T, name, run string) puppetOutcome {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(catalogsDir, "puppet", name+"."+run+".json"))
	require.NoError(t, err)
	var o puppetOutcome
	require.NoError(t, json.Unmarshal(data, &o))
	return o
}

// departures are the documented differences (docs/catalog.md): none so
// far for these catalogs.
var departures = map[string]bool{}

// compareRun holds our statuses to Puppet's: the same resources, and for
// each the same flags and as many events (strict), or the same failures
// (loose).
func compareRun(t *testing.T, name, run string, ours map[string]ourStatus, strict bool) {
	t.Helper()
	want := readOutcome(t, name, run)
	for ref := range ours {
		_, ok := want.Resources[ref]
		assert.True(t, ok, "%s %s: we report %s, Puppet did not", name, run, ref)
	}
	for ref, w := range want.Resources {
		if departures[name+" "+ref] {
			continue
		}
		g, ok := ours[ref]
		if !assert.True(t, ok, "%s %s: Puppet reports %s, we do not", name, run, ref) {
			continue
		}
		assert.Equal(t, w.Failed, g.Failed, "%s %s %s failed", name, run, ref)
		assert.Equal(t, w.FailedToRestart, g.FailedToRestart, "%s %s %s failed_to_restart", name, run, ref)
		if w.ContainmentPath != nil {
			assert.Equal(t, w.ContainmentPath, g.ContainmentPath, "%s %s %s containment_path", name, run, ref)
		}
		if !strict {
			continue
		}
		assert.Equal(t, w.Changed, g.Changed, "%s %s %s changed", name, run, ref)
		assert.Equal(t, w.Skipped, g.Skipped, "%s %s %s skipped", name, run, ref)
		var we, ge []string
		for _, e := range w.Events {
			we = append(we, e.Status+" "+eventText(e.Property, e.Message))
		}
		for _, e := range g.Events {
			ge = append(ge, e.Status+" "+eventText(e.Property, e.Message))
		}
		assert.Equal(t, we, ge, "%s %s %s events", name, run, ref)
	}
}

// eventText is what of an event the comparison holds: the property, and
// for a refresh its message (how many events it heard).
func eventText(prop *string, msg string) string {
	if prop == nil || *prop == "" {
		return "refresh: " + msg
	}
	return *prop
}

var changeLine = regexp.MustCompile(`^(files|services)\s+(\S+): (.*) -> (.*)$`)

// checkChanges holds the machine to what Puppet's run 1 left: the files
// the catalog manages (kind, mode, content with # HEADER: lines dropped)
// and the services (status exit code).
func checkChanges(t *testing.T, name string, managed map[string]bool) {
	t.Helper()
	f, err := os.Open(filepath.Join(catalogsDir, "puppet", name+".changes.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := changeLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var after map[string]any
		if json.Unmarshal([]byte(m[4]), &after) != nil || after == nil {
			continue
		}
		switch m[1] {
		case "files":
			ownContent, ok := managed[m[2]]
			if !ok {
				continue
			}
			fi, err := os.Lstat(m[2])
			if !assert.NoError(t, err, "%s: %s", name, m[2]) {
				continue
			}
			if mode, ok := after["mode"].(string); ok {
				assert.Equal(t, mode, fmt.Sprintf("%04o", unixMode(fi.Mode())), "%s: %s mode", name, m[2])
			}
			// A file whose content the catalog does not give (a key
			// a type generated) is held to its mode only.
			if sha, ok := after["sha"].(string); ok && ownContent {
				assert.Equal(t, sha, headerlessSHA(t, m[2])[:16], "%s: %s content", name, m[2])
			}
		case "services":
			rc, ok := after["status_rc"].(float64)
			if !ok {
				continue
			}
			err := exec.Command("service", m[2], "status").Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			assert.Equal(t, int(rc), code, "%s: service %s status", name, m[2])
		}
	}
}

// unixMode is a file's mode as chmod writes it: the permission bits and
// setuid, setgid and sticky (which os.FileMode keeps apart from Perm).
func unixMode(m os.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

func headerlessSHA(t *testing.T, p string) string {
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	var kept []byte
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("# HEADER:")) {
			kept = append(kept, l...)
		}
	}
	s := sha256.Sum256(kept)
	return hex.EncodeToString(s[:])
}

// managedPaths are the files a catalog manages: its File resources'
// paths and its concat targets, true where the catalog gives the content
// (content, source, a concat).
func managedPaths(t *testing.T, name string) map[string]bool {
	data, err := os.ReadFile(filepath.Join(catalogsDir, "catalogs", name+".json"))
	require.NoError(t, err)
	var c struct {
		Resources []struct {
			Type       string         `json:"type"`
			Title      string         `json:"title"`
			Parameters map[string]any `json:"parameters"`
		} `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(data, &c))
	out := map[string]bool{}
	for _, r := range c.Resources {
		if r.Type != "File" && r.Type != "Concat_file" {
			continue
		}
		p := r.Title
		if s, ok := r.Parameters["path"].(string); ok {
			p = s
		}
		_, content := r.Parameters["content"]
		_, source := r.Parameters["source"]
		out[strings.TrimSuffix(p, "/")] = content || source || r.Type == "Concat_file"
	}
	return out
}

// withoutPuppet are the real catalogs whose every type is native: they
// run with --fallback none, so no Puppet process is started (an unknown
// type would fail its resource): concat_file/concat_fragment, anchor,
// file_line and ini_setting are native (issue 25), and so are postfix's
// augeas and mailalias. sysctl (its sysctl_runtime type), openssl
// (ssl_pkey, x509_cert, x509_request) and posix_acl need Puppet.
var withoutPuppet = map[string]bool{"concat": true, "ssh": true, "rsync_server": true, "systemd": true, "postfix": true, "apache": true,
	"inifile": true, "kmod": true, "ssh_keygen": true, "logrotate": true, "memcached": true, "xinetd": true,
	"haproxy": true, "redis": true, "chrony": true}

// forgeCatalogs are the catalogs compiled on this machine from Debian's
// Forge module packages for issue 35 (testdata/catalogs/README.md), with
// the module directory each needs. Each one's reset is
// testdata/catalogs/resets/NAME.sh, the script the recording (./record)
// ran before Puppet's run 1.
var forgeCatalogs = []struct{ name, module string }{
	{"inifile", "inifile"}, {"openssl", "openssl"}, {"kmod", "kmod"}, {"ssh_keygen", "ssh_keygen"},
	{"logrotate", "logrotate"}, {"memcached", "memcached"}, {"xinetd", "xinetd"},
	{"haproxy", "haproxy"}, {"chrony", "chrony"}, {"posix_acl", "posix_acl"}, {"redis", "redis"},
}

// resetScript runs testdata/catalogs/resets/NAME.sh.
func resetScript(t *testing.T, name string) bool {
	t.Helper()
	return sh(t, "sh "+filepath.Join(catalogsDir, "resets", name+".sh")) == nil
}

func TestRealCatalogs(t *testing.T) {
	mayChangeMachine(t)
	names := []string{"concat", "sysctl", "systemd", "ssh", "rsync_server", "postfix", "apache"}
	modules := map[string]string{}
	for _, f := range forgeCatalogs {
		names = append(names, f.name)
		modules[f.name] = f.module
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			// Resets and runs install and remove packages.
			testutil.MachineLock(t, "dpkg")
			if m := modules[name]; m != "" {
				if _, err := os.Stat(filepath.Join("/usr/share/puppet/modules", m)); err != nil {
					t.Skipf("Puppet module %s not installed (.ci/run installs puppet-module-*)", m)
				}
			}
			reset := resets[name]
			if reset == nil {
				reset = func(t *testing.T) bool { return resetScript(t, name) }
			}
			strict := reset(t)
			if !strict {
				t.Logf("%s: the machine could not be put in Puppet's starting state: run 1 is held to Puppet's failures only", name)
			}
			var args []string
			if withoutPuppet[name] {
				args = []string{"--fallback", "none"}
			}
			run1, log1 := applyCatalog(t, name, args...)
			compareRun(t, name, "run1", run1, strict)
			checkChanges(t, name, managedPaths(t, name))
			run2, log2 := applyCatalog(t, name, args...)
			compareRun(t, name, "run2", run2, true)
			if t.Failed() {
				t.Logf("run 1:\n%s\nrun 2:\n%s", log1, log2)
			}
		})
	}
}

// handCatalog writes a catalog of resources (type, title, params) in
// Class[main], as Puppet's JSON.
func handCatalog(t *testing.T, rs ...[3]any) string {
	t.Helper()
	resources := []map[string]any{
		{"type": "Stage", "title": "main", "tags": []string{"stage"}, "exported": false, "kind": "compilable_type"},
		{"type": "Class", "title": "main", "tags": []string{"class"}, "exported": false, "kind": "class"},
	}
	edges := []map[string]string{{"source": "Stage[main]", "target": "Class[main]"}}
	for _, r := range rs {
		typ, title := r[0].(string), r[1].(string)
		kind := "compilable_type"
		if strings.Contains(typ, "::") {
			kind = "defined_type"
		}
		resources = append(resources, map[string]any{"type": typ, "title": title, "tags": []string{strings.ToLower(typ)},
			"exported": false, "kind": kind, "parameters": r[2]})
		edges = append(edges, map[string]string{"source": "Class[main]", "target": typ + "[" + title + "]"})
	}
	data, err := json.Marshal(map[string]any{"name": "test", "version": 1, "environment": "production", "resources": resources, "edges": edges})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "catalog.json")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// applyHand runs receiver apply on the catalog file cat, with args, as
// root's PATH has it, and reads its report; the run must exit 0.
func applyHand(t *testing.T, cat string, args ...string) (map[string]ourStatus, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	argv := append([]string{"apply", "--state-dir", t.TempDir(), "--lastrunreport", report, "--modulepath", "/usr/share/puppet/modules"}, args...)
	if cat != "-" {
		abs, err := filepath.Abs(cat)
		require.NoError(t, err)
		cat = abs
	}
	cmd := exec.CommandContext(ctx, receiverBin, append(argv, cat)...)
	// Not in the source tree: some modules' commands write to their
	// working directory (openssl's .rnd).
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var doc struct {
		Statuses map[string]ourStatus `yaml:"resource_statuses"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	return doc.Statuses, stderr.String()
}

// A delegated concat_file goes to Puppet with its fragments as one
// catalog: the target gets every fragment, the File Puppet generates is
// reported, and its change refreshes what the concat notifies.
func TestCatalogDelegatedConcat(t *testing.T) {
	needPuppet(t)
	if _, err := os.Stat("/usr/share/puppet/modules/concat"); err != nil {
		t.Skip("puppet-module-puppetlabs-concat not installed")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	log := filepath.Join(dir, "log")
	cat := handCatalog(t,
		[3]any{"Concat_fragment", "b", map[string]any{"target": target, "content": "second\n", "order": "20"}},
		[3]any{"Concat_file", target, map[string]any{"path": target, "mode": "0640", "notify": "Exec[refreshed]"}},
		[3]any{"Concat_fragment", "a", map[string]any{"target": target, "content": "first\n", "order": "10"}},
		[3]any{"Exec", "refreshed", map[string]any{"command": "/bin/sh -c 'echo ran >> " + log + "'", "refreshonly": true}},
	)
	force := []string{"--delegate", "concat_file,concat_fragment"}
	st, stderr := applyHand(t, cat, force...)
	got, err := os.ReadFile(target)
	require.NoError(t, err, stderr)
	assert.Equal(t, "first\nsecond\n", string(got))
	gen, ok := st["File["+target+"]"]
	require.True(t, ok, "the generated File is reported: %v", st)
	assert.True(t, gen.Changed)
	assert.False(t, st["Concat_file["+target+"]"].Changed)
	assert.True(t, st["Exec[refreshed]"].Changed)
	data, _ := os.ReadFile(log)
	assert.Equal(t, "ran\n", string(data))
	assert.Contains(t, stderr, "/Stage[main]/Main/File["+target+"]/ensure: defined content as")

	st, _ = applyHand(t, cat, force...)
	for ref, s := range st {
		assert.False(t, s.Changed, "second run: %s changed", ref)
		assert.False(t, s.Failed, "second run: %s failed", ref)
	}
	data, _ = os.ReadFile(log)
	assert.Equal(t, "ran\n", string(data), "nothing refreshed on the second run")
}

// resources { purge => true } goes to Puppet with the run's resources of
// its type: Puppet removes what the catalog does not manage, and only that.
func TestCatalogDelegatedResourcesPurge(t *testing.T) {
	mayChangeMachine(t)
	aliases, err := os.ReadFile("/etc/aliases")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.WriteFile("/etc/aliases", aliases, 0o644) })
	require.NoError(t, os.WriteFile("/etc/aliases", append(append([]byte{}, aliases...), []byte("pippetstray: root\npippetkept: root\n")...), 0o644))
	var rs [][3]any
	rs = append(rs, [3]any{"Resources", "mailalias", map[string]any{"purge": true}})
	for _, line := range strings.Split(string(aliases), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(name) == "" {
			continue
		}
		rs = append(rs, [3]any{"Mailalias", strings.TrimSpace(name), map[string]any{"recipient": strings.TrimSpace(rest)}})
	}
	rs = append(rs, [3]any{"Mailalias", "pippetkept", map[string]any{"recipient": "root"}})
	st, stderr := applyHand(t, handCatalog(t, rs...))
	after, err := os.ReadFile("/etc/aliases")
	require.NoError(t, err)
	assert.NotContains(t, string(after), "pippetstray", stderr)
	assert.Contains(t, string(after), "pippetkept")
	removed, ok := st["Mailalias[pippetstray]"]
	require.True(t, ok, "the purged alias is reported: %v", st)
	assert.True(t, removed.Changed)
}

// receiver apply's command line: the catalog from stdin, detailed exit
// codes, the run summary, noop, tags, a cycle refused.
func TestApplyCommandLine(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	cat := handCatalog(t,
		[3]any{"File", f, map[string]any{"ensure": "file", "content": "x\n", "tag": "web"}},
		[3]any{"Exec", "after", map[string]any{"command": "/bin/true", "require": "File[" + f + "]", "refreshonly": true, "subscribe": "File[" + f + "]"}},
	)
	data, err := os.ReadFile(cat)
	require.NoError(t, err)
	apply := func(stdin []byte, args ...string) (int, string) {
		cmd := exec.Command(receiverBin, append([]string{"apply", "--state-dir", dir}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stderr.String()
		}
		require.NoError(t, err, stderr.String())
		return 0, stderr.String()
	}
	code, out := apply(data, "--noop", "--detailed-exitcodes", "-")
	assert.Equal(t, 0, code, out)
	assert.NoFileExists(t, f)
	assert.Contains(t, out, "current_value 'absent', should be 'file' (noop)")

	code, out = apply(data, "--skip_tags", "web", "--detailed-exitcodes", "-")
	assert.Equal(t, 0, code, out)
	assert.NoFileExists(t, f)

	summary := filepath.Join(dir, "summary.yaml")
	code, out = apply(data, "--detailed-exitcodes", "--lastrunfile", summary, "-")
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "/Stage[main]/Main/Exec[after]: Triggered 'refresh' from 1 event")
	var sum struct {
		Resources map[string]int `yaml:"resources"`
	}
	sdata, err := os.ReadFile(summary)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(sdata, &sum))
	assert.Equal(t, 2, sum.Resources["total"])
	assert.Equal(t, 2, sum.Resources["changed"])

	code, out = apply(data, "--detailed-exitcodes", "-")
	assert.Equal(t, 0, code, out)

	failing := handCatalog(t, [3]any{"Exec", "fails", map[string]any{"command": "/bin/false"}})
	code, _ = apply(nil, "--detailed-exitcodes", failing)
	assert.Equal(t, 4, code)

	cycle := handCatalog(t,
		[3]any{"Exec", "a", map[string]any{"command": "/bin/true", "require": "Exec[b]"}},
		[3]any{"Exec", "b", map[string]any{"command": "/bin/true", "require": "Exec[a]"}})
	code, out = apply(nil, cycle)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "Found 1 dependency cycle:")
	assert.Contains(t, out, "(Exec[a] => Exec[b] => Exec[a])")
}

// A manifest compiled anew by Puppet from Debian's module packages, then
// applied natively: the same file as the recorded catalog gives.
func TestApplyManifest(t *testing.T) {
	mayChangeMachine(t)
	require.NoError(t, sh(t, "rm -f /etc/pippet-motd"))
	st, stderr := applyHand(t, filepath.Join(catalogsDir, "manifests", "concat.pp"))
	assert.True(t, st["File[/etc/pippet-motd]"].Changed, stderr)
	assert.Equal(t, "63ff6b104b647848", headerlessSHA(t, "/etc/pippet-motd")[:16])
	st, _ = applyHand(t, filepath.Join(catalogsDir, "manifests", "concat.pp"))
	for ref, s := range st {
		assert.False(t, s.Changed, ref)
	}
}
