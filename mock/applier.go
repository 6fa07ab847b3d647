package mock

import (
	"context"
	"maps"
	"sync"

	"github.com/pippet/pippet/protocol"
)

// Applier is a protocol.Applier that records every request and answers
// with Func, or, when Func is nil, with a successful change of the
// requested resource.
type Applier struct {
	// Func computes the answer; nil answers {resource, changed: true}.
	Func func(ctx context.Context, req *protocol.Request) protocol.Result

	mu       sync.Mutex
	requests []protocol.Request
}

// Apply records a copy of req (Params and ID included: the caller reuses
// them) and answers.
func (a *Applier) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	c := *req
	c.ID = append([]byte(nil), req.ID...)
	c.Params = maps.Clone(req.Params)
	a.mu.Lock()
	a.requests = append(a.requests, c)
	a.mu.Unlock()
	if a.Func != nil {
		return a.Func(ctx, req)
	}
	return protocol.Result{Resource: protocol.Ref(req.Type, req.Title), Changed: true}
}

// Requests returns copies of the requests seen so far, in order.
func (a *Applier) Requests() []protocol.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]protocol.Request(nil), a.requests...)
}
