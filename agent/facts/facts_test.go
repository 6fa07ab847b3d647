package facts_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
)

func TestParseMeminfo(t *testing.T) {
	b, err := os.ReadFile("testdata/root/proc/meminfo")
	require.NoError(t, err)
	m, err := facts.ParseMeminfo(b)
	require.NoError(t, err)
	assert.Equal(t, facts.Meminfo{Total: 8000000 * 1024, Available: 6000000 * 1024, SwapTotal: 2097148 * 1024, SwapFree: 2097148 * 1024}, m)

	// A kernel without MemAvailable: free + buffers + cached, as Facter does.
	b, err = os.ReadFile("testdata/meminfo-old")
	require.NoError(t, err)
	m, err = facts.ParseMeminfo(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(420000*1024), m.Available)

	_, err = facts.ParseMeminfo([]byte("MemFree: 12 kB\n"))
	assert.ErrorContains(t, err, "MemTotal")
	m, err = facts.ParseMeminfo([]byte("MemTotal: 100 kB\nMemAvailable: 999999999999999999999 kB\n"))
	require.NoError(t, err, "an out-of-range line is skipped")
	assert.Equal(t, uint64(0), m.Available)

	for b, want := range map[uint64]string{
		1000: "1000 bytes", 1024: "1.00 KiB", 1069875200: "1020.31 MiB", 25276502016: "23.54 GiB",
		1024*1024 - 1: "1.00 MiB", 1 << 40: "1.00 TiB",
	} {
		assert.Equal(t, want, facts.BytesToHuman(b), b)
	}
}

