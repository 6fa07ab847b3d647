package yamlparams

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// TestFastParamsAgreesOnRandomDocuments builds documents from the pieces
// the fast path reads (and pieces near them: tabs, blank lines, odd
// indentation, escapes it must decline, YAML line breaks) and checks that
// whenever the fast path answers, the yaml.v3 path accepts the document
// and gives the same mapping. It reaches far more of the fast grammar than
// byte-level fuzzing does; FuzzParse checks the same property.
func TestFastParamsAgreesOnRandomDocuments(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(6, 1))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	keys := []string{"ensure", "mode", "content", "a", "b_2", "yes", "x", "_k"}
	plain := []string{"file", "0644", "1.5", "yes", "Off", "~", "null", "-3", "+.5", "/etc/motd", "a b", "a  b",
		"2001-12-14", "1:20", "0x1F", ".inf", "a=b", "x-y", "09", "0b1", "1e3", "hello world", "a #b", "a#b", ":sym", "é"}
	chars := []string{"a", " ", "  ", "\t", "'", "''", "\"", "\\", "é", "日", "😀", "\u0085", "\u2028", "\ufeff", "#", ":", ",", "}", "{", "-", "|"}
	escapes := []string{`\n`, `\t`, `\\`, `\"`, `\'`, `\0`, `\a`, `\b`, `\e`, `\v`, `\f`, `\r`, `\ `, `\N`, `\_`, `\L`, `\P`,
		`\x41`, `\xe9`, `\x`, `\u00e9`, `\ud800`, `\U0001F600`, `\U00110000`, `\/`, `\q`, `\` + "\t", `\`}
	text := func(esc bool) string {
		var b strings.Builder
		for range rng.IntN(5) {
			if esc && rng.IntN(3) == 0 {
				b.WriteString(pick(escapes))
			} else {
				b.WriteString(pick(chars))
			}
		}
		return b.String()
	}
	scalar := func() string {
		switch rng.IntN(3) {
		case 0:
			return pick(plain)
		case 1:
			return "'" + text(false) + "'"
		}
		return `"` + text(true) + `"`
	}
	literal := func() string {
		ind := strings.Repeat(" ", 1+rng.IntN(3))
		var b strings.Builder
		b.WriteString(pick([]string{"|", "|-", "|+", "| ", "|2", ">"}) + "\n")
		for range 1 + rng.IntN(3) {
			switch rng.IntN(8) {
			case 0:
				b.WriteString("\n")
			case 1:
				b.WriteString(ind + "\n")
			case 2:
				b.WriteString(ind + "  " + text(false) + "\n")
			case 3:
				b.WriteString(ind[1:] + text(false) + "\n")
			default:
				b.WriteString(ind + "x" + text(false) + "\n")
			}
		}
		if rng.IntN(8) == 0 {
			return strings.TrimSuffix(b.String(), "\n")
		}
		return b.String()
	}
	took := 0
	for range n {
		var doc string
		k := 1 + rng.IntN(3)
		if rng.IntN(2) == 0 {
			parts := make([]string, k)
			for i := range parts {
				parts[i] = pick(keys) + pick([]string{": ", " : ", ":  "}) + scalar()
			}
			doc = "{" + strings.Join(parts, pick([]string{", ", ",", " , "})) + "}"
		} else {
			var b strings.Builder
			for range k {
				b.WriteString(pick(keys) + ": ")
				if rng.IntN(2) == 0 {
					b.WriteString(literal())
				} else {
					b.WriteString(scalar() + pick([]string{"\n", "\n", "  \n", " # c\n", ""}))
				}
			}
			doc = b.String()
		}
		fast, ok := fastParams([]byte(doc))
		if !ok {
			continue
		}
		took++
		slow, err := parseYAML([]byte(doc), nil)
		require.NoError(t, err, "fast path took %q, yaml.v3 path refused it", doc)
		require.True(t, testutil.EqualValues(fast, slow), "%q: fast %#v, yaml.v3 %#v", doc, fast, slow)
	}
	t.Logf("fast path took %d of %d documents", took, n)
	// The generator must reach the fast path often enough to mean something.
	require.Greater(t, took, n/10, "fast path took too few documents")
}
