package report_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/agent/report"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/protocol"
)

// testdata holds what Puppet 7.23's agent made of one catalog against
// the real Puppet Server (integration/puppetserver's
// TestAgentReportStoredAsPuppets, run with PIPPET_RECORD_REPORT): the
// catalog, the report the server's store processor kept, the agent's
// last_run_report.yaml and last_run_summary.yaml. Its paths were /TMP
// (the node's temporary directory) and /SERVER (the server's).

// puppetRun applies the recorded catalog to a temporary root as Puppet's
// agent applied it, and returns our report, the Meta of a run with
// Puppet's phases, and the directory standing for /TMP.
func puppetRun(t *testing.T) (*catalog.Report, report.Meta, string) {
	t.Helper()
	tmp := t.TempDir()
	raw, err := os.ReadFile("testdata/puppet-catalog.json")
	require.NoError(t, err)
	raw = bytes.ReplaceAll(raw, []byte("/TMP"), []byte(tmp))
	cat, err := catalog.Parse(bytes.NewReader(raw))
	require.NoError(t, err)
	g, err := catalog.Build(cat, applier.Default)
	require.NoError(t, err)
	logh := catalog.NewLog(nil)
	env := &applier.Env{Options: applier.Options{StateDir: filepath.Join(tmp, "state")}, Log: slog.New(logh)}
	rep := catalog.Apply(context.Background(), g, engine.New(applier.Default, env).NewSession(), catalog.Options{Log: logh})
	m := report.Meta{
		TransactionUUID: "85421674-07b5-4698-bfe5-6e0f28fc1627", CachedCatalogStatus: "not_used", PuppetVersion: "7.23.0",
		Timings: map[string]time.Duration{
			"startup_time": 700 * time.Millisecond, "node_retrieval": 400 * time.Millisecond,
			"plugin_sync": 9 * time.Second, "fact_generation": 5 * time.Second, "convert_catalog": 50 * time.Millisecond,
			"config_retrieval": 420 * time.Millisecond, "transaction_evaluation": rep.Duration,
			"catalog_application": rep.Duration, "total": 16 * time.Second,
		},
	}
	return rep, m, tmp
}

// doc reads a YAML (or JSON) document into a node, Ruby's tags dropped.
func doc(t *testing.T, b []byte) *yaml.Node {
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
	return n.Content[0]
}

func keys(n *yaml.Node) []string {
	var ks []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		ks = append(ks, n.Content[i].Value)
	}
	return ks
}

