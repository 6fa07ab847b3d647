package pkg

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// debVersion is a Debian version split as Puppet splits it
// (Puppet::Util::Package::Version::Debian): [epoch:]upstream[-revision].
type debVersion struct {
	epoch    int64
	upstream string
	revision string
	hasRev   bool
}

// debVersionRe is Puppet's expression: the upstream part is matched
// lazily, so the revision is what follows the last hyphen.
var debVersionRe = regexp.MustCompile(`^(?:([0-9]+):)?([.+~0-9a-zA-Z-]+?)(?:-([.+~0-9a-zA-Z]*))?$`)

func parseDebVersion(s string) (debVersion, error) {
	m := debVersionRe.FindStringSubmatchIndex(s)
	if m == nil {
		return debVersion{}, fmt.Errorf("Unable to parse '%s' as a debian version identifier", s)
	}
	var v debVersion
	if m[2] >= 0 {
		e, err := strconv.ParseInt(s[m[2]:m[3]], 10, 64)
		if err != nil {
			return debVersion{}, fmt.Errorf("Unable to parse '%s' as a debian version identifier", s)
		}
		v.epoch = e
	}
	v.upstream = s[m[4]:m[5]]
	if m[6] >= 0 {
		v.revision, v.hasRev = s[m[6]:m[7]], true
	}
	return v, nil
}

// equal is Puppet's eql?: the same epoch, upstream and revision (a
// missing revision differs from an empty one).
func (v debVersion) equal(o debVersion) bool {
	return v.epoch == o.epoch && v.upstream == o.upstream && v.hasRev == o.hasRev && v.revision == o.revision
}

// compare orders two versions as Puppet's Debian version class does.
func (v debVersion) compare(o debVersion) int {
	switch {
	case v.epoch < o.epoch:
		return -1
	case v.epoch > o.epoch:
		return 1
	}
	if c := compareDebParts(v.upstream, o.upstream); c != 0 {
		return c
	}
	return compareDebParts(v.revision, o.revision)
}

func span(s string, i int, in func(byte) bool) int {
	j := i
	for j < len(s) && in(s[j]) {
		j++
	}
	return j
}

func isTilde(c byte) bool  { return c == '~' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isPunct(c byte) bool  { return c == '.' || c == '+' || c == '-' }

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareDebParts is Puppet's compare_debian_versions: runs of tildes
// (more sort earlier), letters, punctuation and digits (numerically),
// alternately, until one string ends; then a remaining tilde sorts
// earlier, else the longer string later.
func compareDebParts(a, b string) int {
	i, j, c := 0, 0, 0
	for i < len(a) && j < len(b) && c == 0 {
		i0, j0 := i, j
		ti, tj := span(a, i, isTilde), span(b, j, isTilde)
		c = -cmpInt(ti-i, tj-j)
		i, j = ti, tj
		if c != 0 {
			break
		}
		li, lj := span(a, i, isLetter), span(b, j, isLetter)
		c = strings.Compare(a[i:li], b[j:lj])
		i, j = li, lj
		if c != 0 {
			break
		}
		pi, pj := span(a, i, isPunct), span(b, j, isPunct)
		c = strings.Compare(a[i:pi], b[j:pj])
		i, j = pi, pj
		if c != 0 {
			break
		}
		di, dj := span(a, i, isDigit), span(b, j, isDigit)
		c = compareDigits(a[i:di], b[j:dj])
		i, j = di, dj
		if i == i0 && j == j0 {
			break // no class matched on either side (not a version)
		}
	}
	if c == 0 {
		switch {
		case i < len(a) && a[i] == '~':
			c = -1
		case j < len(b) && b[j] == '~':
			c = 1
		default:
			c = cmpInt(len(a), len(b))
		}
	}
	return c
}

// compareDigits compares two runs of digits as numbers of any length
// (an empty run is zero).
func compareDigits(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if c := cmpInt(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// versionBound is one comparison of a version range: op is "", ">",
// ">=", "<" or "<=".
type versionBound struct {
	op string
	v  debVersion
}

func (b versionBound) includes(v debVersion) bool {
	switch b.op {
	case "":
		return v.equal(b.v)
	case ">":
		return v.compare(b.v) > 0
	case ">=":
		return v.compare(b.v) >= 0
	case "<":
		return v.compare(b.v) < 0
	case "<=":
		return v.compare(b.v) <= 0
	}
	return false
}

// versionRange is Puppet's Version::Range over Debian versions: one bound
// (`1.0`, `>1.0`, `<=2.0`) or two separated by whitespace, both of which
// must hold (`>=1.0 <2.0`; words after the second are ignored, as Puppet
// ignores them).
type versionRange []versionBound

var rangeWordRe = regexp.MustCompile(`^([<>=]*)(.+)$`)

func parseVersionRange(s string) (versionRange, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return nil, fmt.Errorf("Unable to parse '%s' as a version range identifier", s)
	}
	var r versionRange
	for _, w := range words {
		m := rangeWordRe.FindStringSubmatch(w)
		if m == nil {
			return nil, fmt.Errorf("Unable to parse '%s' as a version range identifier", w)
		}
		switch m[1] {
		case "", ">", ">=", "<", "<=":
		default:
			return nil, fmt.Errorf("Operator '%s' is not implemented", m[1])
		}
		v, err := parseDebVersion(m[2])
		if err != nil {
			return nil, err
		}
		r = append(r, versionBound{op: m[1], v: v})
	}
	if len(r) > 2 {
		r = r[:2]
	}
	return r, nil
}

// exact reports whether the range is one plain version.
func (r versionRange) exact() bool { return len(r) == 1 && r[0].op == "" }

func (r versionRange) includes(v debVersion) bool {
	for _, b := range r {
		if !b.includes(v) {
			return false
		}
	}
	return true
}

// versionSatisfies is apt's in-sync test for a version string: should,
// read as a range of Debian versions, includes the installed version.
func versionSatisfies(installed, should string) bool {
	r, err := parseVersionRange(should)
	if err != nil {
		return false
	}
	v, err := parseDebVersion(installed)
	if err != nil {
		return false
	}
	return r.includes(v)
}
