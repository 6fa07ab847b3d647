package engine

import (
	"hash/maphash"
	"slices"

	"github.com/pippet/pippet/protocol"
)

// A converging engine sends the same resources again and again, byte for
// byte. Decoding a line is a pure function of its bytes, so a line seen
// before may take the request decoded then instead of decoding again; and
// building its resource is a function of the request (applier's memo.go),
// so what building it gave is kept beside it and copied instead of built
// again. A Session owns both: the same *protocol.Request, unchanged, comes
// back for every copy of the line, with what was built from it. The
// current state is read afresh for every request, and so is the run the
// request is applied in (a controller's declaration, which the request
// loop puts in the context: a concat_file's fragments, the files a purge
// leaves alone), so nothing an answer depends on can be stale: the same
// line answers anew after a new declaration.
//
// The memo is a set-associative table of memoSets × memoWays requests,
// bounded in memory (lines of at most memoMaxLine bytes): a line's hash
// picks its set, and within a full set a clock hand evicts a request not
// found since the hand last passed it, so the requests a converging
// engine keeps re-sending stay while a stream of one-off lines cycles
// through the rest. A line is kept on its second sighting only (the
// first is remembered, as a hash, in a table of its own), so that a
// stream of lines that never repeat costs a hash per line and no copy.
// Only requests whose params are scalars (strings, numbers, booleans,
// nulls) or lists of scalars are kept: nothing writes to a request's
// Params, and the Applier gets the kept request itself.
const (
	memoSets    = 512
	memoWays    = 8
	memoMaxLine = 512
	// seenSets × seenWays hashes of lines seen once.
	seenSets = 2048
	seenWays = 4
)

type reqMemo struct {
	seed maphash.Seed
	sets [memoSets]memoSet
	seen [seenSets][seenWays]uint64
	// seenNext is the next way to overwrite in each seen set.
	seenNext [seenSets]uint8
}

type memoSet struct {
	hand uint8 // the clock hand: the next way to consider for eviction
	ways [memoWays]memoEntry
}

type memoEntry struct {
	hash uint64 // the line's hash, 0 for an empty way
	used bool   // found since the hand last passed
	line string
	req  *protocol.Request
	// built is what the engine kept of building req's resource (see
	// Engine.build): nil until the request is first applied.
	built any
}

func newReqMemo() *reqMemo { return &reqMemo{seed: maphash.MakeSeed()} }

// hash is the line's hash, never 0 (an empty way's). The memo's set is
// taken from its high bits, the seen table's from its low bits.
func (m *reqMemo) hash(line []byte) uint64 {
	h := maphash.Bytes(m.seed, line)
	if h == 0 {
		h = 1
	}
	return h
}

func memoSetOf(h uint64) int { return int(h >> 55 % memoSets) }
func seenSetOf(h uint64) int { return int(h % seenSets) }

// find returns the entry kept for line, or nil and the line's hash for
// offer (0: the line is too long to keep).
func (m *reqMemo) find(line []byte) (*memoEntry, uint64) {
	if len(line) > memoMaxLine {
		return nil, 0
	}
	h := m.hash(line)
	set := &m.sets[memoSetOf(h)]
	for i := range set.ways {
		e := &set.ways[i]
		if e.hash == h && e.line == string(line) {
			e.used = true
			return e, h
		}
	}
	return nil, h
}

// offer keeps a copy of req, decoded from line (hash from find), if line
// was seen once before and req qualifies; else it remembers the line as
// seen.
func (m *reqMemo) offer(line []byte, hash uint64, req *protocol.Request) {
	if hash == 0 {
		return
	}
	ss := seenSetOf(hash)
	seen := &m.seen[ss]
	found := false
	for i, h := range seen {
		if h == hash {
			seen[i] = 0
			found = true
			break
		}
	}
	if !found {
		seen[m.seenNext[ss]] = hash
		m.seenNext[ss] = (m.seenNext[ss] + 1) % seenWays
		return
	}
	if !keepable(req) {
		return
	}
	kept := &protocol.Request{Type: req.Type, Title: req.Title, Refresh: req.Refresh, Op: req.Op, Hints: slices.Clone(req.Hints)}
	if req.ID != nil {
		kept.ID = append([]byte(nil), req.ID...) // the decoder reuses its buffer
	}
	if req.Params != nil {
		kept.Params = make(map[string]any, len(req.Params)) // the decoder reuses its map
		for k, v := range req.Params {
			if l, ok := v.([]any); ok {
				v = append([]any(nil), l...)
			}
			kept.Params[k] = v
		}
	}
	set := &m.sets[memoSetOf(hash)]
	for {
		e := &set.ways[set.hand]
		set.hand = (set.hand + 1) % memoWays
		if e.hash != 0 && e.used {
			e.used = false // a second chance
			continue
		}
		*e = memoEntry{hash: hash, line: string(line), req: kept}
		return
	}
}

// memoKey is the part of line the memo keys on: the line without a
// trailing numeric id member (`,"id":12}` as runner numbers its
// requests), so that requests differing only in that id share one kept
// request; id is that id's digits (nil when the line has no such tail),
// the answer's id in place of the kept request's.
func memoKey(line []byte) (key, id []byte) {
	const member = `,"id":`
	n := len(line)
	if n < len(member)+2 || line[n-1] != '}' {
		return line, nil
	}
	i := n - 2
	for i >= 0 && line[i] >= '0' && line[i] <= '9' {
		i--
	}
	if i == n-2 || i+1 < len(member) || string(line[i+1-len(member):i+1]) != member {
		return line, nil
	}
	return line[:i+1-len(member)], line[i+1 : n-1]
}

// keepable: req's params are scalars or lists of scalars, and it is not
// a declaration (whose resources the loop keeps as its run).
func keepable(req *protocol.Request) bool {
	if req.Op == protocol.OpDeclare {
		return false
	}
	for _, v := range req.Params {
		switch v := v.(type) {
		case string, int64, float64, bool, nil:
		case []any:
			for _, e := range v {
				switch e.(type) {
				case string, int64, float64, bool, nil:
				default:
					return false
				}
			}
		default:
			return false // a mapping, or a list holding one
		}
	}
	return true
}