func get(n *yaml.Node, k string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

func val(t *testing.T, n *yaml.Node) any {
	t.Helper()
	if n == nil {
		return "<missing>"
	}
	var v any
	require.NoError(t, n.Decode(&v))
	return v
}

func fixture(t *testing.T, name, tmp string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return bytes.ReplaceAll(b, []byte("/TMP"), []byte(tmp))
}

// The JSON the server gets holds what Puppet's agent sent for the same
// catalog on the same state: the same members in the same order, and the
// same values but for the times.
func TestJSONAsPuppetsReport(t *testing.T) {
	rep, m, tmp := puppetRun(t)
	body, err := report.JSON(rep, m)
	require.NoError(t, err)
	require.True(t, json.Valid(body))
	ours, theirs := doc(t, body), doc(t, fixture(t, "puppet-stored.yaml", tmp))

	assert.Equal(t, keys(theirs), keys(ours), "the report's members, in order")
	for _, k := range []string{"host", "configuration_version", "transaction_uuid", "report_format", "puppet_version",
		"status", "transaction_completed", "noop", "noop_pending", "environment", "corrective_change",
		"catalog_uuid", "cached_catalog_status"} {
		assert.Equal(t, val(t, get(theirs, k)), val(t, get(ours, k)), k)
	}
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}[+-]\d\d:\d\d$`, get(ours, "time").Value)

	// Every resource status, member by member.
	ts, os_ := get(theirs, "resource_statuses"), get(ours, "resource_statuses")
	assert.Equal(t, keys(ts), keys(os_), "the resources, in order")
	for _, ref := range keys(ts) {
		tst, ost := get(ts, ref), get(os_, ref)
		if !assert.NotNil(t, ost, ref) {
			continue
		}
		assert.Equal(t, keys(tst), keys(ost), "%s: members", ref)
		for _, k := range keys(tst) {
			switch k {
			case "time":
				assert.Regexp(t, `\.\d{9}[+-]\d\d:\d\d$`, get(ost, k).Value, ref)
			case "evaluation_time":
				assert.Equal(t, val(t, get(tst, k)) == nil, val(t, get(ost, k)) == nil, "%s: evaluation_time set", ref)
			case "events":
				te, oe := get(tst, k).Content, get(ost, k).Content
				if !assert.Len(t, oe, len(te), "%s: events", ref) {
					continue
				}
				for i := range te {
					assert.Equal(t, keys(te[i]), keys(oe[i]), "%s: event members", ref)
					for _, ek := range keys(te[i]) {
						if ek != "time" {
							assert.Equal(t, val(t, get(te[i], ek)), val(t, get(oe[i], ek)), "%s: event %s", ref, ek)
						}
					}
				}
			default:
				assert.Equal(t, val(t, get(tst, k)), val(t, get(ost, k)), "%s: %s", ref, k)
			}
		}
	}

	// The metrics: the counts as Puppet's; the times by the same names in
	// the same order.
	tm, om := get(theirs, "metrics"), get(ours, "metrics")
	assert.Equal(t, keys(tm), keys(om))
	for _, k := range []string{"resources", "changes", "events"} {
		assert.Equal(t, val(t, get(tm, k)), val(t, get(om, k)), "metric %s", k)
	}
	names := func(metric *yaml.Node) (out []string) {
		assert.Equal(t, []string{"name", "label", "values"}, keys(metric))
		for _, v := range get(metric, "values").Content {
			out = append(out, v.Content[0].Value+"/"+v.Content[1].Value)
		}
		return out
	}
	assert.Equal(t, names(get(tm, "time")), names(get(om, "time")))

	// The log lines about resources, as Puppet's (Puppet's own lines
	// before and after the walk are the agent's to add).
	resourceLines := func(logs *yaml.Node) (out []string) {
		for _, l := range logs.Content {
			assert.Equal(t, []string{"level", "message", "source", "tags", "time", "file", "line"}, keys(l))
			src := get(l, "source").Value
			if level := get(l, "level").Value; level == "info" || !strings.HasPrefix(src, "/Stage[") {
				continue
			}
			out = append(out, fmt.Sprint(val(t, get(l, "level")), " ", src, ": ", val(t, get(l, "message")), " ",
				val(t, get(l, "tags")), " ", val(t, get(l, "file")), ":", val(t, get(l, "line"))))
		}
		return out
	}
	assert.Equal(t, resourceLines(get(theirs, "logs")), resourceLines(get(ours, "logs")))
}

// The files: last_run_report.yaml is the JSON's document with Ruby's tag;
// last_run_summary.yaml has Puppet's members in Puppet's order.
func TestWriteFilesAsPuppetsAgent(t *testing.T) {
	rep, m, tmp := puppetRun(t)
	dir := filepath.Join(tmp, "state")
	rfile, sfile := filepath.Join(dir, "last_run_report.yaml"), filepath.Join(tmp, "public", "last_run_summary.yaml")
	require.NoError(t, report.WriteFiles(rep, m, rfile, sfile))
	for _, f := range []string{rfile, sfile} {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), f)
	}
	ry, err := os.ReadFile(rfile)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(ry), "--- !ruby/object:Puppet::Transaction::Report\nhost: "), string(ry[:80]))
	body, err := report.JSON(rep, m)
	require.NoError(t, err)
	assert.Equal(t, val(t, doc(t, body)), val(t, doc(t, ry)), "the YAML and the JSON say the same")

	sy, err := os.ReadFile(sfile)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(sy), "---\nversion:\n"), string(sy))
	ours, theirs := doc(t, sy), doc(t, fixture(t, "puppet-last_run_summary.yaml", tmp))
	assert.Equal(t, keys(theirs), keys(ours))
	for _, k := range keys(theirs) {
		assert.Equal(t, keys(get(theirs, k)), keys(get(ours, k)), k)
	}
	for _, k := range []string{"version", "application", "resources", "changes", "events"} {
		assert.Equal(t, val(t, get(theirs, k)), val(t, get(ours, k)), k)
	}
	last := val(t, get(get(ours, "time"), "last_run")).(int)
	assert.InDelta(t, time.Now().Unix(), last, 60)
	assert.InDelta(t, 16.0, val(t, get(get(ours, "time"), "total")), 0.001)

	// Nothing left beside them, and a symlink in the way is replaced, not
	// followed.
	for _, d := range []string{dir, filepath.Dir(sfile)} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.HasPrefix(e.Name(), "."), "a temporary file left: %s", e.Name())
		}
	}
	victim := filepath.Join(tmp, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep\n"), 0o600))
	require.NoError(t, os.Remove(rfile))
	require.NoError(t, os.Symlink(victim, rfile))
	require.NoError(t, report.WriteFiles(rep, m, rfile, ""))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep\n", string(b))
	fi, err := os.Lstat(rfile)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
}

// Puppet's own Ruby takes our JSON as a report (from_data_hash) and gives
// back the same document (to_data_hash), and loads our YAML as its class.
func TestPuppetReadsOurReport(t *testing.T) {
	if _, err := os.Stat("/usr/lib/ruby/vendor_ruby/puppet/transaction/report.rb"); err != nil {
		t.Skip("Puppet's Ruby is not installed")
	}
	rep, m, tmp := puppetRun(t)
	body, err := report.JSON(rep, m)
	require.NoError(t, err)
	jf := filepath.Join(tmp, "report.json")
	require.NoError(t, os.WriteFile(jf, body, 0o600))
	yf := filepath.Join(tmp, "report.yaml")
	require.NoError(t, report.WriteFiles(rep, m, yf, ""))
	cmd := exec.Command("ruby", "-e", `
require 'puppet'
require 'json'
r = Puppet::Transaction::Report.from_data_hash(JSON.parse(File.read(ARGV[0])))
y = YAML.unsafe_load(File.read(ARGV[1]))
raise "YAML: #{y.class}" unless y.is_a?(Puppet::Transaction::Report)
puts JSON.generate(r.to_data_hash)
puts JSON.generate(y.to_data_hash)
`, jf, yf)
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var sent any
	require.NoError(t, json.Unmarshal(body, &sent))
	docs := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, docs, 2, string(out))
	for i, what := range []string{"the JSON", "the YAML"} {
		var back any
		require.NoError(t, json.Unmarshal([]byte(docs[i]), &back))
		assert.Equal(t, sent, back, "%s, read by Puppet and written again", what)
	}
}

// A run that applied nothing (no catalog): failed, not completed, and
// none of the resources an applied catalog gets.
func TestIncompleteRun(t *testing.T) {
	start := time.Date(2026, 11, 26, 19, 0, 0, 5, time.UTC)
	rep := &catalog.Report{Host: "node1", Environment: "production", Time: start, Duration: 2 * time.Second,
		Incomplete: true, Logs: []catalog.LogEntry{{Level: slog.LevelError, Source: "Puppet", Time: start,
			Message: "Could not retrieve catalog from remote server: Error 500 on SERVER: boom"}}}
	body, err := report.JSON(rep, report.Meta{TransactionUUID: "u1", CachedCatalogStatus: "not_used",
		ServerUsed: "puppet:8140", JobID: "42", Timings: map[string]time.Duration{"fact_generation": time.Second}})
	require.NoError(t, err)
	var d map[string]any
	require.NoError(t, json.Unmarshal(body, &d))
	assert.Equal(t, "failed", d["status"])
	assert.Equal(t, false, d["transaction_completed"])
	assert.Equal(t, map[string]any{}, d["resource_statuses"])
	assert.Equal(t, "u1", d["transaction_uuid"])
	assert.Equal(t, "puppet:8140", d["server_used"])
	assert.Equal(t, "42", d["job_id"])
	assert.NotContains(t, d, "code_id")
	assert.NotContains(t, d, "catalog_uuid")
	assert.Nil(t, d["configuration_version"])
	assert.Equal(t, "2026-11-26T19:00:00.000000005+00:00", d["time"])
	logs := d["logs"].([]any)
	require.Len(t, logs, 1)
	assert.Equal(t, map[string]any{"level": "err", "message": "Could not retrieve catalog from remote server: Error 500 on SERVER: boom",
		"source": "Puppet", "tags": []any{"err"}, "time": "2026-11-26T19:00:00.000000005+00:00", "file": nil, "line": nil}, logs[0])
	times := d["metrics"].(map[string]any)["time"].(map[string]any)["values"].([]any)
	assert.Equal(t, []any{[]any{"fact_generation", "Fact generation", 1.0}, []any{"total", "Total", 2.0}}, times)
}

func TestSubmit(t *testing.T) {
	var got struct {
		method, path, rawPath, query, ctype, version, agent string
		body                                                []byte
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.rawPath, got.query = r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery
		got.ctype, got.version = r.Header.Get("Content-Type"), r.Header.Get("X-Puppet-Version")
		got.agent = r.Header.Get("User-Agent")
		got.body, _ = io.ReadAll(r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/broken"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"message":"Server Error: Could not process report: disk full","issue_kind":"RUNTIME_ERROR"}`)
		case strings.HasSuffix(r.URL.Path, "/forbidden"):
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "Forbidden request: /puppet/v3/report/forbidden (method PUT)")
		case strings.HasSuffix(r.URL.Path, "/empty"):
			w.WriteHeader(http.StatusNotFound)
		case strings.HasSuffix(r.URL.Path, "/huge"):
			w.WriteHeader(http.StatusBadGateway)
			w.Write(bytes.Repeat([]byte("x"), 1<<20))
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `["store"]`)
		}
	}))
	defer srv.Close()
	hc := srv.Client()
	ctx := context.Background()
	body := []byte(`{"host":"node 1","puppet_version":"7.23.0"}`)

	require.NoError(t, report.Submit(ctx, hc, srv.URL+"/", "node 1", "prod env", body))
	assert.Equal(t, http.MethodPut, got.method)
	assert.Equal(t, "/puppet/v3/report/node%201", got.rawPath)
	assert.Equal(t, "environment=prod+env", got.query)
	assert.Equal(t, "application/json", got.ctype)
	assert.Equal(t, "7.23.0", got.version)
	// pippet says who it is, as in its other requests (issue 37 item 5).
	assert.Equal(t, "pippet", got.agent)
	assert.Equal(t, body, got.body)

	var re *report.Error
	err := report.Submit(ctx, hc, srv.URL, "broken", "production", body)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 500, re.Code)
	assert.Equal(t, "Error 500 on SERVER: Server Error: Could not process report: disk full", err.Error())

	err = report.Submit(ctx, hc, srv.URL, "forbidden", "production", body)
	assert.EqualError(t, err, "Error 403 on SERVER: Forbidden request: /puppet/v3/report/forbidden (method PUT)")

	err = report.Submit(ctx, hc, srv.URL, "empty", "production", body)
	assert.EqualError(t, err, "Error 404 on SERVER: Not Found")

	err = report.Submit(ctx, hc, srv.URL, "huge", "production", body)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 502, re.Code)
	assert.LessOrEqual(t, len(re.Message), 64<<10)

	// The path cannot be escaped from by the certname.
	require.NoError(t, report.Submit(ctx, hc, srv.URL, "../../puppet-ca/v1/x", "production", body))
	assert.Equal(t, "/puppet/v3/report/..%2F..%2Fpuppet-ca%2Fv1%2Fx", got.rawPath)

	// A server that is not there, and a run cancelled.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	err = report.Submit(ctx, http.DefaultClient, dead.URL, "node1", "production", body)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sending the report to "+dead.URL)
	assert.False(t, errors.As(err, &re))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = report.Submit(cctx, hc, srv.URL, "node1", "production", body)
	assert.ErrorIs(t, err, context.Canceled)

	assert.Error(t, report.Submit(ctx, hc, srv.URL, "", "production", body))
}

