package catalog_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/report"
)

// res is one resource of a hand-made catalog; in names its container
// (default Class[main]).
type res struct {
	typ, title string
	params     map[string]any
	in         string
	tags       []string
}

// class declares a class (a container) in Stage[main], as include does.
func class(name string, params map[string]any) res {
	return res{typ: "Class", title: name, params: params, in: "Stage[main]"}
}

// build writes a catalog as Puppet's JSON: Stage[main] holding Class[main]
// holding the rest (or what their in says).
func build(t *testing.T, rs ...res) []byte {
	t.Helper()
	type wres struct {
		Type       string         `json:"type"`
		Title      string         `json:"title"`
		Tags       []string       `json:"tags"`
		Exported   bool           `json:"exported"`
		Kind       string         `json:"kind"`
		Parameters map[string]any `json:"parameters,omitempty"`
	}
	out := map[string]any{"name": "testhost", "version": 42, "environment": "production", "catalog_uuid": "u-1"}
	resources := []wres{
		{Type: "Stage", Title: "main", Tags: []string{"stage"}, Kind: "compilable_type"},
		{Type: "Class", Title: "main", Tags: []string{"class"}, Kind: "class"},
	}
	edges := []map[string]string{{"source": "Stage[main]", "target": "Class[main]"}}
	for _, r := range rs {
		kind := "compilable_type"
		if r.typ == "Class" {
			kind = "class"
		} else if strings.Contains(r.typ, "::") {
			kind = "defined_type"
		}
		tags := append([]string{strings.ToLower(r.typ)}, r.tags...)
		resources = append(resources, wres{Type: r.typ, Title: r.title, Tags: tags, Kind: kind, Parameters: r.params})
		in := r.in
		if in == "" {
			in = "Class[main]"
		}
		edges = append(edges, map[string]string{"source": in, "target": r.typ + "[" + r.title + "]"})
	}
	out["resources"] = resources
	out["edges"] = edges
	data, err := json.Marshal(out)
	require.NoError(t, err)
	return data
}

