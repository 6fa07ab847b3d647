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
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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
			Kind:        applier.KindAny,
			Accepts:     applier.AcceptScalars | applier.AcceptMap | applier.AcceptFirstOfList,
			Munge:       mungeMessage,
			DefaultFunc: func(r *applier.Resource) any { return r.Title },
			// Never in sync, except false: Puppet sends no message then.
			InSync: func(is, should any) bool { return should == false },
			Format: formatMessage,
			Doc: "The message to be sent to the log. Defaults to the title. A mapping is " +
				"printed as Ruby prints a Hash (keys in order of name); false sends nothing.",
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
	var msg string
	if l.r.IsSensitive("message") {
		// A Sensitive message prints as Puppet prints the value.
		msg = "Sensitive [value redacted]"
	} else if m, ok := c.Should.(map[string]any); ok {
		msg = rubyInspect(m)
	} else {
		msg = applier.FormatValue(c.Should)
	}
	if l.r.String("withpath") == "true" {
		msg = "/" + l.r.Ref() + "/message: " + msg
	}
	l.env.Logger().Log(ctx, l.r.LogLevel, msg)
	return nil
}

// messageScalar converts a scalar message as a string attribute does.
var messageScalar = &applier.Attr{Name: "message", Kind: applier.KindString, Accepts: applier.AcceptScalars}

// mungeMessage keeps false (nothing to send) and a mapping (printed
// whole) as they are; any other scalar becomes its string.
func mungeMessage(v any) (any, error) {
	switch v.(type) {
	case bool, map[string]any:
		if v == true {
			return "true", nil
		}
		return v, nil
	}
	return applier.MungeValue(messageScalar, v)
}

// formatMessage shows a mapping in an event as Puppet displays a Hash:
// one key a line, strings in single quotes.
func formatMessage(v any) string {
	if m, ok := v.(map[string]any); ok {
		return puppetDisplay(m, "")
	}
	return applier.FormatValue(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// puppetDisplay renders v as Puppet's event messages render values.
func puppetDisplay(v any, indent string) string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{\n")
		keys := sortedKeys(x)
		for i, k := range keys {
			b.WriteString(indent + "  " + puppetDisplay(k, "") + " => " + puppetDisplay(x[k], indent+"  "))
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		return b.String() + indent + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = puppetDisplay(e, indent)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", `\'`) + "'"
	case nil:
		return "undef"
	}
	return rubyInspect(v)
}

// rubyInspect renders v as Ruby's inspect does (Hash#to_s prints it so).
func rubyInspect(v any) string {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, strconv.Quote(k)+"=>"+rubyInspect(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = rubyInspect(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return strconv.Quote(x)
	case nil:
		return "nil"
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		case math.IsNaN(x):
			return "NaN"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return fmt.Sprint(v)
}
