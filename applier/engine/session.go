package engine

import (
	"context"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// Session is one stream of request lines through an Engine, as a
// receiver reads them from its stdin: it decodes a line into its request
// and applies the request, and it owns everything kept from one line to
// the next: the decoder (which reuses its map and buffers), the memo of
// lines sent again with the resource built from each (memo.go), and the
// engine's spare storage that the next request reuses. Nothing outside a
// session keeps a request or a resource; its requests are valid until the
// next Decode.
//
// A Session is a protocol.Applier, so that whatever stands between the
// loop and the engine (the delegation fallback) passes its requests
// through unchanged. It is used by one goroutine at a time.
type Session struct {
	e    *Engine
	dec  protocol.Decoder
	req  protocol.Request
	memo *reqMemo
	// cur is the memo's entry for the line Decode returned last (nil when
	// the line was decoded afresh).
	cur *memoEntry
}

// NewSession starts a session over e.
func (e *Engine) NewSession() *Session {
	return &Session{e: e, memo: newReqMemo()}
}

// Decode makes line into its request: the request kept for it when the
// line was sent before, else the line decoded afresh (the decoder's
// errors, a *protocol.DecodeError among them, are returned as they are).
// A line is kept without a trailing numeric id (memoKey: runner numbers
// its requests), so copies that differ only in it share one request; id
// is the one the answer echoes, this line's own. The request is the
// session's: the caller may read it and hand it to Apply, and must not
// change or keep it past the next Decode.
func (s *Session) Decode(line []byte) (req *protocol.Request, id []byte, err error) {
	key, keyID := memoKey(line)
	e, hash := s.memo.find(key)
	s.cur = e
	if e != nil {
		if keyID == nil {
			keyID = e.req.ID
		}
		return e.req, keyID, nil
	}
	req = &s.req
	if err := s.dec.DecodeLine(line, req); err != nil {
		return req, req.ID, err
	}
	s.memo.offer(key, hash, req)
	return req, req.ID, nil
}

// Apply answers req through the engine (Engine.Apply): a request Decode
// found kept is built from what was kept of it. The answer names the
// provider that applied it (Result.Provider, for the run's report).
func (s *Session) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	var prov string
	var res protocol.Result
	if c := s.cur; c != nil && c.req == req {
		res = s.e.answer(ctx, req, &c.built, &prov)
	} else {
		res = s.e.answer(ctx, req, nil, &prov)
	}
	res.Provider = prov
	return res
}

// ProviderName names the provider an apply of req would use, without
// applying it: Puppet names it in a skipped resource's status too. ""
// when the type is unknown, the request invalid, or no provider suitable.
func (s *Session) ProviderName(req *protocol.Request) string { return s.e.ProviderName(req) }

// Declare makes a declaration's resources into the run the requests that
// follow are applied in (the request loop puts it in their context): an
// applier.RunSet knowing the namevars of the engine's types. A resource
// declared twice is refused with an *applier.RunError naming it.
func (s *Session) Declare(resources []protocol.RunResource) (applier.Run, error) {
	rs, err := applier.NewRunSet(s.e.reg, resources)
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// Engine is the engine the session applies through.
func (s *Session) Engine() *Engine { return s.e }
