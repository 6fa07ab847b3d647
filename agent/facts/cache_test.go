package facts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/internal/testutil"
)

// Facter's fact cache (cache.go), against the real Facter: its cache
// directory is fixed (/var/cache/facter/facts on Debian), so the tests
// that share it with Facter hold a machine lock and use fact names of
// their own.

// facterCacheDir is Debian's Facter's cache directory.
var facterCacheDir = facts.FacterLocations[0].CacheDir

// ttlConf writes a facter.conf caching each of names for ttl.
func ttlConf(t *testing.T, ttl string, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# written by a test\nfacts : {\n  ttls : [\n")
	for _, n := range names {
		fmt.Fprintf(&b, "    { %q : %s },\n", n, ttl)
	}
	b.WriteString("  ]\n}\n")
	return writeFile(t, t.TempDir(), "facter.conf", b.String(), 0o644)
}

// counterFact writes NAME.rb, a custom fact whose command appends a line
// to a counter file and prints value; it returns the counter's path.
func counterFact(t *testing.T, dir, name, value string) string {
	t.Helper()
	counter := filepath.Join(t.TempDir(), name+".count")
	writeFile(t, dir, name+".rb", fmt.Sprintf(`Facter.add(:%s) do
  setcode do
    Facter::Core::Execution.execute("sh -c 'echo run >> %s; echo %s'")
  end
end
`, name, counter, value), 0o644)
	return counter
}

// runs is how many times a counter says its command ran.
func runs(t *testing.T, counter string) int {
	t.Helper()
	b, err := os.ReadFile(counter)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return bytes.Count(b, []byte("run\n"))
}

// uniqueName is a fact name no other test (or site) caches.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), rand.Intn(1e9))
}

// gatherCached gathers with the custom dirs and the facter.conf conf.
func gatherCached(t *testing.T, o facts.Options) facts.Facts {
	t.Helper()
	f, errs := facts.Gather(context.Background(), o)
	for _, e := range errs {
		t.Logf("gather: %v", e)
	}
	return f
}

// cacheFile reads a cache file's JSON.
func cacheFile(t *testing.T, dir, group string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, group))
	require.NoError(t, err, "cache file of %s", group)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

// age makes a cache file older by d.
func age(t *testing.T, p string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	require.NoError(t, os.Chtimes(p, then, then))
}

