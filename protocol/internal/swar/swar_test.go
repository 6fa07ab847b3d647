package swar

import (
	"math/rand/v2"
	"testing"
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
		if got := SkipJSONPlain(b, from); got != want {
			t.Fatalf("case %d: SkipJSONPlain(%q, %d) = %d, want %d", n, b, from, got, want)
		}

		safe := from
		for safe < len(b) && b[safe] >= 0x20 && b[safe] < 0x80 && b[safe] != '"' && b[safe] != '\\' {
			safe++
		}
		if got := SkipJSONSafe(string(b), from); got != safe {
			t.Fatalf("case %d: SkipJSONSafe(%q, %d) = %d, want %d", n, b, from, got, safe)
		}

		q := []byte{'"', '\'', '\n'}[n%3]
		stop := from
		for stop < len(b) && b[stop] >= 0x20 && b[stop] < 0x7f && b[stop] != q && b[stop] != '\\' {
			stop++
		}
		if got := SkipPrintableASCII(b, from, q); got != stop {
			t.Fatalf("case %d: SkipPrintableASCII(%q, %d, %q) = %d, want %d", n, b, from, q, got, stop)
		}

		text := from
		for text < len(b) && b[text] >= 0x20 && b[text] < 0x80 {
			text++
		}
		if got := SkipText(b, from); got != text {
			t.Fatalf("case %d: SkipText(%q, %d) = %d, want %d", n, b, from, got, text)
		}
	}
}
