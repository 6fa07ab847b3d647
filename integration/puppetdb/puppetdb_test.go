package puppetdb

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The two nodes: one run by `receiver agent`, one by `puppet agent`.
const (
	pippetNode = "pdb-pippet.example"
	puppetNode = "pdb-puppet.example"
)

// sitePP is the site's manifest: each node manages a directory of its
// own under base, a file whose change refreshes an exec, exports a host
// and collects every node's host into its own hosts file.
func sitePP(base string) string {
	return fmt.Sprintf(`node default {
  $root = "%s/nodes/${trusted['certname']}"
  $ip = $trusted['certname'] ? { '%s' => '192.0.2.1', default => '192.0.2.2' }
  file { $root: ensure => directory }
  file { "${root}/motd":
    content => "managed by Puppet\n",
    notify  => Exec['refresh'],
  }
  exec { 'refresh':
    command     => "/bin/touch ${root}/refreshed",
    refreshonly => true,
  }
  notify { 'hello': message => 'hello from the site' }
  @@host { $trusted['certname']:
    ip     => $ip,
    target => "${root}/exported-hosts",
    tag    => ['pdbtest'],
  }
  Host <<| tag == 'pdbtest' |>> {
    target  => "${root}/hosts",
    require => File[$root],
  }
}
`, base, pippetNode)
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// node is one agent node: its certname, ssldir and confdir.
type node struct {
	certname, dir, confdir string
}

func newNode(t *testing.T, s *pdbSite, certname string) *node {
	t.Helper()
	n := &node{certname: certname, dir: t.TempDir()}
	ssldir := filepath.Join(n.dir, "ssl")
	for src, dst := range map[string]string{
		"certs/ca.pem":                      "certs/ca.pem",
		"crl.pem":                           "crl.pem",
		"certs/" + certname + ".pem":        "certs/" + certname + ".pem",
		"private_keys/" + certname + ".pem": "private_keys/" + certname + ".pem",
	} {
		require.NoError(t, copyFile(filepath.Join(s.ssl, src), filepath.Join(ssldir, dst), 0o600))
	}
	vardir := filepath.Join(n.dir, "var")
	n.confdir = filepath.Join(n.dir, "conf")
	require.NoError(t, write(filepath.Join(n.confdir, "puppet.conf"), fmt.Sprintf(`[main]
ssldir = %s
vardir = %s
publicdir = %s
rundir = %s
logdir = %s
certname = %s
server = localhost
serverport = %d
[agent]
environment = production
`, ssldir, vardir, filepath.Join(vardir, "public"), filepath.Join(vardir, "run"), filepath.Join(vardir, "log"), certname, s.serverPort)))
	return n
}

// run runs the node's agent once (-t): `receiver agent` for the pippet
// node, `puppet agent` for the other. It returns the exit status and the
// output.
func (n *node) run(t *testing.T) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if n.certname == pippetNode {
		cmd = exec.CommandContext(ctx, receiverBin, "agent", "-t", "--confdir", n.confdir, "--state-dir", filepath.Join(n.dir, "pippet-state"))
	} else {
		cmd = exec.CommandContext(ctx, "puppet", "agent", "-t", "--confdir", n.confdir)
	}
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME="+n.dir)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s's agent: %v\n%s", n.certname, err, out.String())
	}
	return code, out.String()
}

func (n *node) root(s *pdbSite) string { return filepath.Join(s.dir, "nodes", n.certname) }

// pql is a query parameter.
func pql(q string) string { return "?query=" + url.QueryEscape(q) }