// TestTTLSecondsAsFacter: the ttl units and their arithmetic are Facter's
// (its FactGroups#ttls_to_seconds, asked the same), and an unknown unit
// is an error in Facter's words.
func TestTTLSecondsAsFacter(t *testing.T) {
	needFacter(t)
	cases := []string{"1 hour", "30 days", "3600 seconds", "10", "2 h", "90 m", "1.5 hours", "5000 ms",
		"7 d", "45 s", "1 minute", "2 day", "30  days", " 3 hours", "x days", "2500000 us", "3000000000 ns",
		"2 fortnight", "1 hours x", "5 mins", "30 days "}
	script := `require 'facter'; require 'json'
g = Facter::FactGroups.new
out = {}
ARGV.each { |s| out[s] = g.send(:ttls_to_seconds, s) }
puts 'ANSWER ' + JSON.generate(out)`
	cmd := exec.Command("ruby", append([]string{"-e", script}, cases...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	// Facter logs its errors to stdout here, before the answer.
	logged, answer, ok := strings.Cut(string(out), "ANSWER ")
	require.True(t, ok, "%s", out)
	stderr.WriteString(logged)
	var want map[string]*int64
	require.NoError(t, json.Unmarshal([]byte(answer), &want))
	for _, c := range cases {
		got, err := facts.TTLSeconds(c)
		if want[c] == nil {
			require.Error(t, err, "%q: Facter could not parse it", c)
			assert.Contains(t, stderr.String(), err.Error(), "%q: Facter's words", c)
			continue
		}
		require.NoError(t, err, "%q", c)
		assert.Equal(t, *want[c], got, "%q", c)
	}
}

// TestCacheTablesAreFacters: the fact groups and the core facts' cache
// names pippet carries are those of the Facter installed.
func TestCacheTablesAreFacters(t *testing.T) {
	needFacter(t)
	empty := t.TempDir()
	out, err := exec.Command("facter", "--list-cache-groups", "--external-dir", empty).Output()
	require.NoError(t, err)
	embedded, err := os.ReadFile("facter_cache_groups.txt")
	require.NoError(t, err)
	assert.Equal(t, string(out), string(embedded), "facter --list-cache-groups")

	script := `require 'facter'
Facter::Options.init
Facter::FactLoader.instance.load_internal_facts([], Facter::Options.get).each { |f| puts f.name }`
	out, err = exec.Command("ruby", "-e", script).Output()
	require.NoError(t, err)
	leaves, err := os.ReadFile("facter_leaves.txt")
	require.NoError(t, err)
	assert.ElementsMatch(t, strings.Fields(string(out)), strings.Fields(string(leaves)), "Facter's core facts")
}

// TestCacheRubyFact: a cached Ruby custom fact is not evaluated again
// within its ttl (no Ruby starts: FacterArgs is empty), and is once the
// cache file is older than the ttl, which is then written again.
func TestCacheRubyFact(t *testing.T) {
	needFacter(t)
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	name := uniqueName("ttl_ruby")
	counter := counterFact(t, dir, name, "hello")
	o := facts.Options{CustomDirs: []string{dir}, ExternalDirs: []string{}, FacterConf: ttlConf(t, "1 hour", name), CacheDir: cache}

	f := gatherCached(t, o)
	assert.Equal(t, "hello", f[name])
	assert.Equal(t, 1, runs(t, counter))
	assert.Equal(t, map[string]any{name: "hello", "cache_format_version": 1.0}, cacheFile(t, cache, name))
	fi, err := os.Stat(filepath.Join(cache, name))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	di, err := os.Stat(cache)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), di.Mode().Perm())

	assert.Empty(t, facts.FacterArgs(o), "every Ruby fact is cached: nothing for Facter")
	f = gatherCached(t, o)
	assert.Equal(t, "hello", f[name], "from the cache")
	assert.Equal(t, 1, runs(t, counter), "within the ttl: not evaluated")
	fi2, err := os.Stat(filepath.Join(cache, name))
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime(), fi2.ModTime(), "a valid file holding the fact is left as it is")

	// A cached false counts as not cached (as Facter reads it); the file,
	// which holds the fact, is left as it is.
	p := filepath.Join(cache, name)
	require.NoError(t, os.WriteFile(p, []byte(`{"`+name+`": false, "cache_format_version": 1}`), 0o644))
	f = gatherCached(t, o)
	assert.Equal(t, "hello", f[name])
	assert.Equal(t, 2, runs(t, counter), "false: resolved")
	assert.Equal(t, false, cacheFile(t, cache, name)[name])
	require.NoError(t, os.WriteFile(p, []byte(`{"`+name+`": "cached"}`), 0o644))
	f = gatherCached(t, o)
	assert.Equal(t, "hello", f[name], "no cache_format_version: resolved")
	assert.Equal(t, 3, runs(t, counter))
	assert.Equal(t, map[string]any{name: "hello", "cache_format_version": 1.0}, cacheFile(t, cache, name), "deleted, cached anew")
	require.NoError(t, os.WriteFile(p, []byte(`{"`+name+`": null, "cache_format_version": 1}`), 0o644))
	gatherCached(t, o)
	assert.Equal(t, 4, runs(t, counter), "null: resolved")
	require.NoError(t, os.WriteFile(p, []byte(`{"another": "x", "cache_format_version": 1}`), 0o644))
	f = gatherCached(t, o)
	assert.Equal(t, "hello", f[name])
	assert.Equal(t, 5, runs(t, counter), "without the fact: resolved")
	assert.Equal(t, map[string]any{name: "hello", "cache_format_version": 1.0}, cacheFile(t, cache, name), "deleted, cached anew")
	fi, err = os.Stat(p)
	require.NoError(t, err)
	age(t, p, 0) // the file's time: now

	// Expired: evaluated again, and cached anew.
	age(t, filepath.Join(cache, name), 2*time.Hour)
	assert.NotEmpty(t, facts.FacterArgs(o), "expired: Facter evaluates it")
	f = gatherCached(t, o)
	assert.Equal(t, "hello", f[name])
	assert.Equal(t, 6, runs(t, counter), "after expiry: evaluated again")
	fi, err = os.Stat(filepath.Join(cache, name))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), fi.ModTime(), time.Minute, "written again")
	gatherCached(t, o)
	assert.Equal(t, 6, runs(t, counter))
}