// applied runs a catalog through the real engine and returns the report
// and the log.
func applied(t *testing.T, data []byte, o catalog.Options) (*report.Report, string) {
	t.Helper()
	var logbuf bytes.Buffer
	logh := catalog.NewLog(slog.NewTextHandler(&logbuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.Log = logh
	eng := engine.New(applier.Default, &applier.Env{
		Options: applier.Options{Noop: o.Noop, StateDir: t.TempDir()},
		Log:     slog.New(logh),
	})
	c, err := catalog.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	g, err := catalog.Build(c, applier.Default)
	require.NoError(t, err)
	rep := catalog.Apply(context.Background(), g, eng, o)
	return rep, logbuf.String()
}

func status(t *testing.T, rep *report.Report, ref string) *report.Status {
	t.Helper()
	s := rep.Find(ref)
	require.NotNil(t, s, "no status for %s", ref)
	return s
}

func lines(t *testing.T, p string) []string {
	t.Helper()
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(data))
}

// appendExec is an exec that appends word to log when it runs.
func appendExec(title, log, word string, extra map[string]any) res {
	p := map[string]any{"command": "/bin/sh -c 'echo " + word + " >> " + log + "'"}
	for k, v := range extra {
		p[k] = v
	}
	return res{typ: "Exec", title: title, params: p}
}

func TestOrder(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	tests := []struct {
		name string
		rs   []res
		want []string // words in log, in order
	}{
		{"catalog order when nothing relates", []res{
			appendExec("a", log, "a", nil), appendExec("b", log, "b", nil), appendExec("c", log, "c", nil),
		}, []string{"a", "b", "c"}},
		{"require and before win over catalog order", []res{
			appendExec("a", log, "a", map[string]any{"require": "Exec[c]"}),
			appendExec("b", log, "b", map[string]any{"before": []any{"Exec[a]"}}),
			appendExec("c", log, "c", nil),
		}, []string{"b", "c", "a"}},
		{"class edges order everything the classes hold", []res{
			class("First", map[string]any{"require": "Class[Second]"}),
			class("Second", nil),
			{typ: "Exec", title: "one", params: map[string]any{"command": "/bin/sh -c 'echo one >> " + log + "'"}, in: "Class[First]"},
			{typ: "Exec", title: "two", params: map[string]any{"command": "/bin/sh -c 'echo two >> " + log + "'"}, in: "Class[Second]"},
		}, []string{"two", "one"}},
		{"a defined type's instance is a container too", []res{
			{typ: "My::Thing", title: "x", params: map[string]any{"require": "Exec[last]"}},
			{typ: "Exec", title: "inner", params: map[string]any{"command": "/bin/sh -c 'echo inner >> " + log + "'"}, in: "My::Thing[x]"},
			appendExec("last", log, "last", nil),
		}, []string{"last", "inner"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(log)
			rep, _ := applied(t, build(t, tc.rs...), catalog.Options{})
			assert.Equal(t, "changed", rep.Status)
			assert.Equal(t, tc.want, lines(t, log))
		})
	}
}

func TestAutorequire(t *testing.T) {
	dir := t.TempDir()
	// The file comes first in the catalog; its directory is managed later
	// and must be made first.
	rep, _ := applied(t, build(t,
		res{typ: "File", title: dir + "/d/f", params: map[string]any{"ensure": "file", "content": "x"}},
		res{typ: "File", title: dir + "/d/", params: map[string]any{"ensure": "directory"}},
	), catalog.Options{})
	assert.Equal(t, "changed", rep.Status)
	assert.False(t, status(t, rep, "File["+dir+"/d/f]").Failed)
	assert.Equal(t, "File["+dir+"/d/]", rep.Statuses[0].Resource, "the directory first")
}

func TestRefresh(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	file := func(name, content string, extra map[string]any) res {
		p := map[string]any{"ensure": "file", "content": content}
		for k, v := range extra {
			p[k] = v
		}
		return res{typ: "File", title: filepath.Join(dir, name), params: p}
	}
	ref := func(name string) string { return "File[" + filepath.Join(dir, name) + "]" }
	tests := []struct {
		name      string
		rs        []res
		ran       []string
		refreshed map[string]string // exec → its refresh event's message
	}{
		{"notify runs a refreshonly exec once after its own sync", []res{
			file("a", "1", map[string]any{"notify": "Exec[x]"}),
			file("b", "1", map[string]any{"notify": "Exec[x]"}),
			appendExec("x", log, "x", map[string]any{"refreshonly": true}),
		}, []string{"x"}, map[string]string{"Exec[x]": "Triggered 'refresh' from 2 events"}},
		{"subscribe to a class hears any change inside it", []res{
			class("Conf", nil),
			{typ: "File", title: filepath.Join(dir, "c"), params: map[string]any{"ensure": "file", "content": "1"}, in: "Class[Conf]"},
			appendExec("x", log, "x", map[string]any{"refreshonly": true, "subscribe": "Class[Conf]"}),
		}, []string{"x"}, map[string]string{"Exec[x]": "Triggered 'refresh' from 1 event"}},
		{"notify to a class reaches what it holds", []res{
			class("Svc", nil),
			file("d", "1", map[string]any{"notify": "Class[Svc]"}),
			{typ: "Exec", title: "y", params: map[string]any{"command": "/bin/sh -c 'echo y >> " + log + "'", "refreshonly": true}, in: "Class[Svc]"},
		}, []string{"y"}, map[string]string{"Exec[y]": "Triggered 'refresh' from 1 event"}},
		{"class notifies class", []res{
			class("Conf", map[string]any{"notify": "Class[Svc]"}),
			class("Svc", nil),
			{typ: "File", title: filepath.Join(dir, "e"), params: map[string]any{"ensure": "file", "content": "1"}, in: "Class[Conf]"},
			{typ: "Exec", title: "z", params: map[string]any{"command": "/bin/sh -c 'echo z >> " + log + "'", "refreshonly": true}, in: "Class[Svc]"},
		}, []string{"z"}, map[string]string{"Exec[z]": "Triggered 'refresh' from 1 event"}},
		{"require carries no event", []res{
			file("f", "1", nil),
			appendExec("w", log, "w", map[string]any{"refreshonly": true, "require": ref("f")}),
		}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(log)
			data := build(t, tc.rs...)
			rep, _ := applied(t, data, catalog.Options{})
			assert.Equal(t, tc.ran, lines(t, log))
			for ref, msg := range tc.refreshed {
				s := status(t, rep, ref)
				require.Len(t, s.Events, 1)
				assert.Equal(t, msg, s.Events[0].Message)
				assert.Equal(t, "refresh", s.Events[0].Name)
				assert.True(t, s.Changed)
			}
			// A second run changes nothing and refreshes nothing.
			os.Remove(log)
			rep, _ = applied(t, data, catalog.Options{})
			assert.Equal(t, "unchanged", rep.Status)
			assert.Empty(t, lines(t, log))
		})
	}
}

