package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// debianPATH is root's PATH on Debian: Puppet run with it (a pip shim on
// this machine's PATH breaks Puppet's package queries).
const debianPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func puppetBin(t *testing.T) string {
	t.Helper()
	for _, d := range filepath.SplitList(debianPATH) {
		if p := filepath.Join(d, "puppet"); isExec(p) {
			return p
		}
	}
	t.Skip("puppet is not installed")
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// configPrint runs `puppet config print all --section agent` with the
// given command-line settings, as the given user (nil: this one), in dir,
// with HOME home, and parses its "name = value" lines.
func configPrint(t *testing.T, pre []string, args []string, dir, home string) map[string]string {
	t.Helper()
	return configPrintSection(t, "agent", pre, args, dir, home)
}

// configPrintSection is configPrint for a run mode's section (user:
// what puppet apply reads).
func configPrintSection(t *testing.T, section string, pre []string, args []string, dir, home string) map[string]string {
	t.Helper()
	argv := append(append(pre, puppetBin(t), "config", "print", "all", "--section", section), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + debianPATH, "HOME=" + home, "LANG=C.UTF-8"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("%v: %v\n%s", argv, err, stderr.Bytes())
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " = ")
		if !ok {
			k, ok = strings.CutSuffix(sc.Text(), " =")
		}
		if ok {
			m[k] = v
		}
	}
	if len(m) < 200 {
		t.Fatalf("puppet config print gave %d settings:\n%s", len(m), out)
	}
	return m
}

// notCompared are settings whose printed value is not the agent's: the
// application's name, the environment's manifest and modulepath (Puppet
// reads them from the environment's directory), Puppet's user agent.
var notCompared = map[string]bool{"name": true, "manifest": true, "modulepath": true, "http_user_agent": true}

// printed is how Puppet prints a value Values keeps as a comma list.
func printed(name, v string) string {
	switch name {
	case "disable_warnings", "http_extra_headers":
		if v == "" {
			return "[]"
		}
	case "supported_checksum_types":
		return `["` + strings.Join(strings.Split(v, ", "), `", "`) + `"]`
	}
	return v
}

func compareWithPuppet(t *testing.T, got *Settings, want map[string]string) {
	t.Helper()
	for _, d := range defs {
		if notCompared[d.name] {
			continue
		}
		w, ok := want[d.name]
		if !ok {
			t.Errorf("puppet config print has no %s", d.name)
			continue
		}
		if g := printed(d.name, got.Values[d.name]); g != w {
			t.Errorf("%s = %q, Puppet %q", d.name, g, w)
		}
	}
	for k := range want {
		if byName[k] == nil {
			t.Errorf("Puppet has a setting %s the table lacks", k)
		}
	}
}

// richConf sets a bit of everything: interpolation across sections,
// relative and ~ paths, quotes, booleans in capitals, durations, the
// sections the agent does not read.
const richConf = `# a site's puppet.conf
server = early.example.org
[main]
vardir = VARDIR
ssldir = $vardir/ssl
certname = node1.example.org
serverport = 8141
environment = staging
runinterval = 45m
splay = TRUE
report_server = 'reports.example.org'
tags = a, B
http_read_timeout = 5m
waitforcert = 1d
ca_server = ca.example.org # not a comment
[agent]
statedir = $vardir/agentstate
usecacheonfailure = false
ca_port = 8150
dns_alt_names = puppet, puppet.example.org
certificate_revocation = leaf
logdir = relative/logs
lastrunfile = ~/summary.yaml
server_list = a.example.org:8143,b.example.org
[user]
noop = true
[server]
environment = srv
[main]
keylength = 2048
`

