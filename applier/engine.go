package applier

import (
	"context"

	"github.com/pippet/pippet/protocol"
)

// Engine applies requests against a Registry of types. It is safe for use
// by one goroutine at a time per resource; the receiver applies in order.
type Engine struct {
	reg *Registry
	env *Env
}

// NewEngine returns an engine over reg; env's zero fields get defaults
// (facts read once, a discarding logger, an empty cache).
func NewEngine(reg *Registry, env *Env) *Engine {
	return &Engine{reg: reg, env: env}
}

// Env returns the engine's environment.
func (e *Engine) Env() *Env { return e.env }

// Apply evaluates one request. It never panics.
func (e *Engine) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	// TODO(issue 3): the transaction.
	return protocol.ErrorResult(Ref(req.Type, req.Title), "not implemented")
}
