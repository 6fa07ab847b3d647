package pkg_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pkg "github.com/pippet/pippet/applier/types/package"
	"github.com/pippet/pippet/applier/typetest"
)

// step is one request and what must follow from it.
type step struct {
	params string
	want   string // typetest.Summary, exception matched as a prefix
	event  string // the ensure/mark event message, when one is expected
	status string // dpkg's view afterwards ("ii 1.0"; "" unknown)
}

func runSteps(t *testing.T, e *typetest.Engine, title, name string, steps []step) {
	t.Helper()
	for i, s := range steps {
		res := e.Apply("package", title, s.params)
		sum := typetest.Summary(res)
		if !strings.HasPrefix(sum, s.want) {
			t.Fatalf("step %d %s: got %q, want %q\nevents: %s\nlog: %s", i, s.params, sum, s.want, typetest.Events(res), e.Log())
		}
		if s.event != "" {
			require.NotEmpty(t, res.Events, "step %d %s", i, s.params)
			assert.Equal(t, s.event, res.Events[0].Message, "step %d %s", i, s.params)
		}
		assert.Equal(t, s.status, status(t, name), "step %d %s: dpkg status", i, s.params)
	}
}

// TestDpkg drives the dpkg provider through its life cycle with two
// versions of a package built here, each recorded against real Puppet 7:
// installed never upgrades, a version is refused (dpkg is not
// versionable), latest follows the source file up and down, absent keeps
// the conffile, purged removes it.
func TestDpkg(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name, conf = "pippkgd", "/etc/pippkgd.conf"
	v1 := deb{name: name, version: "1.0", conffile: conf}.build(t, dir)
	v2 := deb{name: name, version: "2.0", conffile: conf}.build(t, dir)
	purgeAfter(t, name)
	e := newEngine(t)
	runSteps(t, e, name, name, []step{
		{params: "{provider: dpkg, ensure: installed}", want: "failed: change from 'purged' to 'present' failed: You cannot install dpkg packages without a source"},
		{params: "{provider: dpkg, source: " + v1 + "}", want: "changed", event: "created", status: "ii 1.0"},
		{params: "{provider: dpkg, source: " + v1 + "}", want: "unchanged", status: "ii 1.0"},
		{params: "{provider: dpkg, ensure: installed, source: " + v2 + "}", want: "unchanged", status: "ii 1.0"},
		{params: "{provider: dpkg, ensure: '2.0', source: " + v2 + "}", want: "error: Parameter ensure failed on Package[pippkgd]: Provider dpkg must have features 'versionable' to set 'ensure' to '2.0'", status: "ii 1.0"},
		{params: "{provider: dpkg, ensure: latest, source: " + v2 + "}", want: "changed", event: "ensure changed '1.0' to '2.0'", status: "ii 2.0"},
		{params: "{provider: dpkg, ensure: latest, source: " + v2 + "}", want: "unchanged", status: "ii 2.0"},
		{params: "{provider: dpkg, ensure: latest, source: " + v1 + "}", want: "changed", event: "ensure changed '2.0' to '1.0'", status: "ii 1.0"},
		{params: "{provider: dpkg, ensure: latest}", want: "failed: Could not evaluate Package[pippkgd]: Could not get latest version: Could not update: You cannot install dpkg packages without a source", status: "ii 1.0"},
		{params: "{provider: dpkg, ensure: absent}", want: "changed", event: "removed", status: "rc 1.0"},
		{params: "{provider: dpkg, ensure: absent}", want: "unchanged", status: "rc 1.0"},
		{params: "{provider: dpkg, ensure: purged}", want: "changed", event: "purged", status: ""},
		{params: "{provider: dpkg, ensure: purged}", want: "unchanged", status: ""},
		{params: "{provider: dpkg, ensure: absent}", want: "unchanged", status: ""},
		{params: "{provider: dpkg, ensure: latest, source: " + v2 + "}", want: "changed", event: "created", status: "ii 2.0"},
	})
	assert.Equal(t, "version 2.0\n", readFile(t, conf))
}

