package applier

import "context"

// Run is what one resource may see of the run it is applied in: the other
// resources of its catalog (receiver apply), or the set of resources a
// controller declared for its run over the pipe. A type whose meaning
// depends on its siblings reads it from the context its provider is given:
// a file's purge leaves alone what the run manages, a concat_file gathers
// its concat_fragments.
//
// A request applied alone has no Run: RunFrom returns nil, and such a type
// behaves as Puppet's does with a catalog of one resource.
type Run interface {
	// Managed reports whether the run manages the resource typ[title]: typ
	// is the type's name in lower case ("file"), title its title or its
	// namevar's value (for a file, the path without a trailing slash).
	Managed(typ, title string) bool
	// Resources returns the run's resources of type typ, in catalog order.
	// The caller must not change them.
	Resources(typ string) []RunResource
}

// RunResource is one resource of a Run as the catalog or the controller
// gave it: parameters are not validated or munged by its type.
type RunResource struct {
	// Type is the type's name in lower case; Title the resource's title.
	Type, Title string
	// Params holds the resource's parameters as decoded values (string,
	// int64, float64, bool, nil, []any, map[string]any).
	Params map[string]any
}

type runKey struct{}

// WithRun returns a context carrying run to the providers of the
// resources applied with it.
func WithRun(ctx context.Context, run Run) context.Context {
	return context.WithValue(ctx, runKey{}, run)
}

// RunFrom returns the run ctx carries, or nil when the resource is applied
// alone.
func RunFrom(ctx context.Context) Run {
	run, _ := ctx.Value(runKey{}).(Run)
	return run
}
