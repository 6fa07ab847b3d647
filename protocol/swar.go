package protocol

import "encoding/binary"

// Scanning eight bytes at a time: a line or a document is mostly runs of
// plain ASCII, and the tests below find whether a little-endian word of
// eight bytes holds a byte that needs a closer look. Each is exact about
// whether such a byte exists (not about which one it is), so a word that
// passes holds none.
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
		if (hasByte(w, '"')|hasByte(w, '\\')|hasBelow(w, 0x20))&msb != 0 {
			break
		}
		i += 8
	}
	for i < len(b) && !strStop[b[i]] {
		i++
	}
	return i
}

// skipPrintableASCII skips whole words of printable ASCII (0x20 to 0x7e)
// holding neither q nor a backslash, from i; it returns where it stopped,
// at most seven bytes before the next byte that is one of those.
func skipPrintableASCII(b []byte, i int, q byte) int {
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if (w|hasBelow(w, 0x20)|hasByte(w, 0x7f)|hasByte(w, q)|hasByte(w, '\\'))&msb != 0 {
			return i
		}
		i += 8
	}
	return i
}