// userConf is where receiver apply's old puppet.conf reader (the agent's
// [main] and [agent], a " #" cutting the value, no quotes removed,
// $vardir always /var/cache/puppet) and Puppet's user run mode differed.
const userConf = `[main]
server = main.example.org
vardir = VARDIR
ssldir = $vardir/ssl # part of the value
ca_server = "quoted.example.org"
environment = 'production'
pidfile = $rundir/$run_mode-x.pid
[agent]
server = agent.example.org
serverport = 8141
certificate_revocation = false
[user]
serverport = 8142
certname = user.example.org
statedir = $vardir/userstate
[main]
server = later.example.org
`

// TestPuppetConfigPrint compares every setting Load resolves with what
// `puppet config print all --section agent` prints for the same
// puppet.conf and command line, as root (defaults, then richConf with
// command-line settings).
func TestPuppetConfigPrint(t *testing.T) {
	puppetBin(t)
	if os.Geteuid() != 0 {
		t.Skip("compares root's defaults: run as root")
	}
	cases := []struct {
		name, conf string
		args       []string
		mode       string // "": agent
	}{
		{"defaults", "", nil, ""},
		{"rich", richConf, []string{"--noop", "--runinterval", "2h", "--no-splay", "--http_connect_timeout=30s", "--ca_server", "'cli-ca.example.org'", "--usecacheonfailure", "--environment=cli_env"}, ""},
		// puppet apply's run mode (receiver apply's settings): [user]
		// over [main], [agent] never read, $run_mode user.
		{"user defaults", "", nil, "user"},
		{"user rich", richConf, nil, "user"},
		{"user sections", userConf, []string{"--certname", "cli.example.org"}, "user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			confdir, cwd, home := t.TempDir(), t.TempDir(), t.TempDir()
			conf := strings.ReplaceAll(c.conf, "VARDIR", filepath.Join(confdir, "var"))
			if err := os.WriteFile(filepath.Join(confdir, "puppet.conf"), []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--confdir", confdir}, c.args...)
			mode := c.mode
			if mode == "" {
				mode = "agent"
			}
			want := configPrintSection(t, mode, nil, args, cwd, home)
			a, err := ParseArgs(args)
			if err != nil {
				t.Fatal(err)
			}
			e := currentEnv()
			e.cwd, e.home = cwd, home
			got, err := loadMode(e, mode, "", a.Settings)
			if err != nil {
				t.Fatal(err)
			}
			compareWithPuppet(t, got, want)
		})
	}
}

// TestPuppetConfigPrintNonRoot compares a non-root user's defaults and
// richConf with Puppet run as that user (nobody, with a temporary home).
func TestPuppetConfigPrintNonRoot(t *testing.T) {
	puppetBin(t)
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and setpriv to run Puppet as nobody")
	}
	for _, c := range []struct{ name, conf string }{{"defaults", ""}, {"rich", richConf}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			// nobody must reach it (t.TempDir's parent is 0700).
			os.Chmod(filepath.Dir(base), 0o755)
			os.Chmod(base, 0o755)
			home, cwd := filepath.Join(base, "home"), filepath.Join(base, "cwd")
			for _, d := range []string{home, cwd} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(d, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			var args []string
			if c.conf != "" {
				confdir := filepath.Join(base, "conf")
				os.Mkdir(confdir, 0o755)
				conf := strings.ReplaceAll(c.conf, "VARDIR", filepath.Join(base, "var"))
				if err := os.WriteFile(filepath.Join(confdir, "puppet.conf"), []byte(conf), 0o644); err != nil {
					t.Fatal(err)
				}
				args = []string{"--confdir", confdir}
			}
			want := configPrint(t, []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, args, cwd, home)
			a, err := ParseArgs(args)
			if err != nil {
				t.Fatal(err)
			}
			e := env{root: false, home: home, cwd: cwd, fqdn: hostFQDN}
			got, err := load(e, "", a.Settings)
			if err != nil {
				t.Fatal(err)
			}
			compareWithPuppet(t, got, want)
		})
	}
}