// latestReport is the node's newest report PuppetDB holds, once it holds
// one with the transaction uuid (PuppetDB stores commands asynchronously).
func (s *pdbSite) latestReport(t *testing.T, certname, uuid string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var reps []map[string]any
		s.query(t, "/reports"+pql(fmt.Sprintf(`["and",["=","certname",%q],["=","transaction_uuid",%q]]`, certname, uuid)), &reps)
		if len(reps) == 1 {
			return reps[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("PuppetDB holds no report of %s with transaction_uuid %s", certname, uuid)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// lastUUID is the transaction_uuid of the node's last_run_summary... of
// its last_run_report.yaml.
func (n *node) lastUUID(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.dir, "var", "state", "last_run_report.yaml"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "transaction_uuid: "); ok {
			return strings.Trim(v, `"'`)
		}
	}
	t.Fatalf("no transaction_uuid in %s's last_run_report.yaml", n.certname)
	return ""
}

// other is the other node's certname.
func other(certname string) string {
	if certname == pippetNode {
		return puppetNode
	}
	return pippetNode
}

// norm replaces what names the node in v (its certname and host name,
// its root, the other node's certname) so that the two nodes' values
// compare.
func norm(v any, n *node, s *pdbSite) any {
	switch x := v.(type) {
	case string:
		x = strings.ReplaceAll(x, n.root(s), "ROOT")
		x = strings.ReplaceAll(x, n.certname, "NODE")
		x = strings.ReplaceAll(x, other(n.certname), "OTHER")
		return strings.ReplaceAll(x, strings.Split(n.certname, ".")[0], "SHORTNAME")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = norm(e, n, s)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[norm(k, n, s).(string)] = norm(e, n, s)
		}
		return out
	}
	return v
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	tm, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err, "a time: %v", v)
	return tm
}

// TestPuppetDBAgainstPuppet runs both nodes twice (the second round from
// scratch, each node's directory removed, so that both rounds collect
// both nodes' hosts and make the same changes), then compares what
// PuppetDB holds of each, member by member.
func TestPuppetDBAgainstPuppet(t *testing.T) {
	s := need(t)
	pn, rn := newNode(t, s, puppetNode), newNode(t, s, pippetNode)
	// Round one: each node exports its host; the pippet node collects its
	// own only, the Puppet node both, then the pippet node both: each
	// node's store knows both hosts, so that round two's changes are
	// corrective on both.
	for _, n := range []*node{rn, pn, rn} {
		code, out := n.run(t)
		// (assert, not require: what differs later is worth seeing too)
		assert.Equal(t, 2, code, "%s's run:\n%s", n.certname, out)
		// The node's own export, collected by its own collector, reached
		// it with exported: true and was applied (issue 38, item 2).
		b, err := os.ReadFile(filepath.Join(n.root(s), "hosts"))
		if assert.NoError(t, err, "%s's run applied no collected host:\n%s", n.certname, out) {
			assert.Contains(t, string(b), n.certname, "%s's own exported host", n.certname)
		}
	}
	// Round two, from scratch: each node collects both hosts.
	uuids := map[string]string{}
	outs := map[string]string{}
	for _, n := range []*node{rn, pn} {
		require.NoError(t, os.RemoveAll(n.root(s)))
		before := time.Now()
		code, out := n.run(t)
		after := time.Now()
		assert.Equal(t, 2, code, "%s's second run:\n%s", n.certname, out)
		outs[n.certname] = out
		b, err := os.ReadFile(filepath.Join(n.root(s), "hosts"))
		if assert.NoError(t, err) {
			for _, m := range []string{pippetNode, puppetNode} {
				assert.Contains(t, string(b), m, "%s collected %s's host", n.certname, m)
			}
		}
		uuids[n.certname] = n.lastUUID(t)
		rep := s.latestReport(t, n.certname, uuids[n.certname])
		// The report's times: the run began after the command started,
		// ended before it ended, and PuppetDB received it after both
		// (issue 38, item 1: end_time is start_time + time.total).
		start, end := parseTime(t, rep["start_time"]), parseTime(t, rep["end_time"])
		recv := parseTime(t, rep["receive_time"])
		assert.False(t, start.Before(before.Add(-time.Second)), "%s: start_time %s before the command started %s", n.certname, start, before)
		assert.False(t, end.Before(start), "%s: end_time %s before start_time %s", n.certname, end, start)
		assert.False(t, end.After(after.Add(time.Second)), "%s: end_time %s after the command ended %s", n.certname, end, after)
		assert.False(t, end.After(recv.Add(time.Second)), "%s: end_time %s after PuppetDB received the report %s", n.certname, end, recv)
	}
	t.Run("nodes", func(t *testing.T) { compareNodes(t, s, pn, rn) })
	t.Run("catalogs", func(t *testing.T) { compareCatalogs(t, s, pn, rn) })
	t.Run("facts", func(t *testing.T) { compareFacts(t, s, pn, rn) })
	t.Run("reports", func(t *testing.T) {
		compareReports(t, s, pn, rn, s.latestReport(t, puppetNode, uuids[puppetNode]), s.latestReport(t, pippetNode, uuids[pippetNode]))
	})
}

