package applier

import "unsafe"

// nameTable maps a type's attribute names to their slots. Providers and
// Validate functions read attributes by name many times per request, so
// this is the hottest lookup in the engine: an open-addressing table sized
// to at most a quarter full, hashed on the length and three bytes of the
// name, answers in a probe or two without hashing the whole string the way
// a Go map must.
type nameTable struct {
	mask  uint32
	keys  []string
	slots []int32
}

func newNameTable(names []string) nameTable {
	size := 8
	for size < 4*len(names) {
		size *= 2
	}
	t := nameTable{mask: uint32(size - 1), keys: make([]string, size), slots: make([]int32, size)}
	for slot, n := range names {
		i := nameHash(n) & t.mask
		for t.keys[i] != "" {
			i = (i + 1) & t.mask
		}
		t.keys[i], t.slots[i] = n, int32(slot)
	}
	return t
}

func nameHash(s string) uint32 {
	n := len(s)
	if n == 0 {
		return 0
	}
	h := uint32(n)*0x9e3779b1 ^ uint32(s[0])<<7 ^ uint32(s[n-1])<<14 ^ uint32(s[n/2])*0x85ebca6b
	return h ^ h>>15
}

// find returns the slot of name, or -1.
func (t *nameTable) find(name string) int {
	if name == "" || t.keys == nil {
		return -1
	}
	for i := nameHash(name) & t.mask; ; i = (i + 1) & t.mask {
		k := t.keys[i]
		// Names are mostly the declaration's own strings (providers,
		// Validate) or the decoder's interned ones: the same bytes, often
		// the same pointer, which settles it without a compare.
		if len(k) == len(name) && (unsafe.StringData(k) == unsafe.StringData(name) || k == name) {
			return int(t.slots[i])
		}
		if k == "" {
			return -1
		}
	}
}