// TestConfigfiles: an upgrade keeps a locally changed conffile by default
// (--force-confold) and replaces it with `configfiles: replace`, with
// both providers.
func TestConfigfiles(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name, conf = "pippkgc", "/etc/pippkgc.conf"
	v1 := deb{name: name, version: "1.0", conffile: conf}.build(t, dir)
	v2 := deb{name: name, version: "2.0", conffile: conf}.build(t, dir)
	v3 := deb{name: name, version: "3.0", conffile: conf}.build(t, dir)
	repo(t, dir, v3)
	purgeAfter(t, name)
	e := newEngine(t)
	local := "edited here\n"
	runSteps(t, e, name, name, []step{{params: "{provider: dpkg, source: " + v1 + "}", want: "changed", status: "ii 1.0"}})
	require.NoError(t, os.WriteFile(conf, []byte(local), 0o644))
	runSteps(t, e, name, name, []step{{params: "{provider: dpkg, ensure: latest, source: " + v2 + "}", want: "changed", status: "ii 2.0"}})
	assert.Equal(t, local, readFile(t, conf), "configfiles keep (the default)")
	runSteps(t, e, name, name, []step{{params: "{ensure: latest, configfiles: replace}", want: "changed", event: "ensure changed '2.0' to '3.0'", status: "ii 3.0"}})
	assert.Equal(t, "version 3.0\n", readFile(t, conf), "configfiles replace (apt)")
	require.NoError(t, os.WriteFile(conf, []byte(local), 0o644))
	runSteps(t, e, name, name, []step{{params: "{provider: dpkg, ensure: latest, source: " + v1 + ", configfiles: replace}", want: "changed", status: "ii 1.0"}})
	assert.Equal(t, "version 1.0\n", readFile(t, conf), "configfiles replace (dpkg)")
}

// TestApt drives the apt provider against a local repository holding two
// versions: installed takes the candidate and never upgrades, a version
// installs (and downgrades to) exactly that version, a range the best
// version in it, latest the candidate; hold and removal of a held
// package; a version apt does not have fails, reported as Puppet does.
func TestApt(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name = "pippkga"
	v1 := deb{name: name, version: "1.0"}.build(t, dir)
	v2 := deb{name: name, version: "2.0"}.build(t, dir)
	repo(t, dir, v1, v2)
	purgeAfter(t, name)
	e := newEngine(t)
	runSteps(t, e, name, name, []step{
		{params: "{ensure: '1.0'}", want: "changed", event: "created", status: "ii 1.0"},
		{params: "{ensure: '1.0'}", want: "unchanged", status: "ii 1.0"},
		{params: "{ensure: installed}", want: "unchanged", status: "ii 1.0"},
		{params: "{ensure: latest}", want: "changed", event: "ensure changed '1.0' to '2.0'", status: "ii 2.0"},
		{params: "{ensure: latest}", want: "unchanged", status: "ii 2.0"},
		{params: "{ensure: '1.0'}", want: "changed", event: "ensure changed '2.0' to '1.0'", status: "ii 1.0"},
		{params: "{ensure: '>=1.0 <2.0'}", want: "unchanged", status: "ii 1.0"},
		{params: "{ensure: '>1.0'}", want: "changed", event: "ensure changed '1.0' to '>1.0'", status: "ii 2.0"},
		{params: "{ensure: '3.0'}", want: "failed: change from '2.0' to '3.0' failed: Could not update: Execution of '/usr/bin/apt-get", status: "ii 2.0"},
		{params: "{ensure: held}", want: "failed: change from '2.0' to 'held' failed: Could not update: Execution of '/usr/bin/apt-get", status: "ii 2.0"},
		{params: "{mark: hold}", want: "changed", event: "mark changed 'none' to 'hold'", status: "hi 2.0"},
		{params: "{mark: hold}", want: "unchanged", status: "hi 2.0"},
		{params: "{ensure: latest, mark: hold}", want: "unchanged", status: "hi 2.0"},
		{params: "{ensure: '1.0', mark: hold}", want: "changed", event: "ensure changed '2.0' to '1.0'", status: "hi 1.0"},
		{params: "{mark: none}", want: "changed", event: "mark changed 'hold' to 'none'", status: "ii 1.0"},
		{params: "{mark: hold}", want: "changed", status: "hi 1.0"},
		{params: "{ensure: absent}", want: "changed", event: "removed", status: ""}, // no conffile: dpkg forgets it
		{params: "{ensure: latest}", want: "changed", event: "created", status: "ii 2.0"},
		{params: "{ensure: purged}", want: "changed", event: "purged", status: ""},
		{params: "{ensure: absent}", want: "unchanged", status: ""},
	})
	assert.Equal(t, "", selection(t, name), "purged: no selection left")
}

