package integration

import (
	"fmt"
	json "github.com/goccy/go-json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The autorelationships a delegated type declares in its Ruby
// (pippet_mark: autorequire(:file), autosubscribe(:pippet_mark),
// autobefore(:file)) order the walk and carry refreshes as in Puppet,
// whatever the catalog's order: the mark runs after the file it requires
// and before the one it precedes, and the mark listening to it is
// refreshed. Puppet applied the same catalog into the same log.
func TestCatalogDelegatedAutorelations(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	run := func(t *testing.T, apply func(cat string)) string {
		dir := t.TempDir()
		log, f, g := filepath.Join(dir, "log"), filepath.Join(dir, "f"), filepath.Join(dir, "g")
		cat := handCatalog(t,
			[3]any{"File", g, map[string]any{"ensure": "file"}},
			[3]any{"Pippet_mark", "listener", map[string]any{"log": log, "listen": "first"}},
			[3]any{"Pippet_mark", "first", map[string]any{"log": log, "after": f, "ahead": g}},
			[3]any{"File", f, map[string]any{"ensure": "file"}},
		)
		apply(cat)
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		out := string(data)
		for _, p := range []string{f, g} {
			out = strings.ReplaceAll(out, p, filepath.Base(p))
		}
		return out
	}
	want := "first f=present g=absent\nlistener\nlistener refreshed\n"
	t.Run("puppet", func(t *testing.T) {
		got := run(t, func(cat string) {
			out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath).CombinedOutput()
			require.NoError(t, err, string(out))
		})
		assert.Equal(t, want, got)
	})
	t.Run("pippet", func(t *testing.T) {
		got := run(t, func(cat string) {
			_, stderr := applyHand(t, cat, "--modulepath", modulepath)
			t.Log(stderr)
		})
		assert.Equal(t, want, got)
	})
}

// A delegated resource's log lines come in their place, complete, and in
// the report: its changes and its refresh (Triggered 'refresh' from 1
// event) before the next resource's lines and before the run's summary,
// and the report's logs hold them, as Puppet's for the same catalog.
func TestCatalogDelegatedLogLines(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	run := func(t *testing.T, apply func(cat, report string) string) (lines, logs []string) {
		dir := t.TempDir()
		log := filepath.Join(dir, "log")
		var rs [][3]any
		for i := range 6 {
			rs = append(rs, [3]any{"Pippet_mark", fmt.Sprintf("m%d", i), map[string]any{"log": log}})
			rs = append(rs, [3]any{"File", filepath.Join(dir, fmt.Sprintf("f%d", i)), map[string]any{"ensure": "file"}})
		}
		rs = append(rs, [3]any{"Pippet_mark", "listener", map[string]any{"log": log, "subscribe": "Pippet_mark[m5]"}})
		report := filepath.Join(dir, "report.yaml")
		out := apply(handCatalog(t, rs...), report)
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(l, "Notice: ") || strings.Contains(l, "Compiled catalog") {
				continue
			}
			l = strings.ReplaceAll(l, dir+"/", "")
			l = regexp.MustCompile(`in \d+\.\d+ seconds`).ReplaceAllString(l, "in N seconds")
			lines = append(lines, l)
		}
		data, err := os.ReadFile(report)
		require.NoError(t, err)
		var doc struct {
			Logs []struct {
				Source  string `yaml:"source"`
				Message string `yaml:"message"`
			} `yaml:"logs"`
		}
		require.NoError(t, yaml.Unmarshal(data, &doc))
		for _, l := range doc.Logs {
			if strings.Contains(l.Source, "Pippet_mark") {
				logs = append(logs, l.Source+": "+l.Message)
			}
		}
		return lines, logs
	}
	puppetLines, puppetLogs := run(t, func(cat, report string) string {
		out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath, "--color", "false", "--lastrunreport", report).CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	})
	require.NotEmpty(t, puppetLogs)
	require.Contains(t, puppetLines, "Notice: /Stage[main]/Main/Pippet_mark[listener]: Triggered 'refresh' from 1 event")
	ourLines, ourLogs := run(t, func(cat, report string) string {
		report2 := filepath.Join(t.TempDir(), "r.yaml")
		cmd := exec.Command(receiverBin, "apply", "--state-dir", t.TempDir(), "--lastrunreport", report2, "--modulepath", modulepath, cat)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		data, err := os.ReadFile(report2)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(report, data, 0o644))
		return string(out)
	})
	assert.Equal(t, puppetLines, ourLines)
	assert.Equal(t, puppetLogs, ourLogs)
}

