package puppetserver

// The agent's report against the real server: Puppet's own agent runs a
// catalog with a change, a refresh, a failure, a skip, a noop and an
// unchanged resource, and the server stores its report; the same catalog
// (Puppet's cached copy) is then applied by our walk on the same state,
// its report submitted with report.Submit, and the server's stored copy
// of ours is held to Puppet's, resource status by resource status, and
// loaded by Puppet's own Ruby as a Puppet::Transaction::Report.
//
// PIPPET_RECORD_REPORT=DIR keeps Puppet's report, summary and catalog in
// DIR (how report/testdata was recorded).

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/report"
)

const (
	areportEnv  = "pippet_report"
	areportNode = "areport-node"
)

// The node's manifest: its paths are under the fact areport_root.
const areportSite = `node default {
  include areport
}
class areport {
  $d = $facts['areport_root']
  file { $d: ensure => directory }
  file { "${d}/created": ensure => file, content => "hello\n", mode => '0640' }
  ~> exec { 'areport-refreshed': command => '/bin/true', refreshonly => true }
  exec { 'areport-fails': command => '/bin/false' }
  -> file { "${d}/skipped": ensure => file }
  file { "${d}/nooped": ensure => file, noop => true }
  notify { 'areport-hi': message => 'hello world' }
  file { "${d}/unchanged": ensure => absent }
}
`

func init() {
	fixtures = append(fixtures, func(s *server) error {
		return write(filepath.Join(s.dir, "code", "environments", areportEnv, "manifests", "site.pp"), areportSite)
	})
}

// areportCert gives the node a certificate signed through the running
// CA's API, in an ssldir of its own.
func areportCert(t *testing.T, s *server, dir string) string {
	t.Helper()
	ssl := filepath.Join(s.dir, "puppet", "ssl")
	if _, err := os.Stat(filepath.Join(ssl, "certs", areportNode+".pem")); err != nil {
		require.NoError(t, ca(s.confFile, "generate", "--certname", areportNode))
	}
	ssldir := filepath.Join(dir, "ssl")
	for src, dst := range map[string]string{
		"certs/ca.pem": "certs/ca.pem", "crl.pem": "crl.pem",
		"certs/" + areportNode + ".pem":        "certs/" + areportNode + ".pem",
		"private_keys/" + areportNode + ".pem": "private_keys/" + areportNode + ".pem",
	} {
		require.NoError(t, copyFile(filepath.Join(ssl, src), filepath.Join(ssldir, dst), 0o600))
	}
	return ssldir
}

// areportClient is the node's TLS client.
func areportClient(t *testing.T, ssldir string) *http.Client {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(ssldir, "certs", areportNode+".pem"),
		filepath.Join(ssldir, "private_keys", areportNode+".pem"))
	require.NoError(t, err)
	caPEM, err := os.ReadFile(filepath.Join(ssldir, "certs", "ca.pem"))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
}

// storedReports returns the server's stored reports of the node.
func storedReports(t *testing.T, s *server) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(s.dir, "var", "reports", areportNode, "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[f] = b
	}
	return out
}