// haproxyFake puts Debian's haproxy module's known fact file in a custom
// directory and a fake haproxy counting its runs first in PATH.
func haproxyFake(t *testing.T) (dir string, env []string, counter string) {
	t.Helper()
	dir, bin := t.TempDir(), t.TempDir()
	counter = filepath.Join(t.TempDir(), "haproxy.count")
	debianFactFile(t, dir, "haproxy", "haproxy_version.rb")
	writeFile(t, bin, "haproxy", "#!/bin/sh\necho run >> "+counter+"\necho 'HAProxy version 2.6.12-1 2023/03/20 - https://haproxy.org/'\n", 0o755)
	return dir, pathWith(bin), counter
}

// TestCacheNativeFact: a cached fact of a file pippet resolves natively
// is not resolved again (its command not run) within the ttl, and is
// after it; no Ruby runs at all.
func TestCacheNativeFact(t *testing.T) {
	dir, env, counter := haproxyFake(t)
	cache := filepath.Join(t.TempDir(), "facts")
	o := nativeOptions(t, dir)
	o.Env, o.ExternalDirs = env, []string{}
	o.FacterConf, o.CacheDir = ttlConf(t, "1 hour", "haproxy_version"), cache

	f := gatherCached(t, o)
	assert.Equal(t, "2.6.12", f["haproxy_version"])
	assert.Equal(t, 1, runs(t, counter))
	f = gatherCached(t, o)
	assert.Equal(t, "2.6.12", f["haproxy_version"])
	assert.Equal(t, 1, runs(t, counter), "within the ttl: haproxy -v not run")

	age(t, filepath.Join(cache, "haproxy_version"), 61*time.Minute)
	f = gatherCached(t, o)
	assert.Equal(t, "2.6.12", f["haproxy_version"])
	assert.Equal(t, 2, runs(t, counter), "after expiry: run again")
}

// TestCacheExternalFile: a cached executable external fact is not run
// within its ttl (the ttl names the file, as in Facter).
func TestCacheExternalFile(t *testing.T) {
	ext, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	counter := filepath.Join(t.TempDir(), "count")
	writeFile(t, ext, "myscript.sh", "#!/bin/sh\necho run >> "+counter+"\necho ext_a=1\necho ext_b=two\n", 0o755)
	o := facts.Options{ExternalDirs: []string{ext}, FacterConf: ttlConf(t, `"1 hour"`, "myscript.sh"), CacheDir: cache}
	for i := 0; i < 3; i++ {
		f := gatherCached(t, o)
		assert.Equal(t, "1", f["ext_a"])
		assert.Equal(t, "two", f["ext_b"])
	}
	assert.Equal(t, 1, runs(t, counter))
	assert.Equal(t, map[string]any{"ext_a": "1", "ext_b": "two", "cache_format_version": 1.0}, cacheFile(t, cache, "myscript.sh"))
}

