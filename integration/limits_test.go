package integration

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol"
)

// afterLine is the valid request sent after each hostile input.
const afterLine = `{"type":"notify","title":"after","params":"{message: still here}","id":"after"}` + "\n"

// checkAfter asserts the last answer is the one to afterLine: decoded and
// applied successfully.
func checkAfter(t *testing.T, a testutil.Answer) {
	t.Helper()
	require.NotNil(t, a.Resource, "the request after the bad input must be answered")
	assert.Equal(t, "Notify[after]", *a.Resource)
	assert.Equal(t, `"after"`, string(a.ID))
	assert.False(t, a.Error, "exception: %v", a.Exception)
	assert.False(t, a.Failed)
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString(`{a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]`)
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(", " + n + ": &" + n + " [")
		for k := 0; k < 9; k++ {
			if k > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]")
		prev = n
	}
	b.WriteString("}")
	return b.String()
}

// TestHostileInput: each input gets error answers, quickly, and the next
// valid request still succeeds, against the real binary.
func TestHostileInput(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var random bytes.Buffer
	for i := 0; i < 10000; i++ {
		line := make([]byte, 1+rng.Intn(200))
		rng.Read(line)
		line = bytes.ReplaceAll(line, []byte("\n"), []byte("?"))
		if protocol.Skip(line) {
			line = append([]byte("x"), line...)
		}
		random.Write(line)
		random.WriteByte('\n')
	}
	// Random text made of the characters requests are made of: it gets past
	// the byte checks into the JSON, legacy and YAML readers.
	const alphabet = `{}[]":,'\\ #&*!|>-?~0123456789abcdefxyz{}":`
	var texty bytes.Buffer
	for i := 0; i < 10000; i++ {
		n := 1 + rng.Intn(60)
		line := make([]byte, 0, n+1)
		if rng.Intn(2) == 0 {
			line = append(line, '{')
		}
		for len(line) < n {
			line = append(line, alphabet[rng.Intn(len(alphabet))])
		}
		if protocol.Skip(line) {
			line = append([]byte("x"), line...)
		}
		texty.Write(line)
		texty.WriteByte('\n')
	}
	tests := []struct {
		name    string
		input   func() io.Reader
		answers int    // error answers before afterLine's
		msg     string // in the first error's exception
		within  time.Duration
	}{
		{"64 MiB line", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"type":"notify","title":"big","params":"{message: `),
				io.LimitReader(repeat('x'), 64<<20), strings.NewReader("}\"}\n"+afterLine))
		}, 1, "is longer than the limit of 16777216 bytes", 20 * time.Second},
		{"billion laughs", func() io.Reader {
			return strings.NewReader(`{"type":"notify","title":"lol","params":"` + billionLaughs() + `"}` + "\n" + afterLine)
		}, 1, "more than 100000 values", 5 * time.Second},
		{"billion laughs legacy", func() io.Reader {
			return strings.NewReader("notify lol " + billionLaughs() + "\n" + afterLine)
		}, 1, "more than 100000 values", 5 * time.Second},
		{"8 MiB flow list", func() io.Reader {
			return strings.NewReader(`{"type":"notify","title":"wide","params":"{message: [` + strings.Repeat("1,", 4<<20) + `1]}"}` + "\n" + afterLine)
		}, 1, "document has more than 100000 values", 5 * time.Second},
		{"invalid UTF-8", func() io.Reader {
			return strings.NewReader("{\"type\":\"notify\",\"title\":\"caf\xe9\",\"params\":\"{}\"}\nnotify x {message: \xff\xfe}\n" + afterLine)
		}, 2, "not valid UTF-8 at byte 30 (0xe9)", 5 * time.Second},
		{"NUL bytes", func() io.Reader {
			return strings.NewReader("{\"type\":\"notify\",\"title\":\"a\x00b\",\"params\":\"{}\"}\n\x00\x00\x00\n" +
				`{"type":"notify","title":"a\u0000b","params":"{}"}` + "\n" + afterLine)
		}, 3, "NUL byte at byte 28", 5 * time.Second},
		{"10000 lines of random request-like text", func() io.Reader {
			return io.MultiReader(bytes.NewReader(texty.Bytes()), strings.NewReader(afterLine))
		}, 10000, "", 60 * time.Second},
		{"10000 lines of random bytes", func() io.Reader {
			return io.MultiReader(bytes.NewReader(random.Bytes()), strings.NewReader(afterLine))
		}, 10000, "", 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			out, stderr, code := run(t, t.TempDir(), tt.input())
			elapsed := time.Since(start)
			assert.Equal(t, 0, code, "stderr: %.2000s", stderr)
			assert.Less(t, elapsed, tt.within)
			banner, as := testutil.DecodeAnswers(t, out)
			assert.Equal(t, strings.TrimSuffix(protocol.Banner, "\n"), banner)
			require.Len(t, as, tt.answers+1)
			for i, a := range as[:tt.answers] {
				assert.True(t, a.Error && a.Failed && !a.Changed, "answer %d: %+v", i, a)
				require.NotNil(t, a.Exception, "answer %d", i)
			}
			if tt.msg != "" {
				assert.Contains(t, *as[0].Exception, tt.msg)
			}
			checkAfter(t, as[len(as)-1])
		})
	}
}

type repeatReader struct{ chunk []byte }

func repeat(b byte) io.Reader { return &repeatReader{chunk: bytes.Repeat([]byte{b}, 64<<10)} }

func (r *repeatReader) Read(p []byte) (int, error) { return copy(p, r.chunk), nil }
