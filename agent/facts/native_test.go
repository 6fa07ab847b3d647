package facts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/agent/facts/native"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	_ "github.com/pippet/pippet/applier/types/all"
)

// debianModules is where Debian's puppet-module-* packages install the
// modules (.ci/run installs them all).
const debianModules = "/usr/share/puppet/modules"

// nativeOptions are the options an agent's run gives Gather for the
// known files: Facter's external fact directories (Debian's openstacklib
// installs one, os_service_default), the engine's provider choice, Puppet's settings as
// `puppet config print` says them (facter -p's Puppet, run mode user).
func nativeOptions(t *testing.T, dirs ...string) facts.Options {
	t.Helper()
	settings := map[string]string{}
	out, err := exec.Command("puppet", "config", "print", "vardir", "environmentpath", "server").Output()
	if err != nil {
		t.Fatalf("puppet config print: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, " = ")
		settings[k] = v
	}
	e := engine.New(applier.Default, nil)
	return facts.Options{
		CustomDirs:      dirs,
		Ruby:            filepath.Join(t.TempDir(), "no-ruby"), // any file sent to Facter fails the test
		DefaultProvider: e.DefaultProvider,
		Puppet:          settings,
		// Facter's own bound: a loaded machine does not make a difference.
		CommandTimeout: 300 * time.Second,
	}
}

// encodeFact is a fact's value as JSON (nil: absent), so that "9" and 9
// differ, as Facter's kinds do.
func encodeFact(t *testing.T, v any) string {
	t.Helper()
	if v == nil {
		return "absent"
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNativeFactsAgainstFacter resolves every known fact file of every
// module natively and compares each fact with what `facter -p` says of
// the same file (value and kind, absent included), module by module,
// Debian's installed copy of the module's files.
func TestNativeFactsAgainstFacter(t *testing.T) {
	if _, err := exec.LookPath("facter"); err != nil {
		t.Skip("facter is not installed: nothing to compare with")
	}
	byModule := debianFiles()
	var modules []string
	for m := range byModule {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	for _, module := range modules {
		t.Run(module, func(t *testing.T) {
			t.Parallel()
			compareModule(t, module, byModule[module], nil)
		})
	}
}

// debianFiles are the known files of Debian's modules, by module (the
// files only Forge releases have are left out).
func debianFiles() map[string][]*native.File {
	byModule := map[string][]*native.File{}
	for _, f := range native.Files {
		if len(f.Digests) > 0 {
			byModule[f.Module] = append(byModule[f.Module], f)
		}
	}
	return byModule
}

// fakePrograms are what the programs the facts ask print, in the
// versions seen on Debian and Ubuntu, for the programs not installed
// here: the facts' parsing is compared with Facter's on them (put
// first in PATH, which both search first).
var fakePrograms = map[string]string{
	"httpd":         "Server version: Apache/2.4.57 (Debian)\nServer built:   2023-04-13T03:26:51\nServer's Module Magic Number: 20120211:127\n",
	"haproxy":       "HAProxy version 2.6.12-1+deb12u1 2023/12/16 - https://haproxy.org/\nStatus: long-term supported branch - will stop receiving fixes around Q2 2027.\n",
	"collectd":      "Usage: collectd [OPTIONS]\n\nAvailable options:\n  -h       Display help (this message)\n\ncollectd 5.12.0.git, http://collectd.org/\nby Florian octo Forster <octo@collectd.org>\n",
	"python":        "/usr/local/lib/python3.11/dist-packages\n",
	"iptables":      "iptables v1.8.9 (nf_tables)\n",
	"ip6tables":     "ip6tables v1.8.9 (nf_tables)\n",
	"mysql":         "mysql  Ver 15.1 Distrib 10.11.6-MariaDB, for debian-linux-gnu (x86_64) using  EditLine wrapper\n",
	"mysqld":        "mysqld  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n",
	"erl":           `"/usr/lib/erlang/lib/ssl-10.8.7/ebin"`,
	"rabbitmqctl":   "Status of node rabbit@web1 ...\nRuntime\n\nOS PID: 1234\nCluster name: rabbit@web1.example.com\n{ok,\"/usr/lib/rabbitmq/plugins:/usr/lib/rabbitmq/lib/rabbitmq_server-3.10.8/plugins\"}\n",
	"rabbitmqadmin": "rabbitmqadmin 3.10.8\n",
	"redis-server":  "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=c4a1e5b5e9e5c0d4\n",
	"ssh":           "OpenSSH_9.6p1 Ubuntu-3ubuntu13.5, OpenSSL 3.0.13 30 Jan 2024\n",
	"sshd":          "unknown option -- V\nOpenSSH_8.9p1 Ubuntu-3ubuntu0.6, OpenSSL 3.0.2 15 Mar 2022\nusage: sshd [-46DdeiqTt] [-C connection_spec]\n",
}

// withPrograms are the modules whose facts run programs of fakePrograms.
var withPrograms = map[string]bool{"apache": true, "haproxy": true, "collectd": true, "firewall": true, "mysql": true, "rabbitmq": true, "redis": true, "ssh": true}

// TestNativeFactsAgainstFacterWithPrograms compares again, with the
// programs of fakePrograms first in PATH.
func TestNativeFactsAgainstFacterWithPrograms(t *testing.T) {
	if _, err := exec.LookPath("facter"); err != nil {
		t.Skip("facter is not installed: nothing to compare with")
	}
	bin := t.TempDir()
	for name, out := range fakePrograms {
		script := "#!/bin/sh\nprintf '%s' '" + strings.ReplaceAll(out, "'", `'\''`) + "'\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	byModule := debianFiles()
	for module := range withPrograms {
		t.Run(module, func(t *testing.T) {
			t.Parallel()
			compareModule(t, module, byModule[module], env)
		})
	}
}

// compareModule compares the facts of files (of Debian's module) as
// Gather resolves them natively with what facter -p says, both with env
// (nil: this process's).
func compareModule(t *testing.T, module string, files []*native.File, env []string) {
	t.Helper()
	compareFiles(t, "Debian's "+module+" module (puppet-module-*, installed by .ci/run)",
		filepath.Join(debianModules, module, "lib", "facter"), files, func(f *native.File) []string { return f.Digests }, env)
}

// compareFiles compares the facts of files, whose copies in src (the
// lib/facter of what origin names) are to be of the versions digests
// says, as Gather resolves them natively with what facter -p says.
func compareFiles(t *testing.T, origin, src string, files []*native.File, digests func(*native.File) []string, env []string) {
	t.Helper()
	dir := t.TempDir()
	var names, prefixes []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f.Name))
		if err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		if d := native.Digest(b); !contains(digests(f), d) {
			t.Fatalf("%s: %s (sha256 %s) is not the version known", origin, f.Name, d)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, n := range f.Facts {
			if p, dynamic := strings.CutSuffix(n, "*"); dynamic {
				prefixes = append(prefixes, p)
			} else {
				names = append(names, n)
			}
		}
	}
	// What the files require from beside them (stdlib's util/).
	if util := filepath.Join(src, "util"); isDir(util) {
		if out, err := exec.Command("cp", "-r", util, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	query := names
	if len(prefixes) > 0 {
		query = nil // every fact, to see the names Facter makes
	}
	// The system may change between the two (another apt-get update):
	// a difference is looked at again once, both resolved anew.
	for attempt := 1; ; attempt++ {
		problems := resolveAndCompare(t, dir, names, prefixes, query, env)
		if len(problems) == 0 {
			return
		}
		if attempt == 2 {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
		t.Logf("differences, resolving both again: %v", problems)
	}
}

// resolveAndCompare runs facter -p and Gather once on dir and says
// where they differ.
func resolveAndCompare(t *testing.T, dir string, names, prefixes, query, env []string) []string {
	t.Helper()
	want := facterP(t, dir, query, env...)
	o := nativeOptions(t, dir)
	o.Env = env
	got, errs := facts.Gather(context.Background(), o)
	var problems []string
	for _, err := range errs {
		var skipped *facts.SkippedError
		if errors.As(err, &skipped) {
			problems = append(problems, fmt.Sprintf("went to Facter, not resolved natively: %v", err))
		} else {
			t.Logf("error (Facter's fact would be absent too): %v", err)
		}
	}
	names = slices.Clone(names)
	for _, p := range prefixes {
		for _, m := range []map[string]any{got, want} {
			for n := range m {
				if strings.HasPrefix(n, p) && !contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no facts to compare")
	}
	for _, name := range names {
		if g, w := encodeFact(t, got[name]), encodeFact(t, want[name]); g != w {
			problems = append(problems, fmt.Sprintf("%s: native %s, facter -p %s", name, g, w))
		} else {
			t.Logf("%s: %s", name, g)
		}
	}
	return problems
}

// facterP is `facter -p --json --custom-dir dir names...`, with env
// (nil: this process's).
func facterP(t *testing.T, dir string, names []string, env ...string) map[string]any {
	t.Helper()
	cmd := exec.Command("facter", append([]string{"-p", "--json", "--custom-dir", dir}, names...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("facter -p: %v: %s", err, stderr.String())
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("facter -p output: %v: %s", err, out)
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				m[k] = i
			}
		}
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
