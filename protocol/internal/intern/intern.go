// Package intern shares the short strings a stream of request lines
// repeats (a type name, attribute names, values such as a mode, an owner or
// a directory), so that a repeated one is a single string, and a single
// boxed value, instead of new ones on every line. It knows no names in
// advance: it learns them from the input, so that protocol stays ignorant
// of the types behind it.
//
// A Cache is set-associative: Sets sets of Ways slots, each holding a
// string of at most MaxLen bytes, so it is bounded whatever the input and
// a lookup costs a hash of two words and a few compares. A set replaces its
// slots in a clock (second chance): a slot hit since the hand last passed
// it is kept, so that values repeated on every line stay while the values
// unique to each line (titles, paths, contents) come and go in the other
// slots.
package intern

import "encoding/binary"

// Cache remembers recent short strings. A nil *Cache shares nothing: its
// methods make a new string (or value) every time. It is not safe for
// concurrent use.
type Cache struct {
	sets [Sets]cacheSet
}

const (
	setBits = 5
	// Sets is the number of sets, Ways the slots of each, Slots all of
	// them: how many strings a Cache keeps at most.
	Sets  = 1 << setBits
	Ways  = 4
	Slots = Sets * Ways
	// MaxLen is the longest text a Cache keeps; longer ones are never shared.
	MaxLen = 32
)

// Kind says what a text is, so that the same bytes read as different
// things (a plain 0644, an integer, and a quoted '0644', a string) do not
// share a slot.
type Kind byte

// The kinds of text the decoder shares.
const (
	TypeName Kind = 't'
	Key      Kind = 'k'
	Quoted   Kind = 'q' // a quoted string's value
	Plain    Kind = 'p' // a plain scalar's text and resolved value
)

// cacheSet is one set of the cache and its clock hand.
type cacheSet struct {
	slots [Ways]slot
	hand  uint8
}

type slot struct {
	// meta is the text's length and kind, 0 for an empty slot; w0 and w1
	// its words (textWords).
	meta   uint32
	used   bool // hit since the clock hand last passed
	w0, w1 uint64
	text   string // the bytes as written
	v      any    // their value
}

// textWords reads a short string as two words: its first and last eight
// bytes, or four, or for up to three bytes the first, middle and last. With
// the length they are the whole text up to 16 bytes, so that comparing
// them is comparing the text; longer texts also compare the bytes.
func textWords(b []byte) (w0, w1 uint64) {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		return uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16, 0
	}
	return 0, 0
}

// intern returns the slot holding b as text of this kind, and whether it
// was there. On a miss it makes the slot, in the place of one not hit
// lately, holding b as a string as its text and, except for a plain
// scalar, its value; Resolved sets a plain scalar's value or empties the
// slot (meta 0).
func (c *Cache) intern(kind Kind, b []byte) (*slot, bool) {
	w0, w1 := textWords(b)
	meta := uint32(len(b))<<8 | uint32(kind)
	set := &c.sets[((w0^w1*0xff51afd7ed558ccd^uint64(meta))*0x9e3779b97f4a7c15)>>(64-setBits)]
	for i := range set.slots {
		if e := &set.slots[i]; e.meta == meta && e.w0 == w0 && e.w1 == w1 && (len(b) <= 16 || sameMiddle(e.text, b)) {
			e.used = true
			return e, true
		}
	}
	for {
		e := &set.slots[set.hand%Ways]
		set.hand++
		if e.used {
			e.used = false
			continue
		}
		s := string(b)
		*e = slot{meta: meta, w0: w0, w1: w1, text: s}
		if kind != Plain { // (Resolved sets its own value: no boxing twice)
			e.v = s
		}
		return e, false
	}
}

// sameMiddle compares the bytes textWords leaves out, of two texts of the
// same length over 16 bytes.
//
//go:noinline
func sameMiddle(s string, b []byte) bool { return s[8:len(s)-8] == string(b[8:len(b)-8]) }

// String returns b as a string, shared when c keeps it.
func (c *Cache) String(kind Kind, b []byte) string {
	if c != nil && len(b) <= MaxLen {
		e, _ := c.intern(kind, b)
		return e.text
	}
	return string(b)
}

// Value returns b as a string in an interface value, boxed once when c
// keeps it: a repeated value costs neither a string nor an interface value.
func (c *Cache) Value(kind Kind, b []byte) any {
	if c != nil && len(b) <= MaxLen {
		e, _ := c.intern(kind, b)
		return e.v
	}
	return string(b)
}

// Resolved returns what resolve makes of the plain scalar b, resolved once
// while c keeps it; ok is false when resolve refused it. The values resolve
// returns must be immutable (strings, numbers, booleans, nil), since every
// later copy of b shares them.
func (c *Cache) Resolved(b []byte, resolve func(string) (any, error)) (v any, ok bool) {
	if c != nil && len(b) <= MaxLen {
		e, hit := c.intern(Plain, b)
		if !hit {
			v, err := resolve(e.text)
			if err != nil {
				*e = slot{}
				return nil, false
			}
			e.v = v
		}
		return e.v, true
	}
	v, err := resolve(string(b))
	return v, err == nil
}