// ruby runs a Ruby script with Puppet loaded (Debian's PATH).
func ruby(t *testing.T, script string, args ...string) string {
	t.Helper()
	puppetBin(t)
	cmd := exec.Command("ruby", append([]string{"-rpuppet", "-e", "Puppet.initialize_settings([]); " + script}, args...)...)
	cmd.Env = []string{"PATH=" + debianPATH, "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ruby %s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestPuppetHonoursOurLock: Puppet's Pidlock (what `puppet agent` checks
// before a run) sees a lock held by this program as held, and leaves it.
func TestPuppetHonoursOurLock(t *testing.T) {
	puppetBin(t)
	p := filepath.Join(t.TempDir(), "agent_catalog_run.lock")
	h := hold(t, p)
	got := ruby(t, `l = Puppet::Util::Pidlock.new(ARGV[0]); puts l.locked?, l.lock_pid`, p)
	if want := "true\n" + strconv.Itoa(h.cmd.Process.Pid); got != want {
		t.Errorf("Puppet's Pidlock says %q, want %q", got, want)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("Puppet removed our lock: %v", err)
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", h.cmd.Process.Pid))
	if !strings.HasSuffix(strings.TrimSpace(string(comm)), "-puppet") {
		t.Errorf("holder's name %q", comm)
	}
	h.stdin.Close()
	h.cmd.Wait()
	if got := ruby(t, `puts Puppet::Util::Pidlock.new(ARGV[0]).locked?`, p); got != "false" {
		t.Errorf("after unlock Puppet says %q", got)
	}
}

// TestWeHonourPuppetsLock: a lock Puppet's Pidlock holds is held for Lock,
// with Puppet's PID.
func TestWeHonourPuppetsLock(t *testing.T) {
	puppetBin(t)
	p := filepath.Join(t.TempDir(), "agent_catalog_run.lock")
	cmd := exec.Command("ruby", "-rpuppet", "-e", `Puppet.initialize_settings([]); Puppet::Util::Pidlock.new(ARGV[0]).lock or abort("no lock"); puts "locked"; STDOUT.flush; STDIN.read`, p)
	cmd.Env = []string{"PATH=" + debianPATH, "HOME=" + t.TempDir()}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("ruby: %q", line)
	}
	_, err := Lock(p)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("Lock while Puppet holds it: %v, want Puppet's PID %d", err, cmd.Process.Pid)
	}
}

// TestDisableWithPuppet: `puppet agent --disable` and Disable write the
// same file, and each side reads and clears the other's.
func TestDisableWithPuppet(t *testing.T) {
	puppet := puppetBin(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "agent_disabled.lock")
	run := func(args ...string) {
		cmd := exec.Command(puppet, append([]string{"agent", "--agent_disabled_lockfile", p, "--confdir", dir, "--vardir", dir}, args...)...)
		cmd.Env = []string{"PATH=" + debianPATH, "HOME=" + dir}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("puppet agent %v: %v\n%s", args, err, out)
		}
	}
	run("--disable", `maint "x" é`)
	puppets := readFile(t, p)
	if msg, dis, err := Disabled(p); err != nil || !dis || msg != `maint "x" é` {
		t.Errorf("Puppet's lock read as %q %v %v", msg, dis, err)
	}
	run("--enable")
	if err := Disable(p, `maint "x" é`); err != nil {
		t.Fatal(err)
	}
	if ours := readFile(t, p); ours != puppets {
		t.Errorf("our file %q, Puppet's %q", ours, puppets)
	}
	if got := ruby(t, `require 'puppet/util/json_lockfile'; l = Puppet::Util::JsonLockfile.new(ARGV[0]); puts l.locked?, l.lock_data["disabled_message"]`, p); got != "true\nmaint \"x\" é" {
		t.Errorf("Puppet reads our lock as %q", got)
	}
	run("--enable")
	if _, dis, _ := Disabled(p); dis {
		t.Error("puppet agent --enable left our lock")
	}
}
