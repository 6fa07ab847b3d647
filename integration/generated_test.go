package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// What a run generates counts as managed, as Puppet's generate and
// eval_generate make it (issue 35.1): a directory's recursion and purge
// leave alone the File a concat_file generates in it and everything
// below a more specific File of the catalog (Puppet's
// remove_less_specific_files), whatever order the walk takes them in;
// the second run changes nothing. Puppet 7, on the same catalog:
// `File[D/stray]/ensure: removed`, D/sub/inner kept, the concat target
// written once.
func TestCatalogPurgeKeepsGenerated(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "sites")
	target := filepath.Join(d, "15-default.conf")
	require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	for _, f := range []string{"stray", "sub/inner"} {
		require.NoError(t, os.WriteFile(filepath.Join(d, f), []byte("x\n"), 0o644))
	}
	log := filepath.Join(dir, "log")
	for _, first := range []string{"dir", "concat"} {
		t.Run("walked "+first+" first", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(d, "stray"), []byte("x\n"), 0o644))
			require.NoError(t, os.RemoveAll(target))
			require.NoError(t, os.RemoveAll(log))
			purged := [3]any{"File", d, map[string]any{"ensure": "directory", "recurse": true, "purge": true, "force": true, "notify": "Exec[restart]"}}
			concat := [3]any{"Concat_file", target, map[string]any{"path": target, "notify": "Exec[restart]"}}
			rs := [][3]any{purged, concat}
			if first == "concat" {
				rs = [][3]any{concat, purged}
			}
			rs = append(rs,
				[3]any{"Concat_fragment", "body", map[string]any{"target": target, "content": "<VirtualHost *:80>\n", "order": "10"}},
				[3]any{"File", filepath.Join(d, "sub"), map[string]any{"ensure": "directory"}},
				[3]any{"Exec", "restart", map[string]any{"command": "/bin/sh -c 'echo restarted >> " + log + "'", "refreshonly": true}},
			)
			cat := handCatalog(t, rs...)
			st, stderr := applyHand(t, cat, "--fallback", "none")
			assert.NoFileExists(t, filepath.Join(d, "stray"), stderr)
			assert.FileExists(t, filepath.Join(d, "sub", "inner"), "below a more specific File of the catalog: not the recursion's")
			data, err := os.ReadFile(target)
			require.NoError(t, err, stderr)
			assert.Equal(t, "<VirtualHost *:80>\n", string(data))
			assert.True(t, st["Exec[restart]"].Changed)

			st, stderr = applyHand(t, cat, "--fallback", "none")
			for ref, s := range st {
				assert.False(t, s.Changed, "second run: %s changed\n%s", ref, stderr)
			}
			assert.FileExists(t, target)
			data, _ = os.ReadFile(log)
			assert.Equal(t, "restarted\n", string(data), "restarted once, on the first run")
		})
	}
}

// The same through the pipe: a controller's declared run holds the File
// its concat_file generates, so the directory's purge leaves the target
// alone.
func TestDeclaredRunKeepsGenerated(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "sites")
	target := filepath.Join(d, "15-default.conf")
	s := newSession(t)
	decl := map[string]any{"op": "declare", "resources": []any{
		map[string]any{"type": "file", "title": d, "params": map[string]any{"ensure": "directory", "recurse": true, "purge": true}},
		map[string]any{"type": "concat_file", "title": target},
		map[string]any{"type": "concat_fragment", "title": "body", "params": map[string]any{"target": target, "content": "x\n"}},
	}}
	line, err := json.Marshal(decl)
	require.NoError(t, err)
	res, raw := s.sendLine(string(line))
	require.False(t, res.Failed, raw)
	for i := 0; i < 2; i++ {
		res = s.apply("file", d, "{ensure: directory, recurse: true, purge: true}")
		require.False(t, res.Failed, res.Exception)
		res = s.apply("concat_file", target, "{}")
		require.False(t, res.Failed, res.Exception)
	}
	res = s.apply("file", d, "{ensure: directory, recurse: true, purge: true}")
	assert.False(t, res.Changed, "the purge leaves the concat target alone: %+v", res.Events)
	res = s.apply("concat_file", target, "{}")
	assert.False(t, res.Changed, "the target stays written: %+v", res.Events)
}

