package applier

import "context"

type unreportedKey struct{}

// Unreported marks ctx for a log record that is printed but no record of
// the run: a line a delegated type's Ruby wrote past Puppet's logging (a
// warning of the interpreter's own), which Puppet prints and leaves out
// of its report. A handler that keeps a run's records for the report
// (catalog.Log) leaves such a record out.
func Unreported(ctx context.Context) context.Context {
	return context.WithValue(ctx, unreportedKey{}, true)
}

// IsUnreported says whether ctx was marked by Unreported.
func IsUnreported(ctx context.Context) bool {
	v, _ := ctx.Value(unreportedKey{}).(bool)
	return v
}
