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

// send sends line through s n times, as a receiver reads it, and returns
// the answers.
func send(t *testing.T, s *engine.Session, line string, n int) []protocol.Result {
	t.Helper()
	var out []protocol.Result
	for range n {
		req, _, err := s.Decode([]byte(line))
		require.NoError(t, err)
		out = append(out, s.Apply(context.Background(), req))
	}
	return out
}

// A line sent again is built until the session keeps it (its third
// sighting: kept on the second, built and its build kept on the third);
// every apply after that takes the kept resource, each with its own copy
// of the values a provider may change.
func TestResentRequestBuiltOnce(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	line := `{"type":"memo_widget","title":"w","params":"{ensure: present, tags: [a, b], box: 7}"}`
	for _, res := range send(t, e.NewSession(), line, 5) {
		require.False(t, res.Failed, res.Exception)
		assert.Equal(t, "Memo_widget[w]", res.Resource)
	}
	assert.Equal(t, 3, m.builds)
	want := "w tags=[a b] box=&{7}"
	assert.Equal(t, []string{want, want, want, want, want}, m.seen)
}

// A request applied through the engine alone (not a session's) is built
// every time.
func TestRequestOutsideSessionBuiltEachTime(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	rq := req("memo_widget", "w", map[string]any{"ensure": "present"})
	for range 3 {
		require.False(t, e.Apply(context.Background(), rq).Failed)
	}
	assert.Equal(t, 3, m.builds)
}

// A request that gives a Volatile attribute is built every time.
func TestVolatileAttributeBuiltEachTime(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	send(t, e.NewSession(), `{"type":"memo_widget","title":"w","params":"{probe: x}"}`, 5)
	assert.Equal(t, 5, m.builds)
}

// An invalid request sent again is answered afresh, and the same, every
// time.
func TestInvalidResentRequestNotKept(t *testing.T) {
	m := &memoType{}
	e, _ := newEngine(t, m.typ())
	for _, res := range send(t, e.NewSession(), `{"type":"memo_widget","title":"w","params":"{size: -1}"}`, 5) {
		assert.True(t, res.Error)
		assert.Contains(t, res.Exception, "negative")
	}
	assert.Equal(t, 5, m.builds, "size munged each time")
}

// What one session kept is not another's: each builds its own (an
// engine's global noop is part of the build).
func TestMemoBelongsToItsSession(t *testing.T) {
	m := &memoType{}
	ty := m.typ()
	e1, _ := newEngine(t, ty)
	reg := applier.NewRegistry()
	reg.Add(ty)
	e2 := engine.New(reg, &applier.Env{Facts: applier.Facts{}, Features: map[string]bool{"posix": true},
		Options: applier.Options{Noop: true}})
	s1, s2 := e1.NewSession(), e2.NewSession()
	line := `{"type":"memo_widget","title":"w","params":"{ensure: absent}"}`
	send(t, s1, line, 3)
	send(t, s2, line, 3)
	assert.False(t, send(t, s1, line, 1)[0].Noop)
	assert.True(t, send(t, s2, line, 1)[0].Noop)
	assert.Equal(t, 6, m.builds, "three each, then each its own kept one")
}