// generatedCases put the machine where Puppet's recorded runs of
// testdata/generated started (the same paths: the reports name them).
var generatedCases = map[string]func(t *testing.T){
	"purge": func(t *testing.T) {
		writeTree(t, "/tmp/pippet-gen-cases/purge", map[string]string{
			"d/a": "a\n", "d/b": "b\n", "d/sub/c": "c\n", "d/keep": "k\n", "d/kept/inner": "i\n"})
	},
	"source": func(t *testing.T) {
		writeTree(t, "/tmp/pippet-gen-cases/source", map[string]string{
			"src/x": "x\n", "src/y/z": "z\n", "dst/x": "old\n", "dst/w": "w\n"})
		require.NoError(t, os.Chmod("/tmp/pippet-gen-cases/source/dst/x", 0o600))
	},
	"sshkeys": func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("creates the account pipgensk: root only")
		}
		_ = exec.Command("userdel", "-r", "pipgensk").Run()
		t.Cleanup(func() { _ = exec.Command("userdel", "-r", "pipgensk").Run() })
		out, err := exec.Command("useradd", "-m", "-d", "/home/pipgensk", "pipgensk").CombinedOutput()
		require.NoError(t, err, string(out))
		ssh := "/home/pipgensk/.ssh"
		require.NoError(t, os.Mkdir(ssh, 0o700))
		keys := filepath.Join(ssh, "authorized_keys")
		require.NoError(t, os.WriteFile(keys, []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKept kept@host\nssh-rsa AAAAB3NzaStray stray@host\n"), 0o600))
		out, err = exec.Command("chown", "-R", "pipgensk:", ssh).CombinedOutput()
		require.NoError(t, err, string(out))
	},
	"tidy": func(t *testing.T) {
		writeTree(t, "/tmp/pippet-gen-cases/tidy", map[string]string{
			"d/a.log": "a\n", "d/keep.log": "b\n", "d/t.txt": "t\n"})
	},
}

// writeTree makes root anew holding files (path relative to root:
// content), mode 0644 in directories 0755.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(root))
	for rel, content := range files {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	t.Cleanup(func() { os.RemoveAll(root) })
}

// puppetMembers is what testdata/generated keeps of Puppet's report
// (recorded with puppet apply --lastrunreport, converted member by
// member; puppet apply's own Schedule and Filebucket statuses left out
// of the statuses and of the total).
type puppetMembers struct {
	Status   string                    `json:"status"`
	Statuses map[string]map[string]any `json:"statuses"`
	Logs     []map[string]any          `json:"logs"`
	Metrics  map[string]map[string]any `json:"metrics"`
}

// TestGeneratedReportedAsPuppet: the resources a run generates (a
// recursion's and a purge's children, with and without a source, in
// noop too, tidy's, and the keys a user's purge_ssh_keys removes) are
// reported as Puppet reports them, member by
// member: each child a status of its own with its containment path, tags,
// provider, flags and counts, and its events (property, values, message,
// name, status); the directory and the tidy unchanged; the log lines
// (level, source, message, tags) and the resource, event and change
// metrics. Run 2 as Puppet's run 2. The catalogs were compiled by Puppet
// 7 from NAME.pp, Puppet's runs recorded with `puppet apply --catalog
// NAME.catalog.json --lastrunreport` and converted by members.py.
func TestGeneratedReportedAsPuppet(t *testing.T) {
	for _, c := range []struct{ name, run string }{
		{"purge", "run1"}, {"purge", "run2"}, {"purge", "noop"},
		{"source", "run1"}, {"source", "run2"},
		{"tidy", "run1"}, {"tidy", "run2"},
		{"sshkeys", "run1"}, {"sshkeys", "run2"}, {"sshkeys", "noop"},
	} {
		t.Run(c.name+" "+c.run, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/generated", c.name+"."+c.run+".json"))
			require.NoError(t, err)
			var want puppetMembers
			require.NoError(t, json.Unmarshal(data, &want))
			generatedCases[c.name](t)
			state := t.TempDir()
			cat := filepath.Join("testdata/generated", c.name+".catalog.json")
			apply := func(args ...string) puppetMembers {
				report := filepath.Join(t.TempDir(), "report.yaml")
				argv := append([]string{"apply", "--state-dir", state, "--fallback", "none", "--lastrunreport", report}, args...)
				out, err := exec.Command(receiverBin, append(argv, cat)...).CombinedOutput()
				require.NoError(t, err, string(out))
				return readMembers(t, report)
			}
			var got puppetMembers
			switch c.run {
			case "run1":
				got = apply()
			case "run2":
				apply()
				got = apply()
			case "noop":
				got = apply("--noop")
			}
			assert.Equal(t, want.Status, got.Status, "status")
			for ref := range got.Statuses {
				_, ok := want.Statuses[ref]
				assert.True(t, ok, "we report %s, Puppet does not", ref)
			}
			for ref, ws := range want.Statuses {
				gs, ok := got.Statuses[ref]
				if !assert.True(t, ok, "Puppet reports %s, we do not", ref) {
					continue
				}
				for k, wv := range ws {
					if k == "events" {
						continue
					}
					assert.Equal(t, wv, gs[k], "%s: %s", ref, k)
				}
				wevs, _ := ws["events"].([]any)
				gevs, _ := gs["events"].([]any)
				if !assert.Len(t, gevs, len(wevs), "%s: events %v", ref, gevs) {
					continue
				}
				for i, we := range wevs {
					we, ge := we.(map[string]any), gevs[i].(map[string]any)
					for k, wv := range we {
						if we["property"] == "content" && k == "desired_value" {
							// Puppet's desired value is the digest in base64
							// (its binary string), not the digest; the
							// message holds both digests.
							continue
						}
						assert.Equal(t, wv, ge[k], "%s: event %d %s", ref, i, k)
					}
				}
			}
			if c.run == "noop" {
				// The resources' lines; Puppet's noop lines of its
				// containers and of the sentinel after a recursion
				// ("Class[Main]: Would have triggered 'refresh' from 2
				// events") pippet does not print (docs/compatibility.md).
				want.Logs, got.Logs = resourceLines(want.Logs), resourceLines(got.Logs)
			}
			if c.name == "tidy" {
				// Puppet logs "Tidying 1 files" when it generates the
				// tidy's Files, before the walk; pippet when the walk
				// reaches the tidy (docs/compatibility.md).
				want.Logs, got.Logs = sortedLines(want.Logs), sortedLines(got.Logs)
			}
			if len(want.Logs)+len(got.Logs) > 0 {
				assert.Equal(t, want.Logs, got.Logs, "logs")
			}
			for _, m := range []string{"resources", "events", "changes"} {
				for k, wv := range want.Metrics[m] {
					assert.Equal(t, wv, got.Metrics[m][k], "metrics %s %s", m, k)
				}
			}
		})
	}
}