// facterJSON runs the real facter with conf and custom dir, asking for
// names; its output (JSON) and stderr.
func facterJSON(t *testing.T, conf, custom string, env []string, names ...string) (map[string]any, string) {
	t.Helper()
	args := append([]string{"--json", "--config", conf, "--external-dir", t.TempDir()}, names...)
	if custom != "" {
		args = append([]string{"--custom-dir", custom}, args...)
	}
	cmd := exec.Command("facter", args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output() // its status may speak of other facts
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m), "facter: %s %s", out, stderr.String())
	return m, stderr.String()
}

// facterCache holds Facter's cache directory for the test and removes
// the test's groups from it at the end.
func facterCache(t *testing.T, groups ...string) {
	t.Helper()
	needFacter(t)
	if os.Geteuid() != 0 {
		t.Skip("Facter's cache directory is root's")
	}
	testutil.MachineLock(t, "facter-cache")
	rm := func() {
		for _, g := range groups {
			os.Remove(filepath.Join(facterCacheDir, g))
		}
	}
	rm()
	t.Cleanup(rm)
}

// TestCacheSharedWithFacter: pippet reads the cache the real Facter
// wrote (its commands not run), and Facter reads the one pippet wrote,
// for a Ruby fact, a native one, and core facts: a value edited in
// the cache file shows in the other's answer.
func TestCacheSharedWithFacter(t *testing.T) {
	rubyName, extFile := uniqueName("ttl_shared"), uniqueName("ttl_ext")+".sh"
	extFact := strings.TrimSuffix(extFile, ".sh")
	groups := []string{rubyName, "haproxy_version", "timezone", "operating system", extFile}
	facterCache(t, groups...)
	dir, env, hcounter := haproxyFake(t)
	rcounter := counterFact(t, dir, rubyName, "shared")
	ext := t.TempDir()
	ecounter := filepath.Join(t.TempDir(), "ext.count")
	writeFile(t, ext, extFile, "#!/bin/sh\necho run >> "+ecounter+"\necho "+extFact+"=external\n", 0o755)
	conf := ttlConf(t, `"1 hour"`, groups...)
	o := nativeOptions(t, dir)
	o.Ruby = "" // the Ruby fact is Facter's to evaluate
	o.Env, o.ExternalDirs, o.FacterConf = env, []string{ext}, conf
	query := []string{rubyName, "haproxy_version", "timezone", "os", extFact}

	// Facter first, pippet reads.
	ff, _ := facterJSON(t, conf, dir, env, append([]string{"--external-dir", ext}, query...)...)
	require.Equal(t, "shared", ff[rubyName])
	require.Equal(t, "2.6.12", ff["haproxy_version"])
	require.Equal(t, "external", ff[extFact])
	require.Equal(t, 1, runs(t, rcounter))
	require.Equal(t, 1, runs(t, hcounter))
	require.Equal(t, 1, runs(t, ecounter))
	facterWrote := map[string][]byte{}
	for _, g := range []string{rubyName, "haproxy_version", "timezone", extFile} {
		b, err := os.ReadFile(filepath.Join(facterCacheDir, g))
		require.NoError(t, err)
		facterWrote[g] = b
	}
	edit(t, "timezone", "timezone", "Cached/Zone")
	edit(t, "operating system", "os.distro.codename", "cached-codename")
	pf := gatherCached(t, o)
	assert.Equal(t, "shared", pf[rubyName])
	assert.Equal(t, "2.6.12", pf["haproxy_version"])
	assert.Equal(t, 1, runs(t, rcounter), "pippet read Facter's cache of the Ruby fact")
	assert.Equal(t, 1, runs(t, hcounter), "pippet read Facter's cache of the native fact")
	assert.Equal(t, "Cached/Zone", pf["timezone"])
	codename, _ := pf.Get("os.distro.codename")
	assert.Equal(t, "cached-codename", codename)
	assert.Equal(t, "external", pf[extFact])
	assert.Equal(t, 1, runs(t, ecounter), "pippet read Facter's cache of the external fact file")

	// pippet first, Facter reads.
	for _, g := range groups {
		require.NoError(t, os.Remove(filepath.Join(facterCacheDir, g)))
	}
	pf = gatherCached(t, o)
	assert.Equal(t, 2, runs(t, rcounter))
	assert.Equal(t, 2, runs(t, hcounter))
	assert.Equal(t, 2, runs(t, ecounter))
	for g, want := range facterWrote {
		b, err := os.ReadFile(filepath.Join(facterCacheDir, g))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(b), "pippet's %s file is Facter's, byte for byte", g)
	}
	edit(t, "timezone", "timezone", "Pippet/Zone")
	// Facter runs haproxy_version.rb's command when it loads the file
	// (outside its setcode), cached or not: its value shows it read the
	// cache.
	edit(t, "haproxy_version", "haproxy_version", "9.9.9-cached")
	edit(t, "operating system", "os.distro.codename", "pippet-codename")
	ff, _ = facterJSON(t, conf, dir, env, append([]string{"--external-dir", ext}, query...)...)
	assert.Equal(t, "external", ff[extFact])
	assert.Equal(t, 2, runs(t, ecounter), "Facter read pippet's cache of the external fact file")
	assert.Equal(t, pf[rubyName], ff[rubyName])
	assert.Equal(t, "9.9.9-cached", ff["haproxy_version"], "Facter read pippet's cache of the native fact")
	assert.Equal(t, 2, runs(t, rcounter), "Facter read pippet's cache of the Ruby fact")
	assert.Equal(t, "Pippet/Zone", ff["timezone"])
	assert.Equal(t, "pippet-codename", ff["os"].(map[string]any)["distro"].(map[string]any)["codename"])
	// Every other fact of the group Facter took from pippet's file as it is.
	pos, _ := pf.Get("os")
	pos.(map[string]any)["distro"].(map[string]any)["codename"] = "pippet-codename"
	assert.Equal(t, pos, ff["os"])
}

