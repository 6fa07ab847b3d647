package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/protocol"
)

// box is a non-scalar munged value, as file's content is.
type box struct{ n int }

func (b *box) Clone() any { c := *b; return &c }

// memoType counts how often its requests are built (munged) and records
// what its provider saw; the provider's Resolve changes its resource's
// values in place, as a provider may, to show that no request sees
// another's changes.
type memoType struct {
	builds int
	seen   []string
}

func (m *memoType) typ() *applier.Type {
	count := func(v any) (any, error) { m.builds++; return v, nil }
	return &applier.Type{
		Name: "memo_widget",
		Attrs: []*applier.Attr{
			{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString, Munge: count},
			{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"present", "absent"}},
			{Name: "tags", Behaviour: applier.Property, Kind: applier.KindString, Array: true},
			{Name: "box", Behaviour: applier.Parameter, Kind: applier.KindInteger,
				Munge: func(v any) (any, error) { return &box{n: int(v.(int64))}, nil }},
			{Name: "probe", Behaviour: applier.Parameter, Kind: applier.KindString, Volatile: true},
			{Name: "size", Behaviour: applier.Parameter, Kind: applier.KindInteger, Munge: count,
				Validate: func(v any) error {
					if v.(int64) < 0 {
						return errors.New("negative")
					}
					return nil
				}},
		},
		Providers: []*applier.ProviderSpec{{Name: "p", New: func(r *applier.Resource, _ *applier.Env) (applier.Provider, error) {
			return &memoProvider{m: m, r: r}, nil
		}}},
	}
}

type memoProvider struct {
	m *memoType
	r *applier.Resource
}

func (p *memoProvider) Resolve(context.Context) error {
	tags, _ := p.r.Value("tags").([]any)
	b, _ := p.r.Value("box").(*box)
	p.m.seen = append(p.m.seen, fmt.Sprintf("%s tags=%v box=%v", p.r.Name(), tags, b))
	if len(tags) > 0 {
		tags[0] = "changed by resolve"
	}
	if b != nil {
		b.n++
	}
	return nil
}

func (p *memoProvider) Get(_ context.Context, cur *applier.State) error {
	cur.Set("ensure", "present")
	cur.Set("tags", p.r.Value("tags"))
	return nil
}

func (p *memoProvider) Set(context.Context, *applier.Change) error { return nil }

// A Stable request is built once; every apply after the first takes the
// kept resource, each with its own copy of the values a provider may change.
func TestStableRequestBuiltOnce(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	rq := &protocol.Request{Type: "memo_widget", Title: "w", Stable: true,
		Params: map[string]any{"ensure": "present", "tags": []any{"a", "b"}, "box": int64(7)}}
	for range 3 {
		res := e.Apply(context.Background(), rq)
		require.False(t, res.Failed, res.Exception)
		assert.Equal(t, "Memo_widget[w]", res.Resource)
	}
	assert.Equal(t, 1, m.builds)
	assert.Equal(t, []string{"w tags=[a b] box=&{7}", "w tags=[a b] box=&{7}", "w tags=[a b] box=&{7}"}, m.seen)
	assert.Equal(t, []any{"a", "b"}, rq.Params["tags"], "the request's params are unchanged")
}

// A request not marked Stable is built every time, and its Memo is left alone.
func TestUnstableRequestBuiltEachTime(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	rq := req("memo_widget", "w", map[string]any{"ensure": "present"})
	for range 3 {
		require.False(t, e.Apply(context.Background(), rq).Failed)
	}
	assert.Equal(t, 3, m.builds)
	assert.Nil(t, rq.Memo)
}

// A request that gives a Volatile attribute is built every time.
func TestVolatileAttributeBuiltEachTime(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	rq := &protocol.Request{Type: "memo_widget", Title: "w", Stable: true, Params: map[string]any{"probe": "x"}}
	for range 3 {
		require.False(t, e.Apply(context.Background(), rq).Failed)
	}
	assert.Equal(t, 3, m.builds)
}

// An invalid Stable request is answered afresh, and the same, every time.
func TestInvalidStableRequestNotKept(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	rq := &protocol.Request{Type: "memo_widget", Title: "w", Stable: true, Params: map[string]any{"size": int64(-1)}}
	for range 2 {
		res := e.Apply(context.Background(), rq)
		assert.True(t, res.Error)
		assert.Contains(t, res.Exception, "negative")
	}
	assert.Equal(t, 2, m.builds, "size munged each time")
	assert.Nil(t, rq.Memo)
}

// What one engine kept is not another's: each builds its own (an engine's
// global noop is part of the build).
func TestMemoBelongsToItsEngine(t *testing.T) {
	m := &memoType{}
	ty := m.typ()
	e1, _ := newEngine(t, ty)
	reg := applier.NewRegistry()
	reg.Add(ty)
	e2 := engine.New(reg, &applier.Env{Facts: applier.Facts{}, Features: map[string]bool{"posix": true},
		Options: applier.Options{Noop: true}})
	rq := &protocol.Request{Type: "memo_widget", Title: "w", Stable: true, Params: map[string]any{"ensure": "absent"}}
	assert.False(t, e1.Apply(context.Background(), rq).Noop)
	assert.True(t, e2.Apply(context.Background(), rq).Noop)
	assert.True(t, e2.Apply(context.Background(), rq).Noop)
	assert.False(t, e1.Apply(context.Background(), rq).Noop)
	assert.Equal(t, 3, m.builds, "e1, e2, then e1 again")
}