func TestFailedDependenciesAreSkipped(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	rep, out := applied(t, build(t,
		class("Broken", nil),
		res{typ: "Exec", title: "fails", params: map[string]any{"command": "/bin/false"}, in: "Class[Broken]"},
		appendExec("after", log, "after", map[string]any{"require": "Class[Broken]"}),
		appendExec("after-after", log, "afterafter", map[string]any{"require": "Exec[after]"}),
		appendExec("unrelated", log, "unrelated", nil),
	), catalog.Options{})
	assert.Equal(t, "failed", rep.Status)
	assert.True(t, status(t, rep, "Exec[fails]").Failed)
	for _, ref := range []string{"Exec[after]", "Exec[after-after]"} {
		s := status(t, rep, ref)
		assert.True(t, s.Skipped, ref)
		assert.False(t, s.Failed, ref)
	}
	assert.Equal(t, []string{"unrelated"}, lines(t, log))
	assert.Contains(t, out, "/Stage[main]/Main/Exec[after]: Skipping because of failed dependencies")
	assert.Contains(t, out, "/Stage[main]/Main/Exec[after]: Dependency Exec[fails] has failures: true")
	assert.NotContains(t, out, "Main/Stage[main]", "a line of the walk about a resource names its path once")
	assert.Equal(t, 6, rep.ExitCode())
}

func TestPurgeLeavesManagedEntries(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "conf.d")
	require.NoError(t, os.MkdirAll(d, 0o755))
	for _, n := range []string{"managed.conf", "stray.conf"} {
		require.NoError(t, os.WriteFile(filepath.Join(d, n), []byte("old"), 0o644))
	}
	data := build(t,
		res{typ: "File", title: d, params: map[string]any{"ensure": "directory", "recurse": true, "purge": true}},
		res{typ: "File", title: filepath.Join(d, "managed.conf"), params: map[string]any{"ensure": "file", "content": "new"}},
		res{typ: "File", title: filepath.Join(d, "added.conf"), params: map[string]any{"ensure": "file", "content": "added"}},
	)
	rep, _ := applied(t, data, catalog.Options{})
	assert.Equal(t, "changed", rep.Status)
	got, err := os.ReadFile(filepath.Join(d, "managed.conf"))
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	assert.FileExists(t, filepath.Join(d, "added.conf"))
	assert.NoFileExists(t, filepath.Join(d, "stray.conf"))
	// Converged: nothing flaps.
	rep, _ = applied(t, data, catalog.Options{})
	assert.Equal(t, "unchanged", rep.Status)
	assert.FileExists(t, filepath.Join(d, "added.conf"))
}

func TestTags(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	rs := []res{
		{typ: "Exec", title: "web", params: map[string]any{"command": "/bin/sh -c 'echo web >> " + log + "'"}, tags: []string{"web"}},
		{typ: "Exec", title: "db", params: map[string]any{"command": "/bin/sh -c 'echo db >> " + log + "'"}, tags: []string{"db"}},
		{typ: "Exec", title: "both", params: map[string]any{"command": "/bin/sh -c 'echo both >> " + log + "'"}, tags: []string{"web", "db"}},
	}
	tests := []struct {
		name       string
		tags, skip []string
		want       []string
	}{
		{"tags", []string{"web"}, nil, []string{"web", "both"}},
		{"tags in other case", []string{"DB"}, nil, []string{"db", "both"}},
		{"skip_tags", nil, []string{"db"}, []string{"web"}},
		{"both", []string{"web"}, []string{"db"}, []string{"web"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(log)
			rep, _ := applied(t, build(t, rs...), catalog.Options{Tags: tc.tags, SkipTags: tc.skip})
			assert.Equal(t, tc.want, lines(t, log))
			for _, s := range rep.Statuses {
				applied := false
				for _, w := range tc.want {
					applied = applied || s.Title == w
				}
				assert.Equal(t, !applied, s.Skipped, s.Resource)
			}
		})
	}
}

