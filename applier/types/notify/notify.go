// Package notify declares the notify type: a resource whose only effect is
// a message in the log, used to trace a run.
//
// Like Puppet's, its `message` property is never in sync: every
// evaluation logs the message at the resource's loglevel (notice by
// default) and answers changed. In noop mode the change is only recorded
// and nothing is logged beyond the noop event. The type has no providers
// in Puppet, so it declares one unnamed implementation and offers no
// `provider` parameter.
package notify

import (
	"context"

	"github.com/pippet/pippet/applier"
)

// Type is the notify type's declaration.
var Type = &applier.Type{
	Name: "notify",
	Doc: "Sends an arbitrary message, specified as a string, to the receiver's log at " +
		"the resource's loglevel (notice by default). The resource always answers changed.",
	Attrs: []*applier.Attr{
		{
			Name:      "name",
			Behaviour: applier.Namevar,
			Kind:      applier.KindString,
			Doc:       "An arbitrary tag for your own reference; the name of the message. Defaults to the title.",
		},
		{
			Name:        "message",
			Behaviour:   applier.Property,
			Kind:        applier.KindString,
			Accepts:     applier.AcceptScalars | applier.AcceptFirstOfList,
			DefaultFunc: func(r *applier.Resource) any { return r.Title },
			InSync:      func(is, should any) bool { return false },
			Doc:         "The message to be sent to the log. Defaults to the title.",
		},
		{
			Name:      "withpath",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    []string{"true", "false"},
			Default:   "false",
			Doc: "Whether to show the full object path (`/Notify[title]/message: `) before " +
				"the message. Valid values are `true` and `false`; default `false`.",
		},
	},
	Providers: []*applier.ProviderSpec{{
		Doc: "Logs the message through the receiver's logger.",
		New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
			return &logger{r: r, env: env}, nil
		},
	}},
}

func init() { applier.Register(Type) }

// logger is notify's implementation: nothing to read, and "setting" the
// message logs it.
type logger struct {
	r   *applier.Resource
	env *applier.Env
}

// Get reports no current message, so the message is always out of sync.
func (l *logger) Get(ctx context.Context, cur *applier.State) error { return nil }

// Set logs the message.
func (l *logger) Set(ctx context.Context, c *applier.Change) error {
	msg := applier.FormatValue(c.Should)
	if l.r.String("withpath") == "true" {
		msg = "/" + l.r.Ref() + "/message: " + msg
	}
	l.env.Logger().Log(ctx, l.r.LogLevel, msg)
	return nil
}