// A delegated `resources { TYPE: purge => true }` leaves the catalog's
// own instances of TYPE alone and does not apply them itself: each is
// applied once, by its own request, with its own params, as in Puppet
// (pippet_mark applied bare would mark with no log and fail).
func TestCatalogDelegatedPurgeKeepsOwn(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	run := func(t *testing.T, apply func(cat string)) string {
		dir := t.TempDir()
		log, bare := filepath.Join(dir, "log"), filepath.Join(dir, "bare")
		t.Setenv("PIPPET_MARK_BARE", bare)
		defer func() {
			data, _ := os.ReadFile(bare)
			assert.Empty(t, string(data), "marks applied bare")
		}()
		apply(handCatalog(t,
			[3]any{"Resources", "pippet_mark", map[string]any{"purge": true}},
			[3]any{"Pippet_mark", "a", map[string]any{"log": log}},
			[3]any{"Pippet_mark", "b", map[string]any{"log": log, "name": "bee"}},
		))
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		return string(data)
	}
	want := "a\nbee\n"
	t.Run("puppet", func(t *testing.T) {
		assert.Equal(t, want, run(t, func(cat string) {
			out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath).CombinedOutput()
			require.NoError(t, err, string(out))
			require.NotContains(t, string(out), "Error: /", "no resource failed")
		}))
	})
	t.Run("pippet", func(t *testing.T) {
		assert.Equal(t, want, run(t, func(cat string) {
			st, stderr := applyHand(t, cat, "--modulepath", modulepath)
			for ref, s := range st {
				assert.False(t, s.Failed, "%s failed: %s", ref, stderr)
			}
		}))
	})
}

// classCatalog writes a catalog whose resources are in classes: each of
// rs is {class, type, title, params} (class "main" for the main class),
// the classes contained by Stage[main] in the order first named.
func classCatalog(t *testing.T, rs ...[4]any) string {
	t.Helper()
	resources := []map[string]any{{"type": "Stage", "title": "main", "tags": []string{"stage"}, "exported": false, "kind": "compilable_type"}}
	var edges []map[string]string
	classes := map[string]bool{}
	for _, r := range rs {
		class, typ, title := r[0].(string), r[1].(string), r[2].(string)
		if !classes[class] {
			classes[class] = true
			resources = append(resources, map[string]any{"type": "Class", "title": class, "tags": []string{"class", strings.ToLower(class)}, "exported": false, "kind": "class"})
			edges = append(edges, map[string]string{"source": "Stage[main]", "target": "Class[" + class + "]"})
		}
		resources = append(resources, map[string]any{"type": typ, "title": title, "tags": []string{strings.ToLower(typ)},
			"exported": false, "kind": "compilable_type", "parameters": r[3]})
		edges = append(edges, map[string]string{"source": "Class[" + class + "]", "target": typ + "[" + title + "]"})
	}
	data, err := json.Marshal(map[string]any{"name": "test", "version": 1, "environment": "production", "resources": resources, "edges": edges})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "catalog.json")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// A delegated type's autorequire of a class (postgresql_psql's
// `autorequire(:class) { ['Postgresql::Server::Service'] }`) orders
// nothing in Puppet 7: its Type#autorelation skips a type it cannot find,
// and Puppet::Type.type(:class) is nil. So neither does it in pippet (the
// bridge asks Puppet's own code): the mark, listed first, is applied
// before the class's file, in both.
func TestCatalogDelegatedClassAutorequire(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	run := func(t *testing.T, apply func(cat string)) string {
		dir := t.TempDir()
		log, f := filepath.Join(dir, "log"), filepath.Join(dir, "svc")
		apply(classCatalog(t,
			[4]any{"main", "Pippet_mark", "role", map[string]any{"log": log, "after_class": "Pippet::Service", "peek": f}},
			[4]any{"Pippet::Service", "File", f, map[string]any{"ensure": "file"}},
		))
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		return strings.ReplaceAll(string(data), f, "svc")
	}
	want := "role svc=absent\n"
	t.Run("puppet", func(t *testing.T) {
		assert.Equal(t, want, run(t, func(cat string) {
			out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath).CombinedOutput()
			require.NoError(t, err, string(out))
		}))
	})
	t.Run("pippet", func(t *testing.T) {
		assert.Equal(t, want, run(t, func(cat string) {
			_, stderr := applyHand(t, cat, "--modulepath", modulepath)
			t.Log(stderr)
		}))
	})
}