// edit sets key in group's cache file (of Facter's directory) to v.
func edit(t *testing.T, group, key string, v any) {
	t.Helper()
	p := filepath.Join(facterCacheDir, group)
	m := cacheFile(t, facterCacheDir, group)
	require.Contains(t, m, key, "%s caches %s", group, key)
	m[key] = v
	b, err := json.Marshal(m)
	require.NoError(t, err)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
}

// TestCacheCorruptFile: a cache file that is not JSON is, for pippet as
// for Facter, deleted without a word and the fact resolved again (its
// command run), then cached anew.
func TestCacheCorruptFile(t *testing.T) {
	name := uniqueName("ttl_corrupt")
	facterCache(t, name)
	dir := t.TempDir()
	counter := counterFact(t, dir, name, "fresh")
	conf := ttlConf(t, `"1 hour"`, name)
	p := filepath.Join(facterCacheDir, name)
	o := facts.Options{CustomDirs: []string{dir}, ExternalDirs: []string{}, FacterConf: conf}

	for i, who := range []string{"facter", "pippet"} {
		require.NoError(t, os.MkdirAll(facterCacheDir, 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{not json"), 0o644))
		if who == "facter" {
			ff, stderr := facterJSON(t, conf, dir, os.Environ(), name)
			assert.Equal(t, "fresh", ff[name])
			assert.NotContains(t, stderr, name, "Facter says nothing of the corrupt file")
		} else {
			f, errs := facts.Gather(context.Background(), o)
			assert.Equal(t, "fresh", f[name])
			for _, e := range errs {
				assert.NotContains(t, e.Error(), name, "nothing said of the corrupt file")
			}
		}
		assert.Equal(t, i+1, runs(t, counter), "%s resolved it again", who)
		assert.Equal(t, map[string]any{name: "fresh", "cache_format_version": 1.0}, cacheFile(t, facterCacheDir, name), "%s cached it anew", who)
	}
}

// TestCacheUnknownUnit: a ttl of a unit Facter does not know is Facter's
// error, word for word, and the fact is not cached.
func TestCacheUnknownUnit(t *testing.T) {
	needFacter(t)
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	name := uniqueName("ttl_unit")
	counter := counterFact(t, dir, name, "v")
	conf := ttlConf(t, `"2 fortnight"`, name)
	_, stderr := facterJSON(t, conf, dir, os.Environ(), name)
	require.Contains(t, stderr, "Could not parse time unit fortnights")

	o := facts.Options{CustomDirs: []string{dir}, ExternalDirs: []string{}, FacterConf: conf, CacheDir: cache}
	for i := 0; i < 2; i++ {
		f, errs := facts.Gather(context.Background(), o)
		assert.Equal(t, "v", f[name])
		var said []string
		for _, e := range errs {
			if strings.Contains(e.Error(), "Could not parse") {
				said = append(said, e.Error())
				var w *facts.CacheWarning
				assert.False(t, errors.As(e, &w), "an error, as Facter's")
				_, sentence, _ := strings.Cut(e.Error(), "): ")
				assert.Contains(t, stderr, sentence, "Facter's words")
			}
		}
		assert.Len(t, said, 1, "one error")
	}
	assert.Equal(t, 3, runs(t, counter), "not cached")
	assert.NoFileExists(t, filepath.Join(cache, name))

	// A facter.conf that does not parse: Facter's warning, no cache.
	broken := writeFile(t, t.TempDir(), "facter.conf", `facts : { ttls : [ { "`+name+`" : 1 hour `, 0o644)
	_, stderr = facterJSON(t, broken, dir, os.Environ(), name)
	require.Contains(t, stderr, "Facter failed to read config file "+broken+" with the following error")
	o.FacterConf = broken
	f, errs := facts.Gather(context.Background(), o)
	assert.Equal(t, "v", f[name])
	assert.Contains(t, fmt.Sprint(errs), "Facter failed to read config file "+broken+" with the following error")
	assertWarnings(t, errs)
	assert.NoFileExists(t, filepath.Join(cache, name))
}

// assertWarnings: each of errs is a warning of the cache's.
func assertWarnings(t *testing.T, errs []error) {
	t.Helper()
	for _, e := range errs {
		var w *facts.CacheWarning
		assert.True(t, errors.As(e, &w), "a warning: %v", e)
	}
}

// TestCacheFactGroups: facter.conf's fact-groups name groups of custom
// facts, cached in one file.
func TestCacheFactGroups(t *testing.T) {
	needFacter(t)
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	ca, cb := counterFact(t, dir, "ttl_group_a", "a"), counterFact(t, dir, "ttl_group_b", "b")
	conf := writeFile(t, t.TempDir(), "facter.conf", `fact-groups : { "my group" : [ "ttl_group_a", "ttl_group_b" ] }
facts : { ttls : [ { "my group" : 2 days } ] }
`, 0o644)
	o := facts.Options{CustomDirs: []string{dir}, ExternalDirs: []string{}, FacterConf: conf, CacheDir: cache}
	for i := 0; i < 2; i++ {
		f := gatherCached(t, o)
		assert.Equal(t, "a", f["ttl_group_a"])
		assert.Equal(t, "b", f["ttl_group_b"])
	}
	assert.Equal(t, 1, runs(t, ca))
	assert.Equal(t, 1, runs(t, cb))
	assert.Equal(t, map[string]any{"ttl_group_a": "a", "ttl_group_b": "b", "cache_format_version": 1.0}, cacheFile(t, cache, "my group"))
}

// TestCacheSymlinkRefused: a cache file that is a symbolic link is not
// followed (a warning, the fact resolved), and the link is replaced by
// a file, its target untouched; a cache directory others may write to
// is not used.
func TestCacheSymlinkRefused(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	name := "ttl_link"
	counter := counterFact(t, dir, name, "real")
	needFacter(t)
	require.NoError(t, os.MkdirAll(cache, 0o755))
	planted := writeFile(t, t.TempDir(), "planted", `{"ttl_link": "planted", "cache_format_version": 1}`, 0o644)
	require.NoError(t, os.Symlink(planted, filepath.Join(cache, name)))
	o := facts.Options{CustomDirs: []string{dir}, ExternalDirs: []string{}, FacterConf: ttlConf(t, `"1 hour"`, name), CacheDir: cache}

	f, errs := facts.Gather(context.Background(), o)
	assert.Equal(t, "real", f[name])
	assert.Equal(t, 1, runs(t, counter))
	assert.Contains(t, fmt.Sprint(errs), "a symbolic link, not followed")
	assertWarnings(t, errs)
	fi, err := os.Lstat(filepath.Join(cache, name))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular(), "the link replaced by the cache file")
	b, _ := os.ReadFile(planted)
	assert.Contains(t, string(b), "planted", "the link's target untouched")

	// Another user's file: not read.
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user takes root")
	}
	other := filepath.Join(cache, name)
	require.NoError(t, os.WriteFile(other, []byte(`{"ttl_link": "other", "cache_format_version": 1}`), 0o644))
	require.NoError(t, os.Chown(other, 65534, 65534))
	f, errs = facts.Gather(context.Background(), o)
	assert.Equal(t, "real", f[name])
	assert.Equal(t, 2, runs(t, counter))
	assert.Contains(t, fmt.Sprint(errs), "owned by uid 65534")

	open := t.TempDir()
	require.NoError(t, os.Chmod(open, 0o777))
	o.CacheDir = open
	f, errs = facts.Gather(context.Background(), o)
	assert.Equal(t, "real", f[name])
	assert.Contains(t, fmt.Sprint(errs), "writable by others")
	assert.NoFileExists(t, filepath.Join(open, name))
}

// TestCacheSeenByNativeFacts: a known fact file that asks for a cached
// fact whose file is not evaluated (systemd's asks for stdlib's
// service_provider) sees the cached value, as Facter.value reads the
// cache in Facter.
func TestCacheSeenByNativeFacts(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	debianFactFile(t, dir, "stdlib", "service_provider.rb")
	debianFactFile(t, dir, "systemd", "systemd.rb")
	o := nativeOptions(t, dir)
	o.ExternalDirs, o.NoCache = []string{}, true
	real := gatherCached(t, o)["service_provider"]
	require.NotNil(t, real)
	cached := "systemd"
	if real == "systemd" {
		cached = "debian"
	}
	require.NoError(t, os.MkdirAll(cache, 0o755))
	writeFile(t, cache, "service_provider", `{"service_provider": "`+cached+`", "cache_format_version": 1}`, 0o644)
	o.NoCache, o.FacterConf, o.CacheDir = false, ttlConf(t, `"1 hour"`, "service_provider"), cache
	f := gatherCached(t, o)
	assert.Equal(t, cached, f["service_provider"])
	assert.Equal(t, cached == "systemd", f["systemd"], "systemd's fact saw the cached service_provider")
}

// TestCacheNamesStayInTheCache: a ttl whose name would reach outside the
// cache directory is refused (Facter would follow it).
func TestCacheNamesStayInTheCache(t *testing.T) {
	ext, cache := t.TempDir(), filepath.Join(t.TempDir(), "facts")
	victim := writeFile(t, t.TempDir(), "victim", `{"x": 1, "cache_format_version": 1}`, 0o644)
	age(t, victim, 48*time.Hour)
	writeFile(t, ext, "e.txt", "e=1\n", 0o644)
	conf := writeFile(t, t.TempDir(), "facter.conf", `facts : { ttls : [ { "../../`+filepath.Base(filepath.Dir(victim))+`/victim" : "1 hour" }, { "e.txt" : "1 hour" } ] }`, 0o644)
	require.NoError(t, os.MkdirAll(cache, 0o755))
	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{ext}, FacterConf: conf, CacheDir: cache})
	assert.Equal(t, "1", f["e"])
	assert.Contains(t, fmt.Sprint(errs), "cannot name a cache file")
	assert.FileExists(t, victim)
	assert.FileExists(t, filepath.Join(cache, "e.txt"))
}
