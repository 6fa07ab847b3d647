package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/pippet/pippet/protocol"
)

// The read verbs: Find, Search and Describe ask the receiver what is
// there without changing anything. Only a receiver that announces protocol
// level 2 or more in its ready line answers them; Puppet's receiver has no
// verbs (it would read a find as an apply of the same resource), so with
// it, or with any Runner that cannot say, they return an error wrapping
// ErrUnsupported before anything is written: the stream is left as it was.

// ErrUnsupported is wrapped by the error of Find, Search and Describe when
// the receiver does not answer the read verbs, and of Declare when it
// does not take a declaration.
var ErrUnsupported = errors.New("the receiver does not take this request (it is not pippet's receiver, or one of a lower protocol level)")

// ProtocolLeveler is a Runner that knows the protocol level its receiver
// announced (Receiver and mock.Runner are): 2 or more answers the read
// verbs. It is called with the apply lock held.
type ProtocolLeveler interface {
	ProtocolLevel() int
}

// Found is a find's answer: one resource's current state.
type Found struct {
	// Ref is the resource's reference, e.g. User[root].
	Ref string
	// State is every property's current value as `puppet resource` prints
	// it, ensure first; ensure is absent when the resource does not exist.
	State protocol.State
	// Params is State as a YAML flow mapping that, sent as an apply's
	// params (Resource.Params), leaves the resource unchanged.
	Params string
}

// Value returns the named property's current value, nil when the state
// does not have it: f.Value("shell") where a map would be f.State["shell"].
func (f *Found) Value(name string) any {
	v, _ := f.State.Get(name)
	return v
}

// Values returns the state as a map from property name to value, for code
// that wants to range over it or index it; State keeps the order in which
// `puppet resource` prints the properties.
func (f *Found) Values() map[string]any {
	m := make(map[string]any, len(f.State))
	for _, p := range f.State {
		m[p.Name] = p.Value
	}
	return m
}

// Exists reports whether the resource exists: its state has an ensure
// other than absent (or no ensure at all, for a type without one).
func (f *Found) Exists() bool {
	v, ok := f.State.Get("ensure")
	return !ok || v != "absent"
}

// Instance is one entry of a search's answer.
type Instance = protocol.Instance

// Find reads one resource's current state through the provider the
// receiver would apply it with; nothing is changed. A resource that does
// not exist is found with ensure absent. Errors are Apply's (an answer
// with error or failed set is a *ResultError, e.g. an unknown type), and
// ErrUnsupported.
func Find(ctx context.Context, r Runner, typ, title string) (*Found, error) {
	return FindResource(ctx, r, &Resource{Type: typ, Title: title})
}

// FindResource is Find with params: those that say where to look (a
// provider, a target file, a user) as an apply of the resource would read
// them. Nothing else is required.
func FindResource(ctx context.Context, r Runner, res *Resource) (*Found, error) {
	if res.Title == "" {
		return nil, fmt.Errorf("%s: %w: find needs a title", shortRef(res), ErrInvalidRequest)
	}
	result, err := verb(ctx, r, protocol.OpFind, res)
	if err != nil {
		return nil, err
	}
	if result.State == nil {
		return nil, fmt.Errorf("%s: %w: the answer to find has no state", shortRef(res), ErrBadAnswer)
	}
	return &Found{Ref: result.Resource, State: result.State, Params: result.Params}, nil
}

// Search lists every instance of a type the receiver's provider can see,
// sorted by title; nothing is changed. filter, when not nil, is params:
// those that scope the listing (a target, a user; file needs path, the
// directory to list) and property values an instance must have, compared
// as apply would compare them. A type that cannot list answers a
// *ResultError naming it.
func Search(ctx context.Context, r Runner, typ string, filter map[string]any) ([]Instance, error) {
	res := &Resource{Type: typ, Values: filter}
	result, err := verb(ctx, r, protocol.OpSearch, res)
	if err != nil {
		return nil, err
	}
	if result.Instances == nil {
		return nil, fmt.Errorf("%s: %w: the answer to search has no instances", protocol.RefType(typ), ErrBadAnswer)
	}
	return result.Instances, nil
}

// Describe returns a type's declaration as the receiver knows it, a JSON
// object (see engine.Engine.DescribeJSON): attributes, providers, the one
// chosen on that machine and why.
func Describe(ctx context.Context, r Runner, typ string) ([]byte, error) {
	result, err := verb(ctx, r, protocol.OpDescribe, &Resource{Type: typ})
	if err != nil {
		return nil, err
	}
	if len(result.Declaration) == 0 {
		return nil, fmt.Errorf("%s: %w: the answer to describe has no declaration", protocol.RefType(typ), ErrBadAnswer)
	}
	return result.Declaration, nil
}

func verb(ctx context.Context, r Runner, op protocol.Op, res *Resource) (Result, error) {
	line, err := encodeVerb(op, res)
	if err != nil {
		return Result{}, err
	}
	check := func() error {
		if pl, ok := r.(ProtocolLeveler); ok && pl.ProtocolLevel() >= 2 {
			return nil
		}
		return fmt.Errorf("%s %s: %w (the read verbs need protocol level 2)", op, shortRef(res), ErrUnsupported)
	}
	want := protocol.RefType(res.Type)
	if op == protocol.OpFind {
		want = res.Ref()
	}
	result, err := exchangeLine(ctx, r, res, want, line, check, nil)
	var re *ResultError
	if errors.As(err, &re) && op != protocol.OpFind {
		re.Ref = result.Resource
	}
	return result, err
}

// encodeVerb writes a read verb's request line: apply's line with "op"
// first, and no title or params when there are none.
func encodeVerb(op protocol.Op, res *Resource) ([]byte, error) {
	line, err := encodeRequest(res, false)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(line)+16)
	b = append(b, `{"op":"`...)
	b = append(b, op.String()...)
	b = append(b, `",`...)
	return append(b, line[1:]...), nil
}