// resourceLines are the lines about a resource of the catalog.
func resourceLines(logs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range logs {
		if src, _ := l["source"].(string); strings.HasPrefix(src, "/Stage[") {
			out = append(out, l)
		}
	}
	return out
}

// sortedLines are the lines in the order of their source and message.
func sortedLines(logs []map[string]any) []map[string]any {
	out := append([]map[string]any{}, logs...)
	sort.SliceStable(out, func(i, j int) bool {
		return fmt.Sprint(out[i]["source"], out[i]["message"]) < fmt.Sprint(out[j]["source"], out[j]["message"])
	})
	return out
}

// readMembers reads our report as testdata/generated keeps Puppet's.
func readMembers(t *testing.T, report string) puppetMembers {
	t.Helper()
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var doc struct {
		Status   string                    `yaml:"status"`
		Statuses map[string]map[string]any `yaml:"resource_statuses"`
		Logs     []map[string]any          `yaml:"logs"`
		Metrics  map[string]struct {
			Values [][]any `yaml:"values"`
		} `yaml:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	out := puppetMembers{Status: doc.Status, Statuses: map[string]map[string]any{}, Metrics: map[string]map[string]any{}}
	for ref, s := range doc.Statuses {
		out.Statuses[ref] = s
	}
	for _, l := range doc.Logs {
		msg, _ := l["message"].(string)
		if strings.HasPrefix(msg, "Applied catalog in") || strings.HasPrefix(msg, "Compiled catalog for") {
			continue
		}
		out.Logs = append(out.Logs, map[string]any{"level": l["level"], "source": l["source"], "message": l["message"], "tags": l["tags"]})
	}
	for name, m := range doc.Metrics {
		vals := map[string]any{}
		for _, v := range m.Values {
			if len(v) == 3 {
				vals[fmt.Sprint(v[0])] = v[2]
			}
		}
		out.Metrics[name] = vals
	}
	// The same types as the JSON of Puppet's side (numbers as float64).
	data, err = json.Marshal(out)
	require.NoError(t, err)
	var norm puppetMembers
	require.NoError(t, json.Unmarshal(data, &norm))
	return norm
}

// Issue 36.3: tidy never removes a file the run manages, in a catalog
// (Puppet: "Tidying 1 files", keep.log kept and written once) and in a
// controller's declared run; the second run changes nothing.
func TestTidyKeepsManaged(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep.log")
	reset := func() {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.log"), []byte("a\n"), 0o644))
		require.NoError(t, os.WriteFile(keep, []byte("b\n"), 0o644))
	}
	t.Run("catalog", func(t *testing.T) {
		reset()
		cat := handCatalog(t,
			[3]any{"File", keep, map[string]any{"content": "kept\n"}},
			[3]any{"Tidy", dir, map[string]any{"recurse": true, "matches": "*.log"}})
		st, stderr := applyHand(t, cat, "--fallback", "none")
		assert.Contains(t, stderr, "Tidying 1 files")
		assert.NoFileExists(t, filepath.Join(dir, "a.log"))
		data, err := os.ReadFile(keep)
		require.NoError(t, err, stderr)
		assert.Equal(t, "kept\n", string(data))
		assert.True(t, st["File["+filepath.Join(dir, "a.log")+"]"].Changed, "the tidied file reported as Puppet's generated File")
		st, stderr = applyHand(t, cat, "--fallback", "none")
		for ref, s := range st {
			assert.False(t, s.Changed, "second run: %s changed\n%s", ref, stderr)
		}
		assert.FileExists(t, keep)
	})
	t.Run("declared run", func(t *testing.T) {
		reset()
		s := newSession(t)
		line, err := json.Marshal(map[string]any{"op": "declare", "resources": []any{
			map[string]any{"type": "file", "title": keep, "params": map[string]any{"content": "kept\n"}},
			map[string]any{"type": "tidy", "title": dir, "params": map[string]any{"recurse": true, "matches": "*.log"}},
		}})
		require.NoError(t, err)
		res, raw := s.sendLine(string(line))
		require.False(t, res.Failed, raw)
		res = s.apply("file", keep, "{content: \"kept\\n\"}")
		require.False(t, res.Failed, res.Exception)
		res = s.apply("tidy", dir, "{recurse: true, matches: '*.log'}")
		require.True(t, res.Changed, "%+v", res)
		require.Len(t, res.Events, 1, "a.log only: %+v", res.Events)
		assert.FileExists(t, keep)
		res = s.apply("file", keep, "{content: \"kept\\n\"}")
		assert.False(t, res.Changed, "%+v", res.Events)
		res = s.apply("tidy", dir, "{recurse: true, matches: '*.log'}")
		assert.False(t, res.Changed, "%+v", res.Events)
	})
}

// Issue 36.4: a user's purge_ssh_keys leaves the keys the catalog
// manages with ssh_authorized_key alone, and purges the others; the
// second run changes nothing (before: the managed key was purged and
// written again every run).
func TestPurgeSSHKeysKeepsManaged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creates an account: root only")
	}
	const name = "pipgen36"
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755)) // the user passes through to its home
	}
	home := filepath.Join(base, name)
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	_ = exec.Command("userdel", name).Run()
	cat := handCatalog(t,
		[3]any{"User", name, map[string]any{"ensure": "present", "home": home, "managehome": true, "purge_ssh_keys": true}},
		[3]any{"Ssh_authorized_key", "kept@host", map[string]any{"user": name, "type": "ssh-ed25519", "key": "AAAAC3NzaC1lZDI1NTE5AAAAIKept"}},
	)
	_, stderr := applyHand(t, cat, "--fallback", "none")
	file := filepath.Join(home, ".ssh", "authorized_keys")
	data, err := os.ReadFile(file)
	require.NoError(t, err, stderr)
	require.Contains(t, string(data), "kept@host")
	// A stray key appears; the run purges it and keeps the managed one.
	require.NoError(t, os.WriteFile(file, append(data, []byte("ssh-rsa AAAAB3NzaStray stray@host\n")...), 0o600))
	st, stderr := applyHand(t, cat, "--fallback", "none")
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "stray@host", stderr)
	assert.Contains(t, string(data), "kept@host")
	assert.False(t, st["Ssh_authorized_key[kept@host]"].Changed, "the managed key is not written again\n%s", stderr)
	st, stderr = applyHand(t, cat, "--fallback", "none")
	for ref, s := range st {
		assert.False(t, s.Changed, "third run: %s changed\n%s", ref, stderr)
	}
}

// A purge without force keeps a directory below it: its child File says
// so on the log, as Puppet does, and is reported unchanged, where Puppet
// reports `ensure: removed` for a directory it kept
// (docs/compatibility.md); the files below it are children of their own,
// removed.
func TestPurgeWithoutForceIsTruthful(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "s"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s", "f"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g"), []byte("y\n"), 0o644))
	cat := handCatalog(t, [3]any{"File", dir, map[string]any{"ensure": "directory", "recurse": true, "purge": true}})
	st, stderr := applyHand(t, cat, "--fallback", "none")
	assert.Contains(t, stderr, "/Stage[main]/Main/File["+filepath.Join(dir, "s")+"]: Not removing directory; use 'force' to override")
	assert.DirExists(t, filepath.Join(dir, "s"))
	kept, ok := st["File["+filepath.Join(dir, "s")+"]"]
	require.True(t, ok, "the kept directory is a child of its own: %v", st)
	assert.False(t, kept.Changed)
	assert.True(t, st["File["+filepath.Join(dir, "g")+"]"].Changed)
	assert.True(t, st["File["+filepath.Join(dir, "s", "f")+"]"].Changed)
	assert.False(t, st["File["+dir+"]"].Changed)
}