// A delegated `resources { TYPE: purge => true }` runs after what the
// instances it removes autorequire (firewall's rules their iptables
// package), as Puppet's generated removals do, though the catalog lists it
// first: the stray mark is removed once the tool it requires is there.
func TestCatalogDelegatedPurgeAfterItsRequirements(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	run := func(t *testing.T, apply func(cat string)) string {
		dir := t.TempDir()
		log, tool, purged, list := filepath.Join(dir, "log"), filepath.Join(dir, "tool"), filepath.Join(dir, "purged"), filepath.Join(dir, "instances")
		require.NoError(t, os.WriteFile(list, []byte("stray\nkept\n"), 0o644))
		t.Setenv("PIPPET_MARK_INSTANCES", list)
		t.Setenv("PIPPET_MARK_TOOL", tool)
		t.Setenv("PIPPET_MARK_PURGED", purged)
		apply(handCatalog(t,
			[3]any{"Resources", "pippet_mark", map[string]any{"purge": true}},
			[3]any{"Pippet_mark", "kept", map[string]any{"log": log}},
			[3]any{"File", tool, map[string]any{"ensure": "file"}},
		))
		data, err := os.ReadFile(purged)
		require.NoError(t, err)
		marks, err := os.ReadFile(log)
		require.NoError(t, err)
		return strings.ReplaceAll(string(data)+string(marks), tool, "tool")
	}
	want := "stray removed tool=present\nkept\n"
	t.Run("puppet", func(t *testing.T) {
		assert.Equal(t, want, run(t, func(cat string) {
			out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath).CombinedOutput()
			require.NoError(t, err, string(out))
		}))
	})
	t.Run("pippet", func(t *testing.T) {
		assert.Equal(t, want, run(t, func(cat string) {
			st, stderr := applyHand(t, cat, "--modulepath", modulepath)
			for ref, s := range st {
				assert.False(t, s.Failed, "%s failed: %s", ref, stderr)
			}
		}))
	})
}

// A delegated resource's failure whose message has several lines is one
// record of the report's logs, as Puppet's (the bridge sends it as one
// line of JSON); the console prints it a line at a time, each line with
// its record's prefix, so that no line of a message can pass for a
// record of its own (docs/compatibility.md).
func TestCatalogDelegatedMultiLineError(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t)
	logs := func(report string) []string {
		var out []string
		for _, l := range reportLogs(t, report) {
			if _, msg, _ := strings.Cut(l, ": "); strings.Contains(msg, "line") {
				out = append(out, l)
			}
		}
		return out
	}
	cat := handCatalog(t, [3]any{"Pippet_multiline", "x", map[string]any{"ensure": "present"}})
	puppetReport := filepath.Join(t.TempDir(), "report.yaml")
	out, _ := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath, "--color", "false", "--lastrunreport", puppetReport).CombinedOutput()
	want := logs(puppetReport)
	require.Len(t, want, 2, string(out))
	assert.Equal(t, "err /Stage[main]/Main/Pippet_multiline[x]/ensure: change from 'absent' to 'present' failed: first line\nsecond line\nthird line", want[1])

	ourReport := filepath.Join(t.TempDir(), "report.yaml")
	cmd := exec.Command(receiverBin, "apply", "--state-dir", t.TempDir(), "--lastrunreport", ourReport, "--modulepath", modulepath, cat)
	out, _ = cmd.CombinedOutput()
	assert.Equal(t, want, logs(ourReport), string(out))
	assert.Contains(t, string(out), "Error: /Stage[main]/Main/Pippet_multiline[x]/ensure: change from 'absent' to 'present' failed: first line\nError: second line\nError: third line\n")
}

// A line a delegated type's Ruby writes past Puppet's logging (Kernel#warn,
// a deprecation of the interpreter's) is printed, but is no record of the
// run: Puppet's report has no entry for it, and neither has pippet's. On
// the console pippet prefixes it (Warning:), so that it cannot pass for a
// record of another level (docs/compatibility.md).
func TestCatalogDelegatedRawWarningUnreported(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t)
	const raw = "pippet_rawwarn: a warning of Ruby's own"
	logs := func(report string) (all []string, found bool) {
		all = reportLogs(t, report)
		for _, l := range all {
			_, msg, _ := strings.Cut(l, ": ")
			found = found || strings.Contains(msg, "a warning of Ruby's own")
		}
		return all, found
	}
	cat := handCatalog(t, [3]any{"Pippet_rawwarn", "x", map[string]any{"ensure": "present"}})
	puppetReport := filepath.Join(t.TempDir(), "report.yaml")
	out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath, "--color", "false", "--lastrunreport", puppetReport).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "\n"+raw+"\n", "Puppet prints the line as it is")
	all, found := logs(puppetReport)
	require.False(t, found, "Puppet's report has no entry for it: %q", all)

	ourReport := filepath.Join(t.TempDir(), "report.yaml")
	cmd := exec.Command(receiverBin, "apply", "--state-dir", t.TempDir(), "--lastrunreport", ourReport, "--modulepath", modulepath, cat)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "Warning: "+raw+"\n")
	all, found = logs(ourReport)
	assert.False(t, found, "nor pippet's: %q", all)
	assert.Contains(t, all, "notice /Stage[main]/Main/Pippet_rawwarn[x]/ensure: defined 'ensure' as 'present'", "the run's own lines are kept")
}

// reportLogs are the logs of the report at path, each as "LEVEL SOURCE:
// MESSAGE".
func reportLogs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Logs []struct {
			Level   string `yaml:"level"`
			Source  string `yaml:"source"`
			Message string `yaml:"message"`
		} `yaml:"logs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	var out []string
	for _, l := range doc.Logs {
		out = append(out, l.Level+" "+l.Source+": "+l.Message)
	}
	return out
}
