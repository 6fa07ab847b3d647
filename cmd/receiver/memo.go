package main

import (
	"hash/maphash"

	"github.com/pippet/pippet/protocol"
)

// A converging engine sends the same resources again and again, byte for
// byte. Decoding a line is a pure function of its bytes, so a line seen
// before may take the request decoded then instead of decoding again;
// everything after the decoding (the type's munging and validation, the
// names resolved to ids, the facts, the current state) runs afresh for
// every request, so nothing the answer depends on can be stale.
//
// The memo is a direct-mapped table of memoSlots requests, bounded in
// memory (lines of at most memoMaxLine bytes). A line is kept on its
// second sighting only (the first marks its slot), so that a stream of
// lines that never repeat costs a hash per line and no copy. Only
// requests whose params are scalars (strings, numbers, booleans, nulls)
// are kept: the Applier gets the kept request itself, and those values
// cannot be changed through it (nothing writes to a request's Params
// map; protocol.Applier must not keep or change the request).
const (
	memoSlots   = 4096
	memoMaxLine = 512
)

type reqMemo struct {
	seed  maphash.Seed
	slots [memoSlots]memoSlot
}

type memoSlot struct {
	seen uint64 // the hash of a line seen once, not kept
	hash uint64 // the hash of line
	line string
	req  *protocol.Request
}

func newReqMemo() *reqMemo { return &reqMemo{seed: maphash.MakeSeed()} }

// find returns the request kept for line, or nil and the line's hash for
// offer (0: the line is too long to keep).
func (m *reqMemo) find(line []byte) (*protocol.Request, uint64) {
	if len(line) > memoMaxLine {
		return nil, 0
	}
	h := maphash.Bytes(m.seed, line) | 1 // never 0
	s := &m.slots[h%memoSlots]
	if s.req != nil && s.hash == h && s.line == string(line) {
		return s.req, h
	}
	return nil, h
}

// offer keeps a copy of req, decoded from line (hash from find), if line
// was seen once before and req qualifies; else it marks the line as seen.
func (m *reqMemo) offer(line []byte, hash uint64, req *protocol.Request) {
	if hash == 0 {
		return
	}
	s := &m.slots[hash%memoSlots]
	if s.seen != hash {
		s.seen = hash
		return
	}
	for _, v := range req.Params {
		switch v.(type) {
		case string, int64, float64, bool, nil:
		default:
			return // a list or a mapping: not kept
		}
	}
	kept := &protocol.Request{Type: req.Type, Title: req.Title, Refresh: req.Refresh}
	if req.ID != nil {
		kept.ID = append([]byte(nil), req.ID...) // the decoder reuses its buffer
	}
	if req.Params != nil {
		kept.Params = make(map[string]any, len(req.Params)) // the decoder reuses its map
		for k, v := range req.Params {
			kept.Params[k] = v
		}
	}
	*s = memoSlot{hash: hash, line: string(line), req: kept}
}
