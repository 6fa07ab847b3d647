package pkg

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompareDebVersions: the order Puppet's Debian version class (and
// dpkg) gives.
func TestCompareDebVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0", 0},
		{"1.0", "2.0", -1},
		{"1.10", "1.9", 1},
		{"1.0~rc1", "1.0", -1},
		{"1.0~~", "1.0~", -1},
		{"1.0a", "1.0", 1},
		{"1:1.0", "2.0", 1},
		{"1.0-1", "1.0-2", -1},
		{"2.36-9+deb12u14", "2.36-9+deb12u9", 1},
		{"1.0+b1", "1.0", 1},
		{"0001.0", "1.0", 1}, // Puppet: equal parts, then the longer string is later (dpkg: equal)
		{"1.0.0", "1.0", 1},
	} {
		a, err := parseDebVersion(c.a)
		require.NoError(t, err, c.a)
		b, err := parseDebVersion(c.b)
		require.NoError(t, err, c.b)
		assert.Equal(t, c.want, a.compare(b), "%s vs %s", c.a, c.b)
		assert.Equal(t, -c.want, b.compare(a), "%s vs %s", c.b, c.a)
	}
	_, err := parseDebVersion("1.0 beta")
	assert.Error(t, err)
	v, err := parseDebVersion("2:1.0-1-3")
	require.NoError(t, err)
	assert.Equal(t, debVersion{epoch: 2, upstream: "1.0-1", revision: "3", hasRev: true}, v)
}

// TestEnsureInSync is Puppet's package ensure insync? with apt's version
// ranges.
func TestEnsureInSync(t *testing.T) {
	for _, c := range []struct {
		is   string
		want any
		sync bool
	}{
		{"1.0", "present", true},
		{"absent", "present", false},
		{"purged", "present", false},
		{"absent", "absent", true},
		{"purged", "absent", true},
		{"absent", "purged", false},
		{"purged", "purged", true},
		{"1.0", "absent", false},
		{"1.0", "latest", false},
		{"1.0", Latest("1.0"), true},
		{"1.0", Latest("2.0"), false},
		{"1.0", "1.0", true},
		{"1.0", "1.0-1", false},
		{"1.0", ">=1.0 <2.0", true},
		{"2.0", ">=1.0 <2.0", false},
		{"2.0", ">1.0", true},
		{"1.5", "<=1.5", true},
		{"1.5", "<1.5", false},
		{"purged", ">1.0", false},
		{"1.0", "held", false},
		{"1.0", ">>1.0", false},
	} {
		assert.Equal(t, c.sync, ensureInSync(c.is, c.want), "is %s, should %v", c.is, c.want)
	}
}

// TestParseStatus: the fields read from a dpkg status file, Puppet's
// ensure and mark for each state, multiarch and virtual names.
func TestParseStatus(t *testing.T) {
	db, err := parseStatus([]byte(`Package: a
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 1.0-1
Description: x
 continued: not a field
Provides: v1, v2 (= 1.0)

Package: b
Status: hold ok installed
Architecture: all
Version: 2:3.0

Package: c
Status: deinstall ok config-files
Version: 1.0

Package: d
Status: purge ok not-installed

Package: e
Status: install reinstreq half-installed
Version: 0.1

Package: m
Status: install ok installed
Architecture: i386
Version: 1

Package: m
Status: install ok installed
Architecture: ` + nativeArch + `
Version: 2
`))
	require.NoError(t, err)
	got := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e", "m", "m:i386", "zz"} {
		if e := db.lookup(n); e != nil {
			got[n] = e.ensure() + " " + e.mark() + " " + e.Eflag
		}
	}
	assert.Equal(t, map[string]string{
		"a": "1.0-1 none ok", "b": "2:3.0 hold ok", "c": "absent none ok", "d": "purged none ok",
		"e": "absent none reinstreq", "m": "2 none ok", "m:i386": "1 none ok",
	}, got)
	require.NotNil(t, db.provider("v1"))
	assert.Equal(t, "a", db.provider("v1").Name)
	assert.Nil(t, db.provider("v2"), "a versioned Provides does not match, as in Puppet")
}
