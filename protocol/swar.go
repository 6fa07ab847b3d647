package protocol

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Scanning eight bytes at a time: a line or a document is mostly runs of
// plain ASCII, and the tests below find whether a little-endian word of
// eight bytes holds a byte that needs a closer look. Each is exact about
// whether such a byte exists, and the lowest flagged byte is the first
// such byte (a borrow can flag a byte above it, never one below), so
// bits.TrailingZeros64(mask)/8 is its index in the word.
const lsb, msb = 0x0101010101010101, 0x8080808080808080

// hasByte: some byte of w equals c (in its top bit, ANDed with msb).
func hasByte(w uint64, c byte) uint64 {
	x := w ^ (lsb * uint64(c))
	return (x - lsb) &^ x
}

// hasBelow: some byte of w is below n, for n <= 0x80 (top bit as above).
func hasBelow(w uint64, n byte) uint64 { return (w - lsb*uint64(n)) &^ w }

// skipJSONPlain returns the index of the first '"', '\\' or control byte
// in b at or after i, or len(b).
func skipJSONPlain(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := (hasByte(w, '"') | hasByte(w, '\\') | hasBelow(w, 0x20)) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(b) && !strStop[b[i]] {
		i++
	}
	return i
}

// skipPrintableASCII returns the index of the first byte in b at or
// after i that is not printable ASCII (0x20 to 0x7e), or is q or a
// backslash; len(b) if there is none.
func skipPrintableASCII(b []byte, i int, q byte) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := (w | hasBelow(w, 0x20) | hasByte(w, 0x7f) | hasByte(w, q) | hasByte(w, '\\')) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f && b[i] != q && b[i] != '\\' {
		i++
	}
	return i
}

// skipJSONSafe returns the index of the first byte of s at or after i that
// a JSON string cannot hold as it is: '"', '\\', a control byte or any
// byte of a multi-byte character (which then needs checking); len(s) if
// there is none.
func skipJSONSafe(s string, i int) int {
	for i+8 <= len(s) {
		t := s[i : i+8] // (one bounds check; the loads below combine)
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		if m := (w | hasByte(w, '"') | hasByte(w, '\\') | hasBelow(w, 0x20)) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	return i
}
