package protocol

import "encoding/binary"

// valueCache remembers the short strings a Decoder decoded on recent
// lines, so that one repeated from line to line (a type name, an attribute
// name, a value such as a mode, an owner or a directory) is a single shared
// string, and a single boxed value, instead of new ones on every line. It
// knows no names in advance: it learns them from the input, so protocol
// stays ignorant of the types behind it.
//
// It is set-associative: cacheSets sets of cacheWays slots, each holding a
// string of at most cacheMaxLen bytes, so it is bounded whatever the input
// and a lookup costs a hash of two words and a few compares. A set replaces
// its slots in a clock (second chance): a slot hit since the hand last
// passed it is kept, so that values repeated on every line stay while the
// values unique to each line (titles, paths, contents) come and go in the
// other slots.
type valueCache struct {
	sets [cacheSets]cacheSet
}

const (
	cacheSetBits = 5
	cacheSets    = 1 << cacheSetBits
	cacheWays    = 4
	cacheSlots   = cacheSets * cacheWays
	cacheMaxLen  = 32
)

// cacheSet is one set of the cache and its clock hand.
type cacheSet struct {
	slots [cacheWays]cacheSlot
	hand  uint8
}

type cacheSlot struct {
	// meta is the text's length and kind ('t' type name, 'k' key, 'q'
	// quoted string, 'p' plain scalar), 0 for an empty slot; w0 and w1 its
	// words (textWords).
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
// scalar, its value; plain sets the value or empties the slot (meta 0).
func (c *valueCache) intern(kind byte, b []byte) (*cacheSlot, bool) {
	w0, w1 := textWords(b)
	meta := uint32(len(b))<<8 | uint32(kind)
	set := &c.sets[((w0^w1*0xff51afd7ed558ccd^uint64(meta))*0x9e3779b97f4a7c15)>>(64-cacheSetBits)]
	for i := range set.slots {
		if e := &set.slots[i]; e.meta == meta && e.w0 == w0 && e.w1 == w1 && (len(b) <= 16 || sameMiddle(e.text, b)) {
			e.used = true
			return e, true
		}
	}
	for {
		e := &set.slots[set.hand%cacheWays]
		set.hand++
		if e.used {
			e.used = false
			continue
		}
		s := string(b)
		*e = cacheSlot{meta: meta, w0: w0, w1: w1, text: s}
		if kind != 'p' { // (plain sets its own value: no boxing twice)
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

// str returns b as a string, shared through the cache when there is one.
func (st *fastState) str(kind byte, b []byte) string {
	if c := st.cache; c != nil && len(b) <= cacheMaxLen {
		e, _ := c.intern(kind, b)
		return e.text
	}
	return string(b)
}

// key returns an attribute name as a string.
func (st *fastState) key(b []byte) string { return st.str('k', b) }

// quoted returns the value of a quoted string without escapes, boxed once
// when it is in the cache: a repeated value costs neither a string nor an
// interface value.
func (st *fastState) quoted(b []byte) any {
	if c := st.cache; c != nil && len(b) <= cacheMaxLen {
		e, _ := c.intern('q', b)
		return e.v
	}
	return string(b)
}

// plain resolves a plain scalar by Psych's rules (resolvePlain); ok is
// false when the general path must decide. (Its values are immutable
// scalars, string, int64, float64, bool or nil, so sharing them is safe.)
func (st *fastState) plain(b []byte) (any, bool) {
	if c := st.cache; c != nil && len(b) <= cacheMaxLen {
		e, hit := c.intern('p', b)
		if !hit {
			v, err := resolvePlain(e.text)
			if err != nil {
				*e = cacheSlot{}
				return nil, false
			}
			e.v = v
		}
		return e.v, true
	}
	v, err := resolvePlain(string(b))
	return v, err == nil
}
