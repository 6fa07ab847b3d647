package mock

import (
	"context"
	"fmt"
	"sync"

	"github.com/pippet/pippet/applier"
)

// Provider is an in-memory applier.Provider: State is the "system", Get
// reports a copy of it and Set writes Change.Should into it. It records
// every call so transaction tests can assert what the engine did.
type Provider struct {
	mu sync.Mutex
	// State is the current state Get reports (copied).
	State map[string]any
	// GetErr, when set, is returned by Get.
	GetErr error
	// SetErr maps a property to the error Set returns for it.
	SetErr map[string]error
	// FlushErr, when set, is returned by Flush.
	FlushErr error
	// Panic, when set, makes Get panic with it.
	Panic any
	// Message, when set, replaces Change.Message on every successful Set.
	Message string
	// Calls records "get", "set <prop>" and "flush" in order.
	Calls []string
	// Changes records every Change passed to Set.
	Changes []applier.Change
}

// NewProvider returns a Provider whose system holds state.
func NewProvider(state map[string]any) *Provider {
	if state == nil {
		state = map[string]any{}
	}
	return &Provider{State: state}
}

// Get implements applier.Provider.
func (p *Provider) Get(ctx context.Context, cur *applier.State) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Calls = append(p.Calls, "get")
	if p.Panic != nil {
		panic(p.Panic)
	}
	if p.GetErr != nil {
		return p.GetErr
	}
	for k, v := range p.State {
		cur.Set(k, v)
	}
	return nil
}

// Set implements applier.Provider.
func (p *Provider) Set(ctx context.Context, c *applier.Change) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Calls = append(p.Calls, "set "+c.Property)
	p.Changes = append(p.Changes, *c)
	if err := p.SetErr[c.Property]; err != nil {
		return fmt.Errorf("mock set %s: %w", c.Property, err)
	}
	p.State[c.Property] = c.Should
	if p.Message != "" {
		c.Message = p.Message
	}
	return nil
}

// Flush implements applier.Flusher.
func (p *Provider) Flush(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Calls = append(p.Calls, "flush")
	return p.FlushErr
}

// CallLog returns a copy of the recorded calls.
func (p *Provider) CallLog() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.Calls...)
}

// Spec returns a ProviderSpec named name that binds every resource to p.
func (p *Provider) Spec(name string) *applier.ProviderSpec {
	return &applier.ProviderSpec{
		Name: name,
		Doc:  "A mock provider backed by memory.",
		New:  func(*applier.Resource, *applier.Env) (applier.Provider, error) { return p, nil },
	}
}
