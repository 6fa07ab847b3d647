package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/source/sourcetest"
)

// fakeServer is a Puppet Server for `receiver agent` runs in this
// process: the node, a catalog with one Notify, the report, and the
// plugins and pluginfacts mounts; fail says which requests answer 500.
type fakeServer struct {
	ca             *sourcetest.PuppetCA
	port           string
	plugins, facts string
	mu             sync.Mutex
	fail           string // "", "listing" (recursive file_metadatas), "content" (file_content)
	requests       []string
}

const fakeCatalog = `{"tags":["settings"],"name":"agent.test","version":1,"code_id":null,"catalog_uuid":"0c1f7e86-1111-4c25-9a0c-7bb3a2c1b0de","catalog_format":1,"environment":"production","resources":[{"type":"Stage","title":"main","tags":["stage"],"exported":false,"parameters":{"name":"main"}},{"type":"Class","title":"Settings","tags":["class","settings"],"exported":false},{"type":"Class","title":"main","tags":["class"],"exported":false,"parameters":{"name":"main"}},{"type":"Notify","title":"hello","tags":["notify","class"],"file":"/etc/puppet/code/site.pp","line":3,"exported":false}],"edges":[{"source":"Stage[main]","target":"Class[Settings]"},{"source":"Stage[main]","target":"Class[main]"},{"source":"Class[main]","target":"Notify[hello]"}],"classes":["settings"]}`

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{ca: sourcetest.NewPuppetCA(t, false), plugins: t.TempDir(), facts: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(f.plugins, "a.rb"), []byte("# a plugin\n"), 0o644))
	fs := sourcetest.NewFileServer(map[string]string{"plugins": f.plugins, "pluginfacts": f.facts})
	srv := f.ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		fail := f.fail
		f.mu.Unlock()
		p := r.URL.Path
		serverError := func(msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"message":"Server Error: %s","issue_kind":"RUNTIME_ERROR"}`, msg)
		}
		switch {
		case strings.HasPrefix(p, "/puppet/v3/node/"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"agent.test","environment":"production","parameters":{},"classes":[]}`)
		case strings.HasPrefix(p, "/puppet/v3/catalog/"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, fakeCatalog)
		case strings.HasPrefix(p, "/puppet/v3/report/"):
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[]`)
		case fail == "listing" && strings.HasPrefix(p, "/puppet/v3/file_metadatas/") && r.URL.Query().Get("recurse") == "true":
			serverError("the compiler broke")
		case fail == "content" && strings.HasPrefix(p, "/puppet/v3/file_content/"):
			serverError("the disk broke")
		default:
			fs.ServeHTTP(w, r)
		}
	}), "")
	f.port = srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	return f
}

func (f *fakeServer) set(fail string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail, f.requests = fail, nil
}

func (f *fakeServer) asked(prefix string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

// node is an agent's directories for the fake server.
type node struct {
	dir  string
	args []string
}

func newNode(t *testing.T, f *fakeServer) *node {
	dir := t.TempDir()
	return &node{dir: dir, args: []string{"--server", "localhost", "--serverport", f.port, "--certname", "agent.test",
		"--ssldir", f.ca.SSLDir, "--confdir", filepath.Join(dir, "etc"), "--vardir", filepath.Join(dir, "var"),
		"--publicdir", filepath.Join(dir, "var", "public"), "--rundir", filepath.Join(dir, "run"),
		"--logdir", filepath.Join(dir, "log"), "--state-dir", filepath.Join(dir, "pippet"), "--fallback", "none"}}
}

// run runs `receiver agent ARGS` in this process.
func (n *node) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := agentMain(ctx, append(append([]string(nil), n.args...), args...), &out, &errb)
	return code, out.String(), errb.String()
}

// syslogSocket listens on a unixgram socket standing in for /dev/log
// and returns the datagrams it got so far.
func syslogSocket(t *testing.T) func() []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<17)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, string(buf[:n]))
			mu.Unlock()
		}
	}()
	syslogNetwork, syslogAddr = "unixgram", path
	t.Cleanup(func() {
		syslogNetwork, syslogAddr = "", ""
		conn.Close()
		<-done
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func TestAgentLogdestFilesAndSyslog(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	received := syslogSocket(t)
	logs := filepath.Join(n.dir, "logs")
	plain, js, jsl := filepath.Join(logs, "agent.log"), filepath.Join(logs, "agent.json"), filepath.Join(logs, "agent.jsonl")
	code, out, errs := n.run(t, "--onetime", "--no-daemonize", "--detailed-exitcodes", "--syslogfacility", "local3",
		"--logdest", plain, "-l", js+","+jsl, "--logdest", "syslog")
	require.Equal(t, 2, code, "%s%s", out, errs)
	assert.Empty(t, out+errs, "no console among the destinations")

	b, err := os.ReadFile(plain)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [-+]\d{4} Puppet \(notice\): hello$`, string(b))
	assert.Regexp(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [-+]\d{4} /Stage\[main\]/Main/Notify\[hello\]/message \(notice\): defined 'message' as 'hello'$`, string(b))
	assert.Regexp(t, `(?m) Puppet \(notice\): Applied catalog in \d+\.\d\d seconds$`, string(b))
	assert.NotContains(t, string(b), "(info)", "the level is notice without --verbose")
	fi, err := os.Stat(plain)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm()&^0o022&0o640)

	// A second run appends; the .json file stays one array (Puppet never
	// writes its closing bracket).
	code, out, errs = n.run(t, "--onetime", "--no-daemonize", "-l", js)
	require.Equal(t, 0, code, "%s%s", out, errs)
	b, err = os.ReadFile(js)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "[\n{"), string(b))
	assert.Contains(t, string(b), "}\n,\n{")
	var recs []map[string]any
	require.NoError(t, json.Unmarshal(append(b, ']'), &recs), string(b))
	var resLine map[string]any
	applied := 0
	for _, r := range recs {
		if r["source"] == "/Stage[main]/Main/Notify[hello]/message" {
			resLine = r
		}
		if strings.HasPrefix(r["message"].(string), "Applied catalog in ") {
			applied++
			assert.Equal(t, []any{"notice"}, r["tags"])
			assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}[-+]\d\d:\d\d$`, r["time"])
		}
	}
	assert.Equal(t, 2, applied, "both runs' records")
	require.NotNil(t, resLine, string(b))
	assert.Equal(t, "notice", resLine["level"])
	assert.Equal(t, "defined 'message' as 'hello'", resLine["message"])
	assert.Equal(t, []any{"notice", "notify", "class"}, resLine["tags"])
	assert.Equal(t, "/etc/puppet/code/site.pp", resLine["file"])
	assert.Equal(t, float64(3), resLine["line"])

	b, err = os.ReadFile(jsl)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
	}

	pid := os.Getpid()
	msgs := received()
	assert.Contains(t, msgs, fmt.Sprintf("<157>%s puppet-agent[%d]: hello", stampOf(t, msgs, "hello"), pid), "local3 (19) notice (5)")
	assert.Contains(t, strings.Join(msgs, "\n"), fmt.Sprintf("puppet-agent[%d]: (/Stage[main]/Main/Notify[hello]/message) defined 'message' as 'hello'", pid))
	for _, m := range msgs {
		assert.Regexp(t, `^<15[5-9]>[A-Z][a-z]{2} [ 1-3]\d \d\d:\d\d:\d\d puppet-agent\[\d+\]: [^\n]+$`, m)
	}
}

