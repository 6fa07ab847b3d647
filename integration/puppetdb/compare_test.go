package puppetdb

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// factDifferences are the facts one node has and the other has not, or
// with values that differ for a reason that stays; docs/compatibility.md
// lists them.
var factDifferences = map[string]string{
	// Facter 4.3 fails these where /proc/1/environ cannot be read (a
	// container, a sandbox: as here), and leaves them out; pippet reads
	// them (agent/facts' differences).
	"virtual": "Facter fails", "is_virtual": "Facter fails", "system_uptime": "Facter fails",
	"uptime": "Facter fails", "uptime_seconds": "Facter fails", "uptime_hours": "Facter fails", "uptime_days": "Facter fails",
}

// volatileFacts change between two runs a few seconds apart: compared by
// kind only (mountpoints: the mount points and their devices, file
// systems and options).
var volatileFacts = regexp.MustCompile(`^(memory|memoryfree|memoryfree_mb|swapfree|swapfree_mb|system_uptime|uptime|uptime_seconds|uptime_hours|uptime_days|load_averages|mountpoints)$`)

// kind is a JSON value's kind.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "number"
	}
}

func factset(t *testing.T, s *pdbSite, n *node) map[string]any {
	var fs map[string]any
	s.query(t, "/factsets/"+n.certname, &fs)
	facts := map[string]any{}
	for _, e := range fs["facts"].(map[string]any)["data"].([]any) {
		m := e.(map[string]any)
		facts[m["name"].(string)] = norm(m["value"], n, s)
	}
	return facts
}

// compareFacts: the same facts, of the same kinds, with the same values
// but for those that change from second to second.
func compareFacts(t *testing.T, s *pdbSite, pn, rn *node) {
	pf, rf := factset(t, s, pn), factset(t, s, rn)
	for _, name := range keys(pf) {
		if _, ok := factDifferences[name]; ok {
			continue
		}
		r, ok := rf[name]
		if !assert.True(t, ok, "the pippet node lacks the fact %s (Puppet's: %v)", name, short(pf[name])) {
			continue
		}
		if !assert.Equal(t, kind(pf[name]), kind(r), "the kind of the fact %s", name) {
			continue
		}
		if name == "mountpoints" {
			pm, rm := pf[name].(map[string]any), r.(map[string]any)
			assert.Equal(t, keys(pm), keys(rm), "the mount points")
			for path, pv := range pm {
				for _, k := range []string{"device", "filesystem", "options", "size_bytes"} {
					rv, _ := rm[path].(map[string]any)
					assert.Equal(t, pv.(map[string]any)[k], rv[k], "mount point %s: %s", path, k)
				}
			}
		}
		if volatileFacts.MatchString(name) {
			continue
		}
		assert.Equal(t, pf[name], r, "the fact %s", name)
	}
	for _, name := range keys(rf) {
		if _, ok := factDifferences[name]; ok {
			continue
		}
		_, ok := pf[name]
		assert.True(t, ok, "the pippet node has a fact Puppet's has not: %s = %v", name, short(rf[name]))
	}
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// reportDifferences are the report members that differ between the two
// nodes by nature (each run's own identifiers and times, checked as
// such elsewhere).
var reportDifferences = map[string]bool{
	"hash": true, "transaction_uuid": true, "catalog_uuid": true, "configuration_version": true,
	"start_time": true, "end_time": true, "producer_timestamp": true, "receive_time": true,
	"resource_events": true, "metrics": true, "logs": true,
}

// compareReports: the reports' members; their events, metrics and logs
// each by its own rule.
func compareReports(t *testing.T, s *pdbSite, pn, rn *node, p, r map[string]any) {
	require.Equal(t, keys(p), keys(r), "the reports' members")
	for _, k := range keys(p) {
		if reportDifferences[k] {
			continue
		}
		assert.Equal(t, norm(p[k], pn, s), norm(r[k], rn, s), "the report's %s", k)
	}
	var pev, rev []any
	s.query(t, "/events"+pql(fmt.Sprintf(`["=","report",%q]`, p["hash"])), &pev)
	s.query(t, "/events"+pql(fmt.Sprintf(`["=","report",%q]`, r["hash"])), &rev)
	assert.Equal(t, events(pev, pn, s), events(rev, rn, s), "the events")

	var pm, rm []any
	s.query(t, "/reports/"+p["hash"].(string)+"/metrics", &pm)
	s.query(t, "/reports/"+r["hash"].(string)+"/metrics", &rm)
	assert.Equal(t, metrics(pm, false), metrics(rm, false), "the metrics' names")
	assert.Equal(t, metrics(pm, true), metrics(rm, true), "the counting metrics' values")

	var pl, rl []any
	s.query(t, "/reports/"+p["hash"].(string)+"/logs", &pl)
	s.query(t, "/reports/"+r["hash"].(string)+"/logs", &rl)
	assert.Equal(t, logs(pl, pn, s), logs(rl, rn, s), "the logs")
}

// eventFields are the members of an event compared (timestamps,
// report hashes and the like are each run's own).
var eventFields = []string{"resource_type", "resource_title", "property", "name", "old_value", "new_value", "message", "status",
	"containing_class", "containment_path", "file", "line", "corrective_change"}

func events(evs []any, n *node, s *pdbSite) []string {
	var out []string
	for _, e := range evs {
		m := norm(e, n, s).(map[string]any)
		var b strings.Builder
		for _, f := range eventFields {
			fmt.Fprintf(&b, "%s=%v ", f, m[f])
		}
		out = append(out, b.String())
	}
	sort.Strings(out)
	return out
}

// metrics are category.name (and with values, the value: only the
// counts, resources, events and changes, whose values both runs share).
func metrics(ms []any, values bool) []string {
	var out []string
	for _, e := range ms {
		m := e.(map[string]any)
		key := fmt.Sprintf("%s.%s", m["category"], m["name"])
		if values {
			if m["category"] == "time" {
				continue
			}
			key += fmt.Sprintf("=%v", m["value"])
		}
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// logDifferences are log lines that differ between the two agents by
// nature: the time a run took, the catalog's version (its compile time).
var logDifferences = map[*regexp.Regexp]string{
	regexp.MustCompile(`^Applied catalog in [0-9.]+ seconds$`):      "Applied catalog in N seconds",
	regexp.MustCompile(`^Applying configuration version '[0-9]+'$`): "Applying configuration version 'N'",
}

// puppetOnlyLogs are Puppet's lines pippet does not have (listed in
// docs/compatibility.md): Facter's complaints where it cannot read
// /proc/1/environ (a container, as here); pippet reads the facts itself.
var puppetOnlyLogs = "Facter"

func logs(ls []any, n *node, s *pdbSite) []string {
	var out []string
	for _, e := range ls {
		m := norm(e, n, s).(map[string]any)
		msg := m["message"].(string)
		if m["source"] == puppetOnlyLogs {
			continue
		}
		for re, as := range logDifferences {
			if re.MatchString(msg) {
				msg = as
			}
		}
		var tags []string
		for _, tag := range m["tags"].([]any) {
			tags = append(tags, tag.(string))
		}
		sort.Strings(tags)
		out = append(out, fmt.Sprintf("%s %s: %s %v file=%v line=%v", m["level"], m["source"], msg, tags, m["file"], m["line"]))
	}
	sort.Strings(out)
	return out
}
