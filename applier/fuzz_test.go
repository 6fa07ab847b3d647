package applier_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
)

// FuzzMungeValue: munging never panics, and munging a munged value again
// gives the same value (defaults and computed values are munged twice).
func FuzzMungeValue(f *testing.F) {
	for _, s := range []string{"", "/", "//a//", "abc", "12", "-3", "yes", "true", "absent", "0777", "a b", "\x00", "1e3"} {
		f.Add(s)
	}
	attrs := []*applier.Attr{
		{Name: "s", Kind: applier.KindString},
		{Name: "i", Kind: applier.KindInteger, Values: []string{"absent"}},
		{Name: "b", Kind: applier.KindBoolean},
		{Name: "e", Kind: applier.KindEnum, Values: []string{"a", "true"}, Aliases: map[string]string{"yes": "true"},
			Patterns: []*regexp.Regexp{regexp.MustCompile(`^\d+$`)}},
		{Name: "p", Kind: applier.KindPath},
		{Name: "any", Kind: applier.KindAny},
		{Name: "arr", Kind: applier.KindInteger, Array: true},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range attrs {
			for _, raw := range []any{s, []any{s, s}} {
				v, err := applier.MungeValue(a, raw)
				if err != nil {
					continue
				}
				again, err := applier.MungeValue(a, v)
				require.NoError(t, err, "%s: %#v", a.Name, v)
				assert.Equal(t, v, again, a.Name)
			}
		}
	})
}
