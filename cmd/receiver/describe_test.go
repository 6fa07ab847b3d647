package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	agentfacts "github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/internal/testutil"
)

func runSub(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := realMain(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDescribeSubcommand(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		contains []string
		stderr   string
	}{
		{"one type", []string{"describe", "exec"}, 0, []string{
			"\nexec\n====\n", "- **command** (*namevar*)", "- **returns** (*property*)",
			"Valid values are `true`, `false`, `on_failure`.", "Default: `300`.",
			"\nProviders\n---------\n    posix, shell\n", "Default for feature posix."}, ""},
		{"case-insensitive", []string{"describe", "Notify"}, 0, []string{"\nnotify\n======\n", "- **withpath**"}, ""},
		{"every type", []string{"describe"}, 0, []string{"\nexec\n====\n", "\nnotify\n======\n", "\nfile\n====\n"}, ""},
		{"list", []string{"describe", "--list"}, 0, []string{"exec            - Executes external commands\n", "notify          - "}, ""},
		{"meta", []string{"describe", "--meta", "notify"}, 0, []string{"\nnotify\n======\n", "\nMeta Parameters\n", "- **loglevel**"}, ""},
		{"unknown", []string{"describe", "starship"}, 2, nil, "unknown resource type 'starship'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runSub(t, tc.args...)
			assert.Equal(t, tc.code, code, errs)
			for _, c := range tc.contains {
				assert.Contains(t, out, c)
			}
			if tc.stderr != "" {
				assert.Contains(t, errs, tc.stderr)
			}
		})
	}
}

func TestFactsSubcommand(t *testing.T) {
	code, out, _ := runSub(t, "facts")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "kernel => Linux\n")
	assert.Contains(t, out, "os.family => ")

	host, err := os.Hostname()
	require.NoError(t, err)
	short, _, _ := strings.Cut(host, ".")
	code, out, _ = runSub(t, "facts", "hostname")
	require.Equal(t, 0, code)
	assert.Equal(t, short+"\n", out)

	code, out, _ = runSub(t, "facts", "--json", "kernel", "hostname")
	require.Equal(t, 0, code)
	var m map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	assert.Equal(t, map[string]string{"kernel": "Linux", "hostname": short}, m)

	// Dotted names and --json reach the agent's Facter-compatible facts.
	code, out, _ = runSub(t, "facts", "--no-external-facts", "os.family")
	require.Equal(t, 0, code)
	assert.NotEqual(t, "\n", out)
	code, out, _ = runSub(t, "facts", "--json", "--no-external-facts")
	require.Equal(t, 0, code)
	var all map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &all))
	assert.Contains(t, all, "networking")
	assert.IsType(t, map[string]any{}, all["os"])
	assert.NotContains(t, all, "osfamily", "legacy facts only with --show-legacy, as facter --json")
	code, out, _ = runSub(t, "facts", "--json", "--show-legacy", "--no-external-facts")
	require.Equal(t, 0, code)
	all = nil
	require.NoError(t, json.Unmarshal([]byte(out), &all))
	assert.Contains(t, all, "osfamily")
}

// TestDescribeUnknownNamesDelegated: an unknown type's error names the
// delegated types too (it listed only pippet's own although delegated
// types are describable), or says that none is delegated.
func TestDescribeUnknownNamesDelegated(t *testing.T) {
	code, _, errs := runSub(t, "describe", "--fallback", "none", "starship")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "unknown resource type 'starship' (pippet's own: anchor, augeas, concat_file, concat_fragment, cron, exec, file")
	assert.Contains(t, errs, "no type is delegated")

	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("Puppet is not installed: no delegated types to name")
	}
	code, _, errs = runSub(t, "describe", "--fallback", "puppet", "starship")
	assert.Equal(t, 2, code)
	assert.Regexp(t, `; delegated to .*: .*\bresources\b`, errs, "Puppet's own types (resources, ...) are named")
}

// TestResourceUsageLine: --yaml takes no argument, and its usage line
// does not read as if it did.
func TestResourceUsageLine(t *testing.T) {
	code, out, errs := runSub(t, "resource", "--help")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `(?m)^\s+-?-yaml\s*$`, out)
}

// TestFactsSubcommandCache: receiver facts honours the facter.conf
// --config names (facts.ttls), through Facter's own cache directory, as
// facter --config does; --no-cache leaves the cache alone.
func TestFactsSubcommandCache(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Facter's cache directory is root's")
	}
	testutil.MachineLock(t, "facter-cache") // Facter's cache directory is the machine's
	cacheFile := filepath.Join(agentfacts.FacterLocations[0].CacheDir, "timezone")
	os.Remove(cacheFile)
	t.Cleanup(func() { os.Remove(cacheFile) })
	conf := filepath.Join(t.TempDir(), "facter.conf")
	require.NoError(t, os.WriteFile(conf, []byte(`facts : { ttls : [ { "timezone" : 1 hour } ] }`), 0o644))
	tz := func(args ...string) string {
		t.Helper()
		code, out, errs := runSub(t, append([]string{"facts"}, append(args, "timezone")...)...)
		require.Equal(t, 0, code, errs)
		return strings.TrimSpace(out)
	}
	real := tz("--no-cache")
	assert.NoFileExists(t, cacheFile, "--no-cache writes nothing")
	assert.Equal(t, real, tz("--config", conf))
	require.FileExists(t, cacheFile)
	fi, err := os.Stat(cacheFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cacheFile, []byte(`{"timezone": "Cached/Zone", "cache_format_version": 1}`), 0o644))
	require.NoError(t, os.Chtimes(cacheFile, fi.ModTime(), fi.ModTime()))
	assert.Equal(t, "Cached/Zone", tz("--config", conf), "read from the cache")
	assert.Equal(t, real, tz("--config", conf, "--no-cache"))
}