// stampOf is the timestamp of the datagram ending in msg.
func stampOf(t *testing.T, msgs []string, msg string) string {
	for _, m := range msgs {
		if strings.HasSuffix(m, "]: "+msg) {
			return m[strings.Index(m, ">")+1 : strings.Index(m, ">")+16]
		}
	}
	t.Fatalf("no %q in %q", msg, msgs)
	return ""
}

func TestAgentLogsToSyslogByDefault(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	received := syslogSocket(t)
	// As Puppet: without --logdest, syslog only; the console too with
	// --verbose (--test).
	code, out, errs := n.run(t, "--onetime", "--no-daemonize")
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Empty(t, out+errs)
	assert.Contains(t, strings.Join(received(), "\n"), "<29>")
	assert.Contains(t, strings.Join(received(), "\n"), "]: Applied catalog in ")

	code, out, errs = n.run(t, "-t")
	require.Equal(t, 2, code, "%s%s", out, errs)
	assert.Contains(t, out, "Info: Using environment 'production'")
	assert.Contains(t, strings.Join(received(), "\n"), "<30>", "info lines too")

	// The daemon has no console: --verbose or --logdest console still go
	// to syslog only.
	before := len(received())
	code, out, errs = n.run(t, "--daemonized", "--onetime", "--no-daemonize", "-v", "--logdest", "console")
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Empty(t, out+errs)
	assert.Greater(t, len(received()), before)
}

