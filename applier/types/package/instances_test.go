package pkg_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	pkg "github.com/pippet/pippet/applier/types/package"
	"github.com/pippet/pippet/applier/typetest"
)

// TestInstances lists the real dpkg database with both providers, around
// a package built here: installed it is listed with its version, held
// with mark hold, removed (its conffile left) as absent, purged not at
// all; and the listing holds what `dpkg-query -W` names, each with the
// state a find of that name reports.
func TestInstances(t *testing.T) {
	needRoot(t)
	dir := kitDir(t)
	const name, conf = "pippkgl", "/etc/pippkgl.conf"
	v1 := deb{name: name, version: "1.5", conffile: conf}.build(t, dir)
	purgeAfter(t, name)
	e := newEngine(t)

	state := func(spec string) (ensure, mark any, ok bool) {
		st := typetest.FindListed(typetest.List(t, pkg.Type, map[string]*applier.ProviderSpec{"apt": pkg.Apt, "dpkg": pkg.Dpkg}[spec], nil), name)
		if st == nil {
			return nil, nil, false
		}
		return st.Value("ensure"), st.Value("mark"), true
	}
	_, _, ok := state("apt")
	require.False(t, ok, "not installed yet")

	sh(t, "dpkg", "-i", v1)
	for _, spec := range []string{"apt", "dpkg"} {
		ensure, mark, ok := state(spec)
		require.True(t, ok, spec)
		assert.Equal(t, "1.5", ensure, spec)
		assert.Equal(t, "none", mark, spec)
	}
	require.NoError(t, runStdin(name+" hold\n", "dpkg", "--set-selections"))
	_, mark, _ := state("apt")
	assert.Equal(t, "hold", mark)
	// What the listing reports is what apply compares with: unchanged.
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("package", name, "{ensure: '1.5', mark: hold}")))
	require.NoError(t, runStdin(name+" install\n", "dpkg", "--set-selections"))

	sh(t, "dpkg", "-r", name)
	ensure, mark, ok := state("dpkg")
	require.True(t, ok, "config-files are listed")
	assert.Equal(t, "absent", ensure)
	assert.Nil(t, mark, "an absent package has no mark")
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("package", name, "{ensure: absent}")))

	sh(t, "dpkg", "--purge", name)
	_, _, ok = state("apt")
	assert.False(t, ok, "a purged package is not listed")

	// The whole listing: what dpkg-query -W lists (it leaves out what
	// is not-installed), once per name, in name order.
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n").Output()
	require.NoError(t, err)
	want := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if _, dup := want[f[0]]; !dup {
			want[f[0]] = f[1]
			if strings.ContainsRune("chuf", rune(f[2][1])) { // config-files, half-installed, unpacked, half-configured
				want[f[0]] = "absent"
			}
		}
	}
	list := typetest.List(t, pkg.Type, pkg.Apt, nil)
	require.Len(t, list, len(want))
	for i, l := range list {
		if i > 0 {
			require.Less(t, list[i-1].Title, l.Title)
		}
		assert.Equal(t, want[l.Title], l.State.Value("ensure"), l.Title)
	}
}