// Numbers are written so that Ruby's YAML 1.1 reads them as Puppet wrote
// them: a float always has its dot (1e-05 would be read as a string).
func TestYAMLFloatsForRuby(t *testing.T) {
	start := time.Date(2026, 11, 26, 19, 0, 0, 0, time.UTC)
	rep := &catalog.Report{Host: "n", Environment: "production", Time: start, Duration: 3 * time.Second,
		Statuses: []*catalog.Status{{Resource: "File[/x]", Type: "File", Title: "/x", Time: start, EvaluationTime: 10 * time.Microsecond}}}
	f := filepath.Join(t.TempDir(), "r.yaml")
	require.NoError(t, report.WriteFiles(rep, report.Meta{}, f, ""))
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Contains(t, string(b), "evaluation_time: 1.0e-05\n")
	assert.Contains(t, string(b), "- 3.0\n", "the total, 3 s")
	assert.Contains(t, string(b), "configuration_version:\n", "null, as Psych writes it")
	assert.Contains(t, string(b), "host: \"n\"\n", "a word YAML 1.1 reads as false is quoted")
}

// Strings YAML could read as something else are quoted: yaml.v3 and
// Ruby's Psych (YAML 1.1, what Puppet reads the file with) read back
// every title as it was.
func TestYAMLStringsReadBack(t *testing.T) {
	titles := []string{"a: b", "# x", "- x", "yes", "No", "on", "y", "123", "1.5", "2026-11-26", "12:30", "1_000",
		"multi\nline", "tab\there", `quote"s`, `back\slash`, "ünïcødé", " leading", "trailing ", "", "~", "null",
		"[x]", "{x}", "*alias", "&anchor", "!tag", "%pct", "@at", "`tick", "'single'", "a #b", "x:", ".nan",
		"0x1F", "+1", "Exec[a b]", "/etc/x y", "<html>&", "line\r", "\x01ctl", "='eq'", "?q", "|bar", ">gt"}
	start := time.Date(2026, 11, 26, 19, 0, 0, 0, time.UTC)
	rep := &catalog.Report{Host: "n", Environment: "production", Time: start}
	for _, ti := range titles {
		rep.Statuses = append(rep.Statuses, &catalog.Status{Resource: "Notify[" + ti + "]", Type: "Notify", Title: ti,
			Time: start, Events: []catalog.Event{{Property: "message", Previous: ti, Desired: []any{ti}, Message: ti, Status: "success"}}})
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "r.yaml")
	require.NoError(t, report.WriteFiles(rep, report.Meta{}, f, ""))
	b, err := os.ReadFile(f)
	require.NoError(t, err)
	d := doc(t, b)
	sts := get(d, "resource_statuses")
	require.Len(t, sts.Content, 2*(len(titles)+7), "the titles, and the agent's default schedules and filebucket")
	for i, ti := range titles {
		assert.Equal(t, "Notify["+ti+"]", sts.Content[2*i].Value)
		st := sts.Content[2*i+1]
		assert.Equal(t, ti, val(t, get(st, "title")), "%q", ti)
		ev := get(st, "events").Content[0]
		assert.Equal(t, ti, val(t, get(ev, "previous_value")), "%q", ti)
		assert.Equal(t, []any{ti}, val(t, get(ev, "desired_value")), "%q", ti)
	}
	if _, err := os.Stat("/usr/lib/ruby/vendor_ruby/puppet/transaction/report.rb"); err != nil {
		t.Skip("Puppet's Ruby is not installed")
	}
	cmd := exec.Command("ruby", "-rpuppet", "-rjson", "-e",
		`d = YAML.unsafe_load(File.read(ARGV[0])); puts JSON.generate(d.resource_statuses.values.map(&:title))`, f)
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	var back []string
	require.NoError(t, json.Unmarshal(out, &back), string(out))
	require.Len(t, back, len(titles)+7)
	assert.Equal(t, titles, back[:len(titles)])
}