func TestNoop(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	f := filepath.Join(dir, "f")
	rs := []res{
		{typ: "File", title: f, params: map[string]any{"ensure": "file", "content": "x", "notify": "Exec[x]"}},
		appendExec("x", log, "x", map[string]any{"refreshonly": true}),
	}
	t.Run("the run", func(t *testing.T) {
		rep, out := applied(t, build(t, rs...), catalog.Options{Noop: true})
		assert.NoFileExists(t, f)
		assert.Empty(t, lines(t, log))
		s := status(t, rep, "File["+f+"]")
		assert.False(t, s.Changed)
		assert.True(t, s.OutOfSync)
		require.NotEmpty(t, s.Events)
		assert.Equal(t, "noop", s.Events[0].Status)
		assert.Contains(t, out, "Exec[x]: Would have triggered 'refresh' from 1 event")
		assert.Equal(t, 0, rep.ExitCode())
	})
	t.Run("the metaparameter", func(t *testing.T) {
		rs := append([]res{}, rs...)
		rs[0].params = map[string]any{"ensure": "file", "content": "x", "notify": "Exec[x]", "noop": true}
		rep, _ := applied(t, build(t, rs...), catalog.Options{})
		assert.NoFileExists(t, f)
		assert.Empty(t, lines(t, log), "noop events refresh nothing")
		assert.Equal(t, "unchanged", rep.Status)
	})
}

func TestCycleIsRefusedAndNamed(t *testing.T) {
	data := build(t,
		res{typ: "Exec", title: "a", params: map[string]any{"command": "/bin/true", "require": "Exec[b]"}},
		res{typ: "Exec", title: "b", params: map[string]any{"command": "/bin/true", "require": "Class[C]"}},
		class("C", nil),
		res{typ: "Exec", title: "c", params: map[string]any{"command": "/bin/true", "require": "Exec[a]"}, in: "Class[C]"},
	)
	c, err := catalog.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	_, err = catalog.Build(c, applier.Default)
	var ce *catalog.CycleError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "Found 1 dependency cycle:")
	msg := err.Error()
	for _, ref := range []string{"Exec[a]", "Exec[b]", "Exec[c]", "Class[C]"} {
		assert.Contains(t, msg, ref)
	}
}

func TestUnknownRelationshipTarget(t *testing.T) {
	c, err := catalog.Parse(bytes.NewReader(build(t,
		res{typ: "Exec", title: "a", params: map[string]any{"command": "/bin/true", "require": "Exec[nope]"}})))
	require.NoError(t, err)
	_, err = catalog.Build(c, applier.Default)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Exec[nope]")

	// Puppet's words, whichever the relationship (recorded: puppet apply
	// --catalog with each of them says "Error: Failed to apply catalog:
	// Could not retrieve dependency 'Exec[nosuch]' of Exec[a]").
	for _, rel := range []string{"require", "before", "notify", "subscribe"} {
		c, err := catalog.Parse(bytes.NewReader(build(t,
			res{typ: "Exec", title: "a", params: map[string]any{"command": "/bin/true", rel: "Exec[nosuch]"}})))
		require.NoError(t, err)
		_, err = catalog.Build(c, applier.Default)
		assert.EqualError(t, err, "Could not retrieve dependency 'Exec[nosuch]' of Exec[a]", rel)
	}
}

func TestSensitiveIsNeverLogged(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "secret")
	secret := "hunter2-" + t.Name()
	data := build(t, res{typ: "File", title: f, params: map[string]any{
		"ensure": "file", "mode": "0600",
		"content": map[string]any{"__ptype": "Sensitive", "__pvalue": secret},
	}})
	require.NoError(t, os.WriteFile(f, []byte("old "+secret+"\n"), 0o600))
	rep, out := applied(t, data, catalog.Options{})
	got, err := os.ReadFile(f)
	require.NoError(t, err)
	assert.Equal(t, secret, string(got))
	assert.NotContains(t, out, secret)
	var yml bytes.Buffer
	require.NoError(t, rep.WriteYAML(&yml))
	assert.NotContains(t, yml.String(), secret)
	s := status(t, rep, "File["+f+"]")
	require.NotEmpty(t, s.Events)
	assert.Equal(t, "changed [redacted] to [redacted]", s.Events[0].Message)
}

