package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// A UTF-8 byte order mark at the start of the input (as editors and
// Windows tools write) is skipped, in either request form; one starting a
// later line is refused by name.
func TestByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	tests := []struct {
		name, in string
		want     []string // per answer: the resource, or "error: " and a part of the message
	}{
		{"json", bom + `{"type":"notify","title":"a","params":"{}"}` + "\n", []string{"Notify[a]"}},
		{"legacy", bom + "notify a {message: hi}\n", []string{"Notify[a]"}},
		{"comment first", bom + "# requests\n" + `{"type":"notify","title":"a","params":"{}"}` + "\n", []string{"Notify[a]"}},
		{"later line", `{"type":"notify","title":"a","params":"{}"}` + "\n" + bom + `{"type":"notify","title":"b","params":"{}"}` + "\n",
			[]string{"Notify[a]", "error: byte order mark (U+FEFF)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := run(t, t.TempDir(), strings.NewReader(tt.in), "--no-banner")
			require.Equal(t, 0, code, stderr)
			_, as := testutil.DecodeAnswers(t, out)
			require.Len(t, as, len(tt.want), out)
			for i, w := range tt.want {
				if msg, ok := strings.CutPrefix(w, "error: "); ok {
					assert.True(t, as[i].Error, out)
					require.NotNil(t, as[i].Exception, out)
					assert.Contains(t, *as[i].Exception, msg)
					continue
				}
				require.NotNil(t, as[i].Resource, out)
				assert.Equal(t, w, *as[i].Resource)
				assert.False(t, as[i].Failed, out)
			}
		})
	}
}
