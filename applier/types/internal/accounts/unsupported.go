package accounts

import (
	"context"
	"log/slog"

	"github.com/pippet/pippet/applier"
)

// Unsupported declares attributes of Puppet's type that need a provider
// feature the provider here lacks (Solaris RBAC, AIX, macOS, libuser).
// Puppet accepts them and does not manage them, saying so at debug level;
// so do these: each is a parameter of any value, never read.
func Unsupported(feature string, names ...string) []*applier.Attr {
	out := make([]*applier.Attr, 0, len(names))
	for _, n := range names {
		out = append(out, &applier.Attr{
			Name: n, Behaviour: applier.Parameter, Kind: applier.KindAny,
			Doc: "Needs the provider feature `" + feature + "`, which no provider here has: " +
				"accepted and not managed, as Puppet does (a debug message says so).",
		})
	}
	return out
}

// LogUnsupported logs, at debug level as Puppet does, each attribute of
// names the request gave: the provider lacks the feature it needs and does
// not manage it. Nothing is looked at unless debug messages are logged.
func LogUnsupported(r *applier.Resource, env *applier.Env, provider string, names []string) {
	log := env.Logger()
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	for _, n := range names {
		if r.Given(n) {
			log.Debug(r.Ref() + ": provider " + provider + " does not support the feature " +
				"attribute " + n + " needs; not managing it")
		}
	}
}

// Names returns the names of attrs, followed by more.
func Names(attrs []*applier.Attr, more ...string) []string {
	out := append([]string(nil), more...)
	for _, a := range attrs {
		out = append(out, a.Name)
	}
	return out
}
