package pkg_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	pkg "github.com/pippet/pippet/applier/types/package"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/internal/testutil"
)

// needRoot skips a test that installs packages when not root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("installing packages with dpkg and apt-get needs root")
	}
	// The integration package's oracle cases install a package too.
	testutil.MachineLock(t, "dpkg")
	for _, tool := range []string{"dpkg-deb", "dpkg-scanpackages", "apt-get"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (dpkg-dev, apt): %v", tool, err)
		}
	}
}

func newEngine(t *testing.T) *typetest.Engine {
	return typetest.New(t, []*applier.Type{pkg.Type})
}

func sh(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(argv, " "), out)
	return string(out)
}

// deb describes a test package to build.
type deb struct {
	name, version string
	// conffile, when set, is an absolute path the package ships as a
	// conffile holding "version VERSION\n".
	conffile string
	provides string
}

// build makes the .deb with dpkg-deb in dir and returns its path.
func (d deb) build(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, d.name+"-"+d.version)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: pippet <pip@example.invalid>\nDescription: pippet test package\n", d.name, d.version)
	if d.provides != "" {
		control += "Provides: " + d.provides + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644))
	if d.conffile != "" {
		p := filepath.Join(root, d.conffile)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("version "+d.version+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN", "conffiles"), []byte(d.conffile+"\n"), 0o644))
	}
	out := filepath.Join(dir, fmt.Sprintf("%s_%s_all.deb", d.name, d.version))
	sh(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, out)
	require.NoError(t, os.RemoveAll(root))
	return out
}

// purgeAfter purges the named packages (and removes their conffiles) when
// the test ends, and before it starts in case an earlier run left them.
func purgeAfter(t *testing.T, names ...string) {
	t.Helper()
	purge := func() {
		for _, n := range names {
			// Other test binaries may hold the dpkg lock for a moment.
			for try := 0; try < 120; try++ {
				out, err := exec.Command("dpkg", "--purge", n).CombinedOutput()
				if err == nil || !strings.Contains(string(out), "locked by another process") {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
	}
	purge()
	t.Cleanup(purge)
}

// kitDir is a directory the apt sandbox user can read.
func kitDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	return dir
}

// repo makes a local apt repository of debs (every version kept) in
// dir/repo, adds a `file:` source for it in /etc/apt/sources.list.d and
// runs apt-get update on that source alone (no other source, so no
// network). The source entry and its lists go away when the test ends.
func repo(t *testing.T, dir string, debs ...string) {
	t.Helper()
	rdir := filepath.Join(dir, "repo")
	require.NoError(t, os.MkdirAll(rdir, 0o755))
	for _, d := range debs {
		sh(t, "cp", d, rdir)
	}
	cmd := exec.Command("dpkg-scanpackages", "-m", ".", "/dev/null")
	cmd.Dir = rdir
	packages, err := cmd.Output()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(rdir, "Packages"), packages, 0o644))

	list := fmt.Sprintf("/etc/apt/sources.list.d/pippkg-test-%d.list", os.Getpid())
	require.NoError(t, os.WriteFile(list, []byte("deb [trusted=yes] file:"+rdir+" ./\n"), 0o644))
	// apt names a source's lists after its URI: /a/b -> _a_b_._Packages.
	lists := "/var/lib/apt/lists/" + strings.ReplaceAll(rdir, "/", "_") + "_*"
	t.Cleanup(func() {
		os.Remove(list)
		lists, _ := filepath.Glob(lists)
		for _, l := range lists {
			os.Remove(l)
		}
	})
	sh(t, "apt-get", "update", "-q",
		"-o", "Dir::Etc::sourcelist="+list, "-o", "Dir::Etc::sourceparts=-",
		"-o", "APT::Get::List-Cleanup=0")
}

// status is dpkg's view of a package: "ii 2.0", "rc 1.0", or "" when
// dpkg does not know it.
func status(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("dpkg-query", "-W", "-f=${db:Status-Abbrev} ${Version}", name).Output()
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

func selection(t *testing.T, name string) string {
	t.Helper()
	out := sh(t, "dpkg", "--get-selections", name)
	f := strings.Fields(out)
	if len(f) != 2 {
		return ""
	}
	return f[1]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<missing>"
	}
	require.NoError(t, err)
	return string(b)
}

func runStdin(stdin string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	return cmd.Run()
}