// TestAptUnknown is the oracle's package-apt-unknown: a package apt does
// not know fails to install and is in sync when absent.
func TestAptUnknown(t *testing.T) {
	needRoot(t)
	const name = "pippkg-no-such-package"
	purgeAfter(t, name)
	e := newEngine(t)
	runSteps(t, e, name, name, []step{
		{params: "{ensure: present}", want: "failed: change from 'purged' to 'present' failed: Execution of '/usr/bin/apt-get -o DPkg::Lock::Timeout=60 -q -y -o DPkg::Options::=--force-confold install pippkg-no-such-package' returned 100"},
		{params: "{ensure: absent}", want: "unchanged"},
		{params: "{ensure: latest}", want: "failed: change from 'purged' to 'latest' failed: Could not update: Execution of"},
	})
}

// TestNameAndVirtual: the name attribute is the package, the title only
// the reference; allow_virtual lets a virtual name stand for the installed
// package providing it.
func TestNameAndVirtual(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name = "pippkgv"
	v1 := deb{name: name, version: "1.0", provides: "pippkgvirt"}.build(t, dir)
	purgeAfter(t, name, "pippkgvirt")
	e := newEngine(t)
	res := e.Apply("package", "my package", "{name: pippkgv, provider: dpkg, source: "+v1+"}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "Package[my package]", res.Resource)
	assert.Equal(t, "ii 1.0", status(t, name))

	// Without allow_virtual the virtual name is a package of its own,
	// which is not installed: absent is in sync.
	res = e.Apply("package", "pippkgvirt", "{ensure: absent}")
	require.Equal(t, "unchanged", typetest.Summary(res))
	assert.Equal(t, "ii 1.0", status(t, name))
	// With it, the providing package is the one managed.
	res = e.Apply("package", "pippkgvirt", "{ensure: installed, allow_virtual: true}")
	require.Equal(t, "unchanged", typetest.Summary(res), e.Log())
	res = e.Apply("package", "pippkgvirt", "{ensure: absent, allow_virtual: true}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "", status(t, name), "removed (no conffile: dpkg forgets it)")
}

// TestOptions: install_options reach apt-get (an option it does not know
// makes it fail, naming it) and are ignored by dpkg, as Puppet ignores
// them; uninstall_options are accepted and ignored by both; a responsefile
// is preseeded into debconf before apt installs.
func TestOptions(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name = "pippkgo"
	v1 := deb{name: name, version: "1.0"}.build(t, dir)
	repo(t, dir, v1)
	purgeAfter(t, name)
	t.Cleanup(func() { _ = runStdin("PURGE\n", "debconf-communicate", name) })
	e := newEngine(t)

	res := e.Apply("package", name, "{install_options: ['--no-such-option']}")
	require.True(t, res.Failed, typetest.Summary(res))
	assert.Contains(t, res.Exception, "--no-such-option install pippkgo' returned 100")
	assert.Equal(t, "", status(t, name))

	pre := filepath.Join(dir, "preseed")
	require.NoError(t, os.WriteFile(pre, []byte(name+" "+name+"/greeting string hello\n"), 0o644))
	res = e.Apply("package", name, "{responsefile: "+pre+", install_options: ['--no-install-recommends', {'-o': 'APT::Get::Show-Versions=1'}]}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "ii 1.0", status(t, name))
	assert.Contains(t, readFile(t, "/var/cache/debconf/config.dat"), "Name: "+name+"/greeting")

	res = e.Apply("package", name, "{ensure: absent, uninstall_options: ['--no-such-option']}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "", status(t, name))
	res = e.Apply("package", name, "{provider: dpkg, source: "+v1+", install_options: ['--no-such-option']}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "ii 1.0", status(t, name))
}

// TestNoop: nothing is installed or removed in noop mode; the answer says
// what would have changed.
func TestNoop(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name = "pippkgn"
	v1 := deb{name: name, version: "1.0"}.build(t, dir)
	purgeAfter(t, name)
	e := newEngine(t)
	res := e.Apply("package", name, "{provider: dpkg, source: "+v1+", noop: true}")
	assert.Equal(t, "unchanged", typetest.Summary(res))
	assert.True(t, res.Noop)
	assert.Equal(t, "ensure: current_value 'purged', should be 'present' (noop) (noop)\n", typetest.Events(res))
	assert.Equal(t, "", status(t, name))
}

// TestRefused: what Puppet 7 refuses before touching anything (and what
// this receiver refuses besides: names and files that would reach the
// tools as options).
func TestRefused(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct{ params, want string }{
		{"{ensure: absent, mark: hold}", `You cannot use "mark" property while "ensure" is one of ["absent", "purged"]`},
		{"{ensure: purged, mark: none}", `You cannot use "mark" property while "ensure" is one of ["absent", "purged"]`},
		{"{provider: dpkg, ensure: '1.0'}", "Provider dpkg must have features 'versionable' to set 'ensure' to '1.0'"},
		{"{provider: dpkg, ensure: held}", "Provider dpkg must have features 'versionable' to set 'ensure' to 'held'"},
		{"{mark: frozen}", "Invalid value"},
		{"{configfiles: merge}", "Invalid value"},
		{"{allow_virtual: maybe}", "allow_virtual"},
		{"{ensure: ''}", "Invalid value"},
		{"{name: 42}", "Name must be a String not Integer"},
		{"{name: '-oDebug::X=1'}", "Invalid package name"},
		{"{source: '--force-all'}", "Invalid source"},
		{"{responsefile: '-x'}", "Invalid responsefile"},
		{"{install_options: [1]}", "Expected either a string or hash of options"},
		{"{provider: yum}", `Invalid value "yum". Valid values are apt, dpkg.`},
		{"{colour: blue}", "no parameter named 'colour'"},
	} {
		res := e.Apply("package", "pippkgr", c.params)
		assert.True(t, res.Error, "%s: %s", c.params, typetest.Summary(res))
		assert.Contains(t, res.Exception, c.want, c.params)
	}
}

// TestLockHeld: while another process holds the dpkg lock, apt-get waits
// LockTimeout and fails with apt's own words, and dpkg fails at once;
// neither hangs. The test holds the lock itself (fcntl, as dpkg does).
func TestLockHeld(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name = "pippkgl"
	v1 := deb{name: name, version: "1.0"}.build(t, dir)
	purgeAfter(t, name)
	old := pkg.LockTimeout
	pkg.LockTimeout = 2 * time.Second
	t.Cleanup(func() { pkg.LockTimeout = old })

	f, err := os.OpenFile("/var/lib/dpkg/lock-frontend", os.O_RDWR|os.O_CREATE, 0o640)
	require.NoError(t, err)
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0}
	require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_SETLKW, &lk), "taking the dpkg frontend lock")

	e := newEngine(t)
	res := e.Apply("package", name, "{ensure: absent, provider: apt}")
	assert.Equal(t, "unchanged", typetest.Summary(res), "reading needs no lock")
	res = e.Apply("package", name, "{source: "+v1+"}")
	require.True(t, res.Failed, typetest.Summary(res))
	assert.Contains(t, res.Exception, "Could not get lock /var/lib/dpkg/lock-frontend")
	res = e.Apply("package", name, "{provider: dpkg, source: "+v1+"}")
	require.True(t, res.Failed, typetest.Summary(res))
	assert.Contains(t, res.Exception, "lock")
	assert.Equal(t, "", status(t, name))

	lk.Type = syscall.F_UNLCK
	require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk))
	res = e.Apply("package", name, "{provider: dpkg, source: "+v1+"}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
}