// compareNodes: /nodes/NAME, member by member; the times only as times.
func compareNodes(t *testing.T, s *pdbSite, pn, rn *node) {
	var p, r map[string]any
	s.query(t, "/nodes/"+pn.certname, &p)
	s.query(t, "/nodes/"+rn.certname, &r)
	require.Equal(t, keys(p), keys(r))
	for _, k := range keys(p) {
		switch {
		case strings.HasSuffix(k, "_timestamp"):
			if p[k] != nil {
				parseTime(t, r[k])
			} else {
				assert.Nil(t, r[k], k)
			}
		case k == "latest_report_hash" || k == "catalog_environment" && false:
			assert.Equal(t, p[k] == nil, r[k] == nil, k)
		default:
			assert.Equal(t, norm(p[k], pn, s), norm(r[k], rn, s), "nodes member %s", k)
		}
	}
	// No report of the pippet node is in the future.
	assert.False(t, parseTime(t, r["report_timestamp"]).After(time.Now()), "report_timestamp %v in the future", r["report_timestamp"])
}

// resource is a catalog resource as compared.
type resource struct {
	Type, Title string
	Exported    bool
	Tags        []string
	Params      map[string]any
	File        any
	Line        any
}

func catalogResources(t *testing.T, s *pdbSite, n *node) (map[string]resource, []string) {
	var cat map[string]any
	s.query(t, "/catalogs/"+n.certname, &cat)
	res := map[string]resource{}
	for _, e := range cat["resources"].(map[string]any)["data"].([]any) {
		m := norm(e, n, s).(map[string]any)
		tags := []string{}
		for _, tag := range m["tags"].([]any) {
			tags = append(tags, tag.(string))
		}
		sort.Strings(tags)
		params, _ := m["parameters"].(map[string]any)
		r := resource{Type: m["type"].(string), Title: m["title"].(string), Exported: m["exported"] == true, Tags: tags,
			Params: params, File: m["file"], Line: m["line"]}
		res[r.Type+"["+r.Title+"]"] = r
	}
	var edges []string
	for _, e := range cat["edges"].(map[string]any)["data"].([]any) {
		m := norm(e, n, s).(map[string]any)
		src, dst := m["source_type"].(string)+"["+m["source_title"].(string)+"]", m["target_type"].(string)+"["+m["target_title"].(string)+"]"
		edges = append(edges, src+" "+m["relationship"].(string)+" "+dst)
	}
	sort.Strings(edges)
	return res, edges
}

// compareCatalogs: the catalogs the server stored for the two nodes hold
// the same resources (the exported host of each, exported and collected)
// and edges.
func compareCatalogs(t *testing.T, s *pdbSite, pn, rn *node) {
	pr, pe := catalogResources(t, s, pn)
	rr, re := catalogResources(t, s, rn)
	assert.Equal(t, pe, re, "edges")
	require.Equal(t, len(pr), len(rr), "resources")
	for ref, p := range pr {
		r, ok := rr[ref]
		if !assert.True(t, ok, "the pippet node's catalog lacks %s", ref) {
			continue
		}
		if strings.HasPrefix(ref, "Host[") {
			// Each node's host has its own ip.
			delete(p.Params, "ip")
			delete(r.Params, "ip")
		}
		assert.Equal(t, p, r, ref)
	}
	assert.True(t, rr["Host[NODE]"].Exported, "the node's own host is exported in its catalog")
}