func TestParseCPUInfo(t *testing.T) {
	b, err := os.ReadFile("testdata/root/proc/cpuinfo")
	require.NoError(t, err)
	c := facts.ParseCPUInfo(b)
	assert.Equal(t, 4, c.Count)
	assert.Equal(t, 2, c.Physical)
	assert.Len(t, c.Models, 4)
	assert.Equal(t, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", c.Models[0])
	assert.Equal(t, int64(1200_000_000), c.SpeedHz, "the last cpu MHz line, as Facter reads it")
	assert.Equal(t, 2, c.CoresPerPk)
	assert.Equal(t, 4, c.Siblings)
	assert.Equal(t, "1.20 GHz", facts.HertzToHuman(c.SpeedHz))
	assert.Equal(t, "2.60 GHz", facts.HertzToHuman(2596_000_000))

	b, err = os.ReadFile("testdata/cpuinfo-arm")
	require.NoError(t, err)
	c = facts.ParseCPUInfo(b)
	assert.Equal(t, 2, c.Count)
	assert.Empty(t, c.Models)
	assert.Zero(t, c.Physical)
}

func TestParseFilesystemsAndUptime(t *testing.T) {
	b, err := os.ReadFile("testdata/root/proc/filesystems")
	require.NoError(t, err)
	assert.Equal(t, "ext4,xfs", facts.ParseFilesystems(b))
	assert.Equal(t, map[string]any{"seconds": int64(59), "hours": int64(0), "days": int64(0), "uptime": "0:00 hours"}, facts.Uptime(59))
	assert.Equal(t, "2:05 hours", facts.Uptime(2*3600 + 5*60)["uptime"])
	assert.Equal(t, "1 day", facts.Uptime(30 * 3600)["uptime"])
	assert.Equal(t, "3 days", facts.Uptime(80 * 3600)["uptime"])
}

// TestGatherFromTree gathers from a fake root: a Rocky machine with four
// CPUs on two sockets, swap, FIPS, an ssh host key, external facts.
func TestGatherFromTree(t *testing.T) {
	f, errs := facts.Gather(context.Background(), facts.Options{
		Root: "testdata/root", ExternalDirs: []string{"testdata/ext1", "testdata/ext2"}, Env: []string{"PATH=/x:/y", "FACTER_fromenv=yes"},
	})
	require.Len(t, errs, 1, "%v", errs)
	assert.ErrorContains(t, errs[0], "bad.json")

	get := func(p string) any {
		v, ok := f.Get(p)
		assert.True(t, ok, p)
		return v
	}
	assert.Equal(t, "Rocky", get("os.name"))
	assert.Equal(t, "RedHat", get("os.family"))
	assert.Equal(t, "9", get("os.release.major"))
	assert.Equal(t, "3", get("os.release.minor"))
	assert.Equal(t, "x86_64", get("os.architecture"), "not dpkg's name outside Debian")
	assert.Equal(t, "Rocky Linux 9.3 (Blue Onyx)", get("os.distro.description"))
	assert.Equal(t, "5.14.0", get("kernelversion"))
	assert.Equal(t, "5.14", get("kernelmajversion"))
	assert.Equal(t, "rhost", get("hostname"))
	assert.Equal(t, "example.org", get("domain"))
	assert.Equal(t, "rhost.example.org", get("networking.fqdn"))
	assert.Equal(t, 4, get("processors.count"))
	assert.Equal(t, 2, get("processors.physicalcount"))
	assert.Equal(t, 2, get("processors.cores"))
	assert.Equal(t, 2, get("processors.threads"))
	assert.Equal(t, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", get("processor3"))
	assert.Equal(t, "7.63 GiB", get("memory.system.total"))
	assert.Equal(t, "25.00%", get("memory.system.capacity"))
	assert.Equal(t, "0.00%", get("memory.swap.capacity"))
	assert.Equal(t, "2.00 GiB", get("swapsize"))
	assert.Equal(t, "2 days", get("system_uptime.uptime"))
	assert.Equal(t, int64(200000), get("uptime_seconds"))
	assert.Equal(t, 1.25, get("load_averages.5m"))
	assert.Equal(t, true, get("fips_enabled"))
	assert.Equal(t, "ext4,xfs", get("filesystems"))
	assert.Equal(t, "ssh-ed25519", get("ssh.ed25519.type"))
	assert.Regexp(t, `^SSHFP 4 1 [0-9a-f]{40}\nSSHFP 4 2 [0-9a-f]{64}$`, get("sshfp_ed25519"))
	assert.Equal(t, "/x:/y", get("path"))
	assert.Equal(t, facts.FacterVersion, get("facterversion"))

	// External facts: every kind, lowercased names, later files and
	// directories win, and they override core facts.
	assert.Equal(t, "overridden", get("role"), "zz-script.sh runs after site.txt")
	assert.Equal(t, "ams2", get("datacenter"), "a later directory wins")
	assert.Equal(t, "", get("empty"))
	assert.Equal(t, "shop", get("app.name"))
	assert.Equal(t, []any{float64(80), float64(443)}, get("app.ports"))
	assert.Equal(t, "front", get("tier"))
	assert.Equal(t, "r12", get("rack"))
	assert.Equal(t, int64(3), get("weight"))
	assert.Equal(t, "from script", get("script_fact"))
	assert.Equal(t, true, get("script_json.deep"))
	assert.Equal(t, "Overridden", get("osfamily"), "an external fact overrides a core one")
	assert.Equal(t, "yes", get("fromenv"), "FACTER_ variables are facts")
	_, ok := f["broken"]
	assert.False(t, ok)
}

// TestGatherWithCoreAhead: the core facts gathered ahead (Core, as an
// agent does while pluginsync runs) give Gather the same facts as
// gathering them then, external ones and FACTER_ overrides over them,
// and Gather does not change them (a second Gather from the same core
// facts is the same again).
func TestGatherWithCoreAhead(t *testing.T) {
	o := facts.Options{
		Root: "testdata/root", ExternalDirs: []string{"testdata/ext1", "testdata/ext2"}, Env: []string{"PATH=/x:/y", "FACTER_fromenv=yes"},
	}
	want, wantErrs := facts.Gather(context.Background(), o)
	core := facts.Core(context.Background(), o)
	o.ExternalDirs = []string{"testdata/ext1", "testdata/ext2"}
	o.Core = core
	for i := 0; i < 2; i++ {
		got, errs := facts.Gather(context.Background(), o)
		assert.Equal(t, want, got, "gather %d", i+1)
		assert.Equal(t, fmt.Sprint(wantErrs), fmt.Sprint(errs), "gather %d", i+1)
		assert.Equal(t, "overridden", got["role"])
		assert.Equal(t, "Overridden", got["osfamily"], "an external fact over a core one gathered ahead")
		assert.Equal(t, "yes", got["fromenv"])
	}
	// The core facts themselves are as gathered: without external facts,
	// osfamily is the core one.
	got, _ := facts.Gather(context.Background(), facts.Options{Root: "testdata/root", ExternalDirs: []string{}, Env: o.Env, Core: core})
	assert.Equal(t, "RedHat", got["osfamily"])
	assert.NotContains(t, got, "role")
}

func TestParseExternal(t *testing.T) {
	_, err := facts.ParseExternal(".txt", []byte("a=1\njust words\n"))
	assert.ErrorContains(t, err, `line 2: "just words" is not key=value`)
	_, err = facts.ParseExternal(".yaml", []byte("- a list\n"))
	assert.ErrorContains(t, err, "YAML")
	_, err = facts.ParseExternal(".txt", []byte("a=\xff\xfe\n"))
	assert.ErrorContains(t, err, "UTF-8")
	f, err := facts.ParseExternal("", []byte("---\nx: {y: 1}\n"))
	require.NoError(t, err)
	assert.Equal(t, facts.Facts{"x": map[string]any{"y": int64(1)}}, f)
}

func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

// TestHostileScripts: a script that never ends, one that prints forever,
// one that prints bytes that are not UTF-8, one that fails, one that
// leaves a child holding its output open; each is one error naming it,
// Gather returns in bounded time, and the good script's facts still count.
func TestHostileScripts(t *testing.T) {
	dir := t.TempDir()
	writeScript(t, dir, "a-forever.sh", "sleep 1000")
	writeScript(t, dir, "b-flood.sh", "yes flood=1")
	writeScript(t, dir, "c-binary.sh", `printf 'bin=\377\376\n'`)
	writeScript(t, dir, "d-fails.sh", "echo broken >&2; exit 3")
	pidFile := filepath.Join(t.TempDir(), "orphan.pid")
	writeScript(t, dir, "e-orphan.sh", "echo orphan=1; sleep 1000 & echo $! > "+pidFile)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g-huge.txt"), make([]byte, 5<<20), 0o644))
	writeScript(t, dir, "f-good.sh", "echo good=1")
	start := time.Now()
	f, errs := facts.LoadExternal(context.Background(), []string{dir}, 500*time.Millisecond, 64<<10)
	elapsed := time.Since(start)
	assert.Less(t, elapsed, 8*time.Second)
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	all := strings.Join(msgs, "\n")
	assert.Len(t, errs, 5, all)
	assert.Contains(t, all, "g-huge.txt: larger than 4194304 bytes")
	assert.Contains(t, all, "a-forever.sh: still running after 500ms; killed")
	assert.Contains(t, all, "b-flood.sh: printed more than 65536 bytes; killed")
	assert.Contains(t, all, "c-binary.sh: not valid UTF-8")
	assert.Contains(t, all, "d-fails.sh: exit status 3: broken")
	assert.Equal(t, facts.Facts{"good": "1", "orphan": "1"}, f)
	pid, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
		return err != nil || strings.Contains(string(st), ") Z ")
	}, 5*time.Second, 20*time.Millisecond, "the script's background child is killed")

	// A cancelled context stops a script at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, errs = facts.LoadExternal(ctx, []string{dir}, time.Minute, 0)
	assert.NotEmpty(t, errs)
}
