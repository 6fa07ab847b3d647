package protocol

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// The word-at-a-time scans agree with the byte-at-a-time definitions on
// random bytes drawn mostly from the bytes they stop at.
func TestSWARScansAgreeWithBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	special := []byte{'"', '\\', '\'', '\n', '\t', 0, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xa9, 0xc3, 0xe2, 0xff, 'a'}
	for n := range 20000 {
		b := make([]byte, rng.IntN(60))
		density := 4 + rng.IntN(40) // one special byte in about this many
		for i := range b {
			if rng.IntN(density) == 0 {
				b[i] = special[rng.IntN(len(special))]
			} else {
				b[i] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		from := 0
		if len(b) > 0 {
			from = rng.IntN(len(b) + 1)
		}

		want := from
		for want < len(b) && b[want] != '"' && b[want] != '\\' && b[want] >= 0x20 {
			want++
		}
		if got := skipJSONPlain(b, from); got != want {
			t.Fatalf("case %d: skipJSONPlain(%q, %d) = %d, want %d", n, b, from, got, want)
		}

		safe := from
		for safe < len(b) && b[safe] >= 0x20 && b[safe] < 0x80 && b[safe] != '"' && b[safe] != '\\' {
			safe++
		}
		if got := skipJSONSafe(string(b), from); got != safe {
			t.Fatalf("case %d: skipJSONSafe(%q, %d) = %d, want %d", n, b, from, got, safe)
		}

		q := []byte{'"', '\'', '\n'}[n%3]
		stop := from
		for stop < len(b) && b[stop] >= 0x20 && b[stop] < 0x7f && b[stop] != q && b[stop] != '\\' {
			stop++
		}
		if got := skipPrintableASCII(b, from, q); got != stop {
			t.Fatalf("case %d: skipPrintableASCII(%q, %d, %q) = %d, want %d", n, b, from, q, got, stop)
		}

		if got, want := errText(checkBytes(b)), errText(checkBytesBytewise(b)); got != want {
			t.Fatalf("case %d: checkBytes(%q) = %q, bytewise %q", n, b, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkBytesBytewise is checkBytes one byte at a time.
func checkBytesBytewise(line []byte) error {
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' {
				if c == 0 {
					return fmt.Errorf("invalid request: NUL byte at byte %d", i+1)
				}
				return fmt.Errorf("invalid request: control character 0x%02x at byte %d", c, i+1)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("invalid request: not valid UTF-8 at byte %d (0x%02x)", i+1, c)
		}
		i += n
	}
	return nil
}
