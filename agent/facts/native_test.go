package facts_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
// known files: the engine's provider choice, Puppet's settings as
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
		ExternalDirs:    []string{},
		CustomDirs:      dirs,
		Ruby:            filepath.Join(t.TempDir(), "no-ruby"), // any file sent to Facter fails the test
		DefaultProvider: e.DefaultProvider,
		Puppet:          settings,
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
	byModule := map[string][]*native.File{}
	for _, f := range native.Files {
		byModule[f.Module] = append(byModule[f.Module], f)
	}
	var modules []string
	for m := range byModule {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	for _, module := range modules {
		t.Run(module, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(debianModules, module, "lib", "facter")
			dir := t.TempDir()
			var names []string
			for _, f := range byModule[module] {
				b, err := os.ReadFile(filepath.Join(src, f.Name))
				if err != nil {
					t.Fatalf("Debian's %s module (puppet-module-*, installed by .ci/run): %v", module, err)
				}
				if d := native.Digest(b); !contains(f.Digests, d) {
					t.Fatalf("%s/%s: Debian's file (sha256 %s) is not a known version", module, f.Name, d)
				}
				if err := os.WriteFile(filepath.Join(dir, f.Name), b, 0o644); err != nil {
					t.Fatal(err)
				}
				names = append(names, f.Facts...)
			}
			// What the files require from beside them (stdlib's util/).
			if util := filepath.Join(src, "util"); isDir(util) {
				if out, err := exec.Command("cp", "-r", util, dir).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
			}
			want := facterP(t, dir, names)
			o := nativeOptions(t, dir)
			got, errs := facts.Gather(context.Background(), o)
			for _, err := range errs {
				var skipped *facts.SkippedError
				if errors.As(err, &skipped) {
					t.Errorf("went to Facter, not resolved natively: %v", err)
				} else {
					t.Logf("error (Facter's fact would be absent too): %v", err)
				}
			}
			for _, name := range names {
				if g, w := encodeFact(t, got[name]), encodeFact(t, want[name]); g != w {
					t.Errorf("%s: native %s, facter -p %s", name, g, w)
				}
			}
		})
	}
}

// facterP is `facter -p --json --custom-dir dir names...`.
func facterP(t *testing.T, dir string, names []string) map[string]any {
	t.Helper()
	cmd := exec.Command("facter", append([]string{"-p", "--json", "--custom-dir", dir}, names...)...)
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
