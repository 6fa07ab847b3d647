package accounts

import (
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

// LogUnsupported logs, at debug level as Puppet does, each of attrs the
// request gave: the provider does not manage it.
func LogUnsupported(r *applier.Resource, env *applier.Env, provider string, attrs []*applier.Attr) {
	for _, a := range attrs {
		if r.Given(a.Name) {
			env.Logger().Debug(r.Ref() + ": provider " + provider + " does not support the feature " +
				"this attribute needs; not managing attribute " + a.Name)
		}
	}
}