func TestAgentLogdestRefused(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--logdest", "eventlog"}, "Error: Could not set logdest to eventlog: the Windows Event Log exists only on Windows"},
		{[]string{"--logdest", "logs/agent.log"}, "Error: Could not set logdest to logs/agent.log: not a destination"},
		{[]string{"--logdest", "syslog", "--syslogfacility", "bogus"}, `Error: Could not set logdest to syslog: invalid syslog facility "bogus"`},
		{[]string{"--syslogfacility", "bogus"}, `Error: Could not set logdest to syslog: invalid syslog facility "bogus"`},
	} {
		code, out, errs := n.run(t, append([]string{"-t"}, tt.args...)...)
		assert.Equal(t, 1, code, "%v", tt.args)
		assert.Empty(t, out)
		assert.Contains(t, errs, tt.want)
		assert.False(t, f.asked("POST /puppet/v3/catalog"), "no run")
	}
}

func TestAgentFingerprint(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	code, out, errs := n.run(t, "--fingerprint")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^\(SHA256\) ([0-9A-F]{2}:){31}[0-9A-F]{2}\n$`, out)
	assert.Empty(t, errs)

	// A pending request when there is no certificate; neither: Puppet's
	// words, exit 1.
	ssldir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ssldir, "certificate_requests"), 0o755))
	key := filepath.Join(ssldir, "key.pem")
	csr := filepath.Join(ssldir, "certificate_requests", "agent.test.pem")
	if o, err := exec.Command("openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=agent.test").CombinedOutput(); err != nil {
		t.Fatalf("openssl: %v: %s", err, o)
	}
	code, out, errs = n.run(t, "--fingerprint", "--ssldir", ssldir, "--digest", "sha1")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^\(SHA1\) ([0-9A-F]{2}:){19}[0-9A-F]{2}\n$`, out)
	code, out, errs = n.run(t, "--fingerprint", "--ssldir", t.TempDir())
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "Fingerprint asked but neither the certificate, nor the certificate request have been issued\n", errs)
	code, _, errs = n.run(t, "--fingerprint", "--digest", "bogus")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "Error: Failed to generate fingerprint: Unsupported digest algorithm (bogus)")

	// Puppet's own answer on the same ssldirs.
	puppet, err := exec.LookPath("puppet")
	if err != nil {
		t.Skip("puppet is not installed")
	}
	for _, c := range []struct{ ssldir, digest string }{{f.ca.SSLDir, "SHA256"}, {ssldir, "sha1"}, {ssldir, "SHA512"}} {
		conf := t.TempDir()
		cmd := exec.Command(puppet, "agent", "--fingerprint", "--certname", "agent.test", "--ssldir", c.ssldir, "--digest", c.digest,
			"--confdir", conf, "--vardir", filepath.Join(conf, "var"), "--logdir", filepath.Join(conf, "log"),
			"--rundir", filepath.Join(conf, "run"), "--codedir", filepath.Join(conf, "code"))
		cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
		want, err := cmd.Output()
		require.NoError(t, err)
		code, out, errs = n.run(t, "--fingerprint", "--ssldir", c.ssldir, "--digest", c.digest)
		require.Equal(t, 0, code, errs)
		assert.Equal(t, string(want), out, "%+v", c)
	}
}

