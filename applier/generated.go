package applier

import (
	"context"

	"github.com/pippet/pippet/protocol"
)

// Generated is a resource a provider made for its resource's run and
// reports as a resource of its own, as Puppet's generate and
// eval_generate make one: a recursive file's child (each entry below the
// directory), a tidied path. Type is the type's name in lower case
// ("file"), Title the resource's title (a child's full path). Event is
// one of its events; nil announces the resource (a child with nothing to
// do is reported unchanged).
type Generated struct {
	Type, Title string
	// Provider is the provider the generated resource is applied with
	// ("" when it is the generating resource's type and provider).
	Provider string
	Event    *protocol.Event
}

type generatedKey struct{}

// WithGenerated returns a context under which the providers that
// generate resources report each one to fn, and each of its events, in
// the order made (a catalog's walk, which reports them as Puppet does:
// statuses of their own beside the resource's). Their changes are then
// the generated resources' events, not the resource's (Change.Generated).
// Without it (a request alone on the pipe) a provider reports its
// changes as its resource's own events.
func WithGenerated(ctx context.Context, fn func(Generated)) context.Context {
	return context.WithValue(ctx, generatedKey{}, fn)
}

// GeneratedObserver returns the function WithGenerated put in ctx, or
// nil.
func GeneratedObserver(ctx context.Context) func(Generated) {
	fn, _ := ctx.Value(generatedKey{}).(func(Generated))
	return fn
}
