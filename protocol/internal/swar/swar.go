// Package swar scans bytes eight at a time (SIMD within a register): a
// request line, a params document or an answer's string is mostly runs of
// plain ASCII, and each scan here finds the first byte that needs a closer
// look (a quote, a backslash, a control byte, a byte of a multi-byte
// character) with a few word operations per eight bytes.
//
// The word tests find whether a little-endian word of eight bytes holds
// such a byte. Each is exact about whether one exists, and the lowest
// flagged byte is the first (a borrow can flag a byte above it, never one
// below), so bits.TrailingZeros64(mask)/8 is its index in the word.
package swar

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

const lsb, msb = 0x0101010101010101, 0x8080808080808080

// hasByte: some byte of w equals c (in its top bit, ANDed with msb).
func hasByte(w uint64, c byte) uint64 {
	x := w ^ (lsb * uint64(c))
	return (x - lsb) &^ x
}

// hasBelow: some byte of w is below n, for n <= 0x80 (top bit as above).
func hasBelow(w uint64, n byte) uint64 { return (w - lsb*uint64(n)) &^ w }

// SkipText returns the index of the first byte in b at or after i that is
// not printable ASCII: a control byte (tab included) or a byte of a
// multi-byte character; len(b) if there is none.
func SkipText(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := (w | hasBelow(w, 0x20)) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(b) && b[i] >= 0x20 && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// jsonStop marks the bytes that end a run of plain bytes in a JSON string:
// the closing quote, a backslash, a control character.
var jsonStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// SkipJSONPlain returns the index of the first '"', '\\' or control byte
// in b at or after i, or len(b).
func SkipJSONPlain(b []byte, i int) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := (hasByte(w, '"') | hasByte(w, '\\') | hasBelow(w, 0x20)) & msb; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(b) && !jsonStop[b[i]] {
		i++
	}
	return i
}

// SkipPrintableASCII returns the index of the first byte in b at or
// after i that is not printable ASCII (0x20 to 0x7e), or is q or a
// backslash; len(b) if there is none.
func SkipPrintableASCII(b []byte, i int, q byte) int {
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

// SkipJSONSafe returns the index of the first byte of s at or after i that
// a JSON string cannot hold as it is: '"', '\\', a control byte or any
// byte of a multi-byte character (which then needs checking); len(s) if
// there is none.
func SkipJSONSafe(s string, i int) int {
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