// TestPuppetVersion: the report says which Puppet's semantics the run
// followed, a version PuppetDB, Foreman and Puppetboard read as Puppet's
// (issue 38 item 6), in the JSON, last_run_report.yaml and the summary.
func TestPuppetVersion(t *testing.T) {
	rep := &catalog.Report{Host: "node1", Environment: "production", Time: time.Now()}
	body, err := report.JSON(rep, report.Meta{})
	require.NoError(t, err)
	var v struct {
		PuppetVersion string `json:"puppet_version"`
	}
	require.NoError(t, json.Unmarshal(body, &v))
	assert.Equal(t, protocol.PuppetVersion, v.PuppetVersion)
	assert.Regexp(t, `^7\.\d+\.\d+$`, v.PuppetVersion)

	dir := t.TempDir()
	require.NoError(t, report.WriteFiles(rep, report.Meta{}, filepath.Join(dir, "r.yaml"), filepath.Join(dir, "s.yaml")))
	b, err := os.ReadFile(filepath.Join(dir, "r.yaml"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(strings.Replace(string(b), "!ruby/object:Puppet::Transaction::Report", "", 1)), &doc))
	assert.Equal(t, protocol.PuppetVersion, doc["puppet_version"])
	b, err = os.ReadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	var sum struct {
		Version struct {
			Puppet string `yaml:"puppet"`
		} `yaml:"version"`
	}
	require.NoError(t, yaml.Unmarshal(b, &sum))
	assert.Equal(t, protocol.PuppetVersion, sum.Version.Puppet)
}