func TestAgentHelp(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, agentMain(context.Background(), []string{"--help"}, &out, &errb))
	assert.Empty(t, errb.String())
	for _, want := range []string{"--SETTING VALUE", "puppet.conf", "--no-SETTING", "--logdest DEST, -l DEST", "syslog",
		"--fingerprint [--digest ALG]", "--test, -t", "--detailed-exitcodes", "--disable [MESSAGE]", "--waitforcert SECONDS",
		"--state-dir DIRECTORY", "--fallback MODE", "--delegate TYPES", "--puppet-between-runs stop|keep", "Exit status"} {
		assert.Contains(t, out.String(), want)
	}
	// A value other than stop or keep is refused, as a usage error.
	out.Reset()
	errb.Reset()
	assert.Equal(t, exitUsage, agentMain(context.Background(), []string{"--puppet-between-runs", "warm", "--onetime"}, &out, &errb))
	assert.Contains(t, errb.String(), `--puppet-between-runs "warm": stop or keep`)
}

func TestAgentPluginsyncFailures(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	lib := filepath.Join(n.dir, "var", "lib")

	// The server cannot list a mount: Puppet's File fails to generate its
	// children, which is logged; both mounts are tried; the run goes on.
	f.set("listing")
	code, out, errs := n.run(t, "-t")
	assert.Equal(t, 2, code, "%s%s", out, errs)
	assert.Contains(t, errs, "Error: /File["+filepath.Join(n.dir, "var", "facts.d")+"]: Failed to generate additional resources using 'eval_generate': Error 500 on SERVER: Server Error: the compiler broke\n")
	assert.Contains(t, errs, "Error: /File["+lib+"]: Failed to generate additional resources using 'eval_generate': Error 500 on SERVER: Server Error: the compiler broke\n")
	assert.Contains(t, out, "Notice: Applied catalog in")

	// A plugin that cannot be fetched fails the sync: with --test (no
	// usecacheonfailure) the run ends, exit 1, and the report is sent.
	f.set("content")
	code, out, errs = n.run(t, "-t")
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, errs, "Error: /File["+filepath.Join(lib, "a.rb")+"]/ensure: change from 'absent' to 'file' failed: ")
	assert.Contains(t, errs, "Error: Failed to apply catalog: Failed to retrieve plugin: change from 'absent' to 'file' failed: ")
	assert.NotContains(t, out, "Applied catalog")
	assert.False(t, f.asked("POST /puppet/v3/catalog"), "no catalog asked")
	assert.True(t, f.asked("PUT /puppet/v3/report/agent.test"), "the failed run's report is sent")

	// With usecacheonfailure (the default), the cached catalog runs.
	f.set("content")
	code, out, errs = n.run(t, "--onetime", "--no-daemonize", "-v", "--detailed-exitcodes")
	assert.Equal(t, 2, code, "%s%s", out, errs)
	assert.Contains(t, out, "Info: Using cached catalog from environment 'production'")
	assert.Contains(t, out, "Notice: Applied catalog in")
	assert.False(t, f.asked("POST /puppet/v3/catalog"), "the cache stands in")
	rep, err := os.ReadFile(filepath.Join(n.dir, "var", "state", "last_run_report.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(rep), "cached_catalog_status: on_failure")

	// ignore_plugin_errors: logged, and the run goes on with a new catalog.
	f.set("content")
	code, out, errs = n.run(t, "-t", "--ignore_plugin_errors")
	assert.Equal(t, 2, code, "%s%s", out, errs)
	assert.Contains(t, errs, "/ensure: change from 'absent' to 'file' failed: ")
	assert.NotContains(t, errs, "Failed to apply catalog")
	assert.True(t, f.asked("POST /puppet/v3/catalog"))
}

func TestAgentCustomFactsWithoutFacterWarn(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	require.NoError(t, os.MkdirAll(filepath.Join(f.plugins, "facter"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.plugins, "facter", "site_role.rb"), []byte("Facter.add(:site_role) { setcode { 'web' } }\n"), 0o644))
	// No Ruby on PATH (and no all-in-one agent here).
	if _, err := os.Stat("/opt/puppetlabs/puppet/bin/ruby"); err == nil {
		t.Skip("the all-in-one agent's Ruby is installed")
	}
	t.Setenv("PATH", t.TempDir())
	code, out, errs := n.run(t, "-t")
	assert.Equal(t, 2, code, "%s%s", out, errs)
	assert.Regexp(t, regexp.MustCompile(`(?m)^Warning: Facter: Could not evaluate the custom facts site_role: Ruby and Facter are not installed; the catalog is compiled without them$`), errs)
	assert.NotContains(t, errs, "Error:")
	assert.Contains(t, out, "Notice: Applied catalog in")
}

// TestMain lets the test binary stand in for the receiver when a test
// makes it re-execute itself (--daemonize starts os.Executable()).
func TestMain(m *testing.M) {
	if os.Getenv("PIPPET_TEST_AS_RECEIVER") == "1" {
		os.Exit(realMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestAgentDaemonizeLogsToItsDestinations(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	t.Setenv("PIPPET_TEST_AS_RECEIVER", "1")
	logfile := filepath.Join(n.dir, "daemon.log")
	start := time.Now()
	// As Puppet, --daemonize detaches even for one run; -v and the
	// console are the daemon's no more.
	code, out, errs := n.run(t, "--onetime", "--daemonize", "-v", "--logdest", "console,"+logfile)
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Empty(t, out+errs)
	var b []byte
	for time.Since(start) < time.Minute {
		b, _ = os.ReadFile(logfile)
		if strings.Contains(string(b), "Applied catalog in") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.Contains(t, string(b), "Puppet (info): Using environment 'production'")
	assert.Contains(t, string(b), "Puppet (notice): Applied catalog in")
	crash, err := os.ReadFile(filepath.Join(n.dir, "log", "pippet-agent.log"))
	require.NoError(t, err)
	assert.Empty(t, string(crash), "only a crash writes there")
}

// TestAgentFIFOAtLastRunSummary (issue 36 item 5): a FIFO at
// last_run_summary.yaml, which the agent reads before its run for the
// last environment, is not waited on: the run goes on, converges, and
// writes its summary in the FIFO's place (renamed over it).
func TestAgentFIFOAtLastRunSummary(t *testing.T) {
	f := newFakeServer(t)
	n := newNode(t, f)
	summary := filepath.Join(n.dir, "var", "public", "last_run_summary.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(summary), 0o755))
	require.NoError(t, syscall.Mkfifo(summary, 0o644))
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := n.run(t, "-t")
		done <- result{code, out, errs}
	}()
	select {
	case r := <-done:
		assert.Equal(t, 2, r.code, r.stderr)
		assert.Contains(t, r.stdout+r.stderr, "Notice: hello")
		fi, err := os.Lstat(summary)
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), "the summary replaced the FIFO")
	case <-time.After(60 * time.Second):
		t.Fatal("the agent waits on the FIFO at last_run_summary.yaml")
	}
}

// A module's custom fact named like a core fact: one warning naming it
// and its file, the value Facter's (the core one, without weight), and
// the run goes on.
func TestAgentCustomFactNamedLikeACoreFactWarns(t *testing.T) {
	if exec.Command("ruby", "-e", "require 'facter'").Run() != nil {
		t.Skip("Ruby cannot load Facter")
	}
	f := newFakeServer(t)
	n := newNode(t, f)
	require.NoError(t, os.MkdirAll(filepath.Join(f.plugins, "facter"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.plugins, "facter", "kernel.rb"), []byte("Facter.add(:kernel) { setcode { 'custom-kernel' } }\n"), 0o644))
	code, out, errs := n.run(t, "-t", "--fallback", "none")
	assert.Equal(t, 2, code, "%s%s", out, errs)
	file := filepath.Join(n.dir, "var", "lib", "facter", "kernel.rb")
	assert.Regexp(t, regexp.MustCompile(`(?m)^Warning: Facter: custom fact kernel \(`+regexp.QuoteMeta(file)+`\) is named like a core fact; its resolution has no weight, so the core value is kept, as Facter keeps it$`), errs)
	assert.Equal(t, 1, strings.Count(errs, "is named like a core fact"), errs)
	assert.NotContains(t, errs, "Error:")
	assert.Contains(t, out, "Notice: Applied catalog in")
}