func TestDeferredIsRefused(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	rep, out := applied(t, build(t,
		res{typ: "File", title: filepath.Join(dir, "f"), params: map[string]any{"ensure": "file",
			"content": map[string]any{"__ptype": "Deferred", "__pvalue": map[string]any{"name": "vault_lookup"}}}},
		appendExec("after", log, "after", map[string]any{"require": "File[" + filepath.Join(dir, "f") + "]"}),
	), catalog.Options{})
	s := status(t, rep, "File["+filepath.Join(dir, "f")+"]")
	assert.True(t, s.Failed)
	assert.Contains(t, out, "parameter content is a Deferred value")
	assert.True(t, status(t, rep, "Exec[after]").Skipped)
	assert.NoFileExists(t, filepath.Join(dir, "f"))
}

func TestContainmentPathInLogAndReport(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	rep, out := applied(t, build(t,
		class("Ssh::Server::Config", nil),
		res{typ: "File", title: f, params: map[string]any{"ensure": "file", "content": "x"}, in: "Class[Ssh::Server::Config]"},
	), catalog.Options{})
	assert.Contains(t, out, "/Stage[main]/Ssh::Server::Config/File["+f+"]/ensure: defined content as")
	var yml bytes.Buffer
	require.NoError(t, rep.WriteYAML(&yml))
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(yml.Bytes(), &doc))
	st := doc["resource_statuses"].(map[string]any)["File["+f+"]"].(map[string]any)
	assert.Equal(t, []any{"Stage[main]", "Ssh::Server::Config", "File[" + f + "]"}, st["containment_path"])
	assert.Equal(t, true, st["changed"])
	assert.Equal(t, "changed", doc["status"])
	ev := st["events"].([]any)[0].(map[string]any)
	assert.Equal(t, "file_created", ev["name"])
	assert.True(t, strings.HasPrefix(yml.String(), "--- !ruby/object:Puppet::Transaction::Report") || strings.HasPrefix(yml.String(), "!ruby/object:Puppet::Transaction::Report"))
	var sum bytes.Buffer
	require.NoError(t, rep.WriteSummary(&sum))
	var sdoc map[string]map[string]any
	require.NoError(t, yaml.Unmarshal(sum.Bytes(), &sdoc))
	assert.Equal(t, 1, sdoc["resources"]["changed"])
	assert.Equal(t, 1, sdoc["resources"]["total"])
}

func TestSchedule(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	state := filepath.Join(dir, "schedules.json")
	data := build(t,
		res{typ: "Schedule", title: "nightly", params: map[string]any{"period": "daily", "range": "2 - 4"}},
		appendExec("daily", log, "daily", map[string]any{"schedule": "daily"}),
		appendExec("never", log, "never", map[string]any{"schedule": "never"}),
		appendExec("always", log, "always", nil),
	)
	applied(t, data, catalog.Options{Schedules: state})
	assert.Equal(t, []string{"daily", "always"}, lines(t, log))
	os.Remove(log)
	applied(t, data, catalog.Options{Schedules: state})
	assert.Equal(t, []string{"always"}, lines(t, log), "daily ran already today")
}

// A dependency's failure is reported once, on the skipped resource's own
// containment path, when the failed resource is in the same class.
func TestFailedDependencyLineInSameClass(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	after := appendExec("after", log, "after", map[string]any{"require": "File[" + filepath.Join(dir, "f") + "]"})
	after.in = "Class[Acore]"
	rep, out := applied(t, build(t,
		class("Acore", nil),
		res{typ: "File", title: filepath.Join(dir, "f"), params: map[string]any{"source": filepath.Join(dir, "missing")}, in: "Class[Acore]"},
		after,
	), catalog.Options{})
	assert.Equal(t, "failed", rep.Status)
	assert.Contains(t, out, `msg="/Stage[main]/Acore/Exec[after]: Dependency File[`+filepath.Join(dir, "f")+`] has failures: true"`)
	assert.NotContains(t, out, "/Stage[main]/Acore/Stage[main]")
}