// storedWith waits for the stored report holding the transaction uuid.
func storedWith(t *testing.T, s *server, uuid string) []byte {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, b := range storedReports(t, s) {
			if bytes.Contains(b, []byte("transaction_uuid: "+uuid)) {
				return b
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server stored no report with transaction_uuid %s", uuid)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rubyMap reads a YAML document with Ruby's tags as plain data.
func rubyMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal(b, &n))
	var strip func(*yaml.Node)
	strip = func(n *yaml.Node) {
		if strings.HasPrefix(n.Tag, "!ruby/") {
			n.Tag = ""
		}
		for _, c := range n.Content {
			strip(c)
		}
	}
	strip(&n)
	var m map[string]any
	require.NoError(t, n.Decode(&m))
	return m
}

func TestAgentReportStoredAsPuppets(t *testing.T) {
	s := need(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	ssldir := areportCert(t, s, dir)
	vardir := filepath.Join(dir, "var")
	confdir := filepath.Join(dir, "conf")
	require.NoError(t, write(filepath.Join(confdir, "puppet.conf"), fmt.Sprintf(`[main]
ssldir = %s
vardir = %s
rundir = %s/run
logdir = %s/log
publicdir = %s/public
certname = %s
server = localhost
serverport = %d
[agent]
environment = %s
`, ssldir, vardir, vardir, vardir, vardir, areportNode, s.port, areportEnv)))

	// Puppet's agent.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "puppet", "agent", "-t", "--confdir", confdir, "--no-pluginsync")
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"FACTER_areport_root="+root, "HOME="+dir)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "puppet agent: %v\n%s", err, out.String())
	require.Equal(t, 6, ee.ExitCode(), out.String())
	last, err := os.ReadFile(filepath.Join(vardir, "state", "last_run_report.yaml"))
	require.NoError(t, err)
	puppetUUID, _ := rubyMap(t, last)["transaction_uuid"].(string)
	require.NotEmpty(t, puppetUUID)
	theirs := storedWith(t, s, puppetUUID)
	raw, err := os.ReadFile(filepath.Join(vardir, "client_data", "catalog", areportNode+".json"))
	require.NoError(t, err)
	if rec := os.Getenv("PIPPET_RECORD_REPORT"); rec != "" {
		summary, err := os.ReadFile(filepath.Join(vardir, "public", "last_run_summary.yaml"))
		require.NoError(t, err)
		for name, b := range map[string][]byte{"puppet-stored.yaml": theirs, "puppet-last_run_report.yaml": last,
			"puppet-last_run_summary.yaml": summary, "puppet-catalog.json": raw} {
			require.NoError(t, os.WriteFile(filepath.Join(rec, name), bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(dir), []byte("/TMP")), []byte(s.dir), []byte("/SERVER")), 0o644))
		}
	}

	// Ours, from the same state, on the catalog Puppet applied.
	require.NoError(t, os.RemoveAll(root))
	cat, err := catalog.Parse(bytes.NewReader(raw))
	require.NoError(t, err)
	g, err := catalog.Build(cat, applier.Default)
	require.NoError(t, err)
	logh := catalog.NewLog(nil)
	env := &applier.Env{Options: applier.Options{StateDir: filepath.Join(dir, "state")}, Log: slog.New(logh)}
	start := time.Now()
	rep := catalog.Apply(ctx, g, engine.New(applier.Default, env).NewSession(), catalog.Options{Log: logh})
	uuid := "4f1d7a52-8c3e-4b6a-9d2f-0a1b2c3d4e5f"
	rep.TransactionUUID, rep.PuppetVersion = uuid, "7.23.0"
	rep.Meta = &report.Meta{CachedCatalogStatus: "not_used",
		Timings: map[string]time.Duration{"config_retrieval": 0, "catalog_application": rep.Duration,
			"transaction_evaluation": rep.Duration, "total": time.Since(start)}}
	body, err := rep.MarshalJSON()
	require.NoError(t, err)
	hc := areportClient(t, ssldir)
	base := fmt.Sprintf("https://localhost:%d", s.port)
	require.NoError(t, report.Submit(ctx, hc, base, areportNode, areportEnv, body, rep.Version()))
	ours := storedWith(t, s, uuid)

	// The server stored ours with Puppet's statuses.
	tm, om := rubyMap(t, theirs), rubyMap(t, ours)
	assert.Equal(t, sortedKeys(tm), sortedKeys(om), "the report's members")
	for _, k := range []string{"host", "environment", "status", "noop", "noop_pending", "transaction_completed",
		"report_format", "corrective_change", "cached_catalog_status", "catalog_uuid", "code_id", "configuration_version"} {
		assert.Equal(t, tm[k], om[k], k)
	}
	ts, os_ := tm["resource_statuses"].(map[string]any), om["resource_statuses"].(map[string]any)
	assert.Equal(t, sortedKeys(ts), sortedKeys(os_), "the resources reported")
	for ref, tv := range ts {
		ov, ok := os_[ref].(map[string]any)
		if !assert.True(t, ok, "%s: not in ours", ref) {
			continue
		}
		tsm := tv.(map[string]any)
		assert.Equal(t, sortedKeys(tsm), sortedKeys(ov), "%s: members", ref)
		for k, want := range tsm {
			switch k {
			case "time", "evaluation_time":
				assert.Equal(t, want == nil, ov[k] == nil, "%s %s set", ref, k)
			case "events":
				te, oe := want.([]any), ov[k].([]any)
				if !assert.Len(t, oe, len(te), "%s events", ref) {
					continue
				}
				for i := range te {
					tev, oev := te[i].(map[string]any), oe[i].(map[string]any)
					assert.Equal(t, sortedKeys(tev), sortedKeys(oev), "%s event %d members", ref, i)
					for ek, ew := range tev {
						if ek != "time" {
							assert.Equal(t, ew, oev[ek], "%s event %d %s", ref, i, ek)
						}
					}
				}
			default:
				assert.Equal(t, want, ov[k], "%s %s", ref, k)
			}
		}
	}
	// The metrics: the same names, and the same counts.
	tmet, omet := tm["metrics"].(map[string]any), om["metrics"].(map[string]any)
	for _, name := range []string{"resources", "changes", "events"} {
		assert.Equal(t, tmet[name], omet[name], "metric %s", name)
	}

	// Puppet's Ruby reads what the server stored as its own report.
	f := filepath.Join(dir, "ours.yaml")
	require.NoError(t, os.WriteFile(f, ours, 0o600))
	rb := exec.CommandContext(ctx, "ruby", "-e", `
require 'puppet'
r = YAML.unsafe_load(File.read(ARGV[0]))
raise "not a report: #{r.class}" unless r.is_a?(Puppet::Transaction::Report)
puts [r.status, r.resource_statuses.size, r.resource_statuses.values.count(&:failed), r.metrics["changes"]["total"]].join(" ")
`, f)
	rb.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	got, err := rb.CombinedOutput()
	require.NoError(t, err, string(got))
	assert.Equal(t, fmt.Sprintf("failed %d 1 4", len(ts)), strings.TrimSpace(string(got)))
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// The server's refusal is surfaced as Puppet words it: a report for
// another node is forbidden by auth.conf.
func TestAgentReportRefusedByServer(t *testing.T) {
	s := need(t)
	dir := t.TempDir()
	hc := areportClient(t, areportCert(t, s, dir))
	rep := &report.Report{Host: "someone-else", Environment: areportEnv, Time: time.Now(), Incomplete: true}
	rep.Meta = &report.Meta{}
	body, err := rep.MarshalJSON()
	require.NoError(t, err)
	err = report.Submit(context.Background(), hc, fmt.Sprintf("https://localhost:%d", s.port), "someone-else", areportEnv, body, rep.Version())
	var re *report.Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 403, re.Code)
	assert.Contains(t, err.Error(), "Error 403 on SERVER: ")
	assert.Contains(t, err.Error(), "Forbidden request")

	// Not JSON at all: the server says why.
	err = report.Submit(context.Background(), hc, fmt.Sprintf("https://localhost:%d", s.port), areportNode, areportEnv, []byte("{not json"), rep.Version())
	require.ErrorAs(t, err, &re)
	assert.GreaterOrEqual(t, re.Code, 400)
	t.Logf("the server's answer to a broken report: %v", err)
}
