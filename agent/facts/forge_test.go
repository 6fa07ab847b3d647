package facts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pippet/pippet/agent/facts/native"
)

// forgeModulesEnv names the directory holding the Forge releases whose
// fact files are known (native.Release): OWNER-NAME-VERSION/NAME, as
// `puppet module install --target-dir DIR/OWNER-NAME-VERSION
// --version VERSION OWNER-NAME` leaves it (.ci/run installs them
// there).
const forgeModulesEnv = "PIPPET_FORGE_MODULES"

// defaultForgeModules is where .ci/run installs them.
const defaultForgeModules = "/var/cache/pippet-forge-modules"

// forgeRelease is one Forge release and the known files of its versions.
type forgeRelease struct {
	module, version, name string // puppetlabs-apt, 11.3.2, apt
	files                 []*native.File
}

func forgeReleases() []*forgeRelease {
	byKey := map[string]*forgeRelease{}
	for _, f := range native.Files {
		for _, r := range f.Forge {
			key := r.Module + "-" + r.Version
			if byKey[key] == nil {
				_, name, _ := strings.Cut(r.Module, "-")
				byKey[key] = &forgeRelease{module: r.Module, version: r.Version, name: name}
			}
			byKey[key].files = append(byKey[key].files, f)
		}
	}
	var out []*forgeRelease
	for _, r := range byKey {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].module+out[i].version < out[j].module+out[j].version })
	return out
}

// TestNativeFactsAgainstFacterForge compares, as
// TestNativeFactsAgainstFacter does for Debian's files, the facts of
// each known file in the version of a module's Forge release with what
// facter -p says of that exact file, without and with (the modules
// whose facts run them) the programs of fakePrograms.
func TestNativeFactsAgainstFacterForge(t *testing.T) {
	needFacter(t)
	top := os.Getenv(forgeModulesEnv)
	if top == "" {
		top = defaultForgeModules
	}
	if !isDir(top) {
		// The Forge is not reachable from every machine (CI reaches only
		// Debian's mirror and the Go proxy): .ci/run tries, and says so
		// when it cannot.
		t.Skipf("no Forge releases in %s (.ci/run installs them where the Forge is reachable; %s names another directory)", top, forgeModulesEnv)
	}
	bin := t.TempDir()
	for name, out := range fakePrograms {
		writeFile(t, bin, name, "#!/bin/sh\nprintf '%s' '"+strings.ReplaceAll(out, "'", `'\''`)+"'\n", 0o755)
	}
	for _, r := range forgeReleases() {
		src := filepath.Join(top, r.module+"-"+r.version, r.name, "lib", "facter")
		if !isDir(src) {
			// Not installed: the Forge could not be reached when .ci/run
			// ran (it stops at the first release it cannot fetch).
			t.Run(r.module+"-"+r.version, func(t *testing.T) { t.Skipf("%s not installed", src) })
			continue
		}
		origin := fmt.Sprintf("%s %s (the Forge's, in %s)", r.module, r.version, src)
		digests := func(f *native.File) []string {
			var ds []string
			for _, rel := range f.Forge {
				if rel.Module == r.module && rel.Version == r.version {
					ds = append(ds, rel.Digest)
				}
			}
			return ds
		}
		t.Run(r.module+"-"+r.version, func(t *testing.T) {
			t.Parallel()
			compareFiles(t, origin, src, r.files, digests, nil)
		})
		if r.name == "collectd" {
			// No python, the system's python3: python_dir's second choice.
			t.Run(r.module+"-"+r.version+"-python3", func(t *testing.T) {
				t.Parallel()
				compareFiles(t, origin, src, r.files, digests, envWithPath("/usr/bin:/bin"))
			})
		}
		if !withPrograms[r.name] {
			continue
		}
		t.Run(r.module+"-"+r.version+"-with-programs", func(t *testing.T) {
			t.Parallel()
			compareFiles(t, origin, src, r.files, digests, pathWith(bin))
		})
	}
}

// envWithPath is the environment with PATH path.
func envWithPath(path string) []string {
	env := []string{"PATH=" + path}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}
