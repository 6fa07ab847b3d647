package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

func newEngine(t *testing.T, types ...*applier.Type) (*engine.Engine, *testutil.SyncBuffer) {
	t.Helper()
	reg := applier.NewRegistry()
	for _, ty := range types {
		reg.Add(ty)
	}
	logs := &testutil.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := &applier.Env{Facts: applier.Facts{"os.family": "Debian"}, Features: map[string]bool{"posix": true}, Log: log}
	return engine.New(reg, env), logs
}

func req(typ, title string, params map[string]any) *protocol.Request {
	return &protocol.Request{Type: typ, Title: title, Params: params}
}

func TestApplyTransaction(t *testing.T) {
	cases := []struct {
		name     string
		state    map[string]any
		params   map[string]any
		noop     bool
		setErr   map[string]error
		flushErr error
		want     protocol.Result
		calls    []string
		after    map[string]any
	}{
		{
			name:   "absent resource: ensure alone is synced",
			state:  map[string]any{"ensure": "absent"},
			params: map[string]any{"ensure": "present", "size": 3},
			want: protocol.Result{Resource: "Widget[/a]", Changed: true, Events: []protocol.Event{
				{Property: "ensure", Previous: "absent", Desired: "present", Message: "created", Status: "success"}}},
			calls: []string{"get", "set ensure", "flush"},
		},
		{
			name:   "removing",
			state:  map[string]any{"ensure": "present", "size": int64(3), "colour": "red"},
			params: map[string]any{"ensure": "absent", "size": 4},
			want: protocol.Result{Resource: "Widget[/a]", Changed: true, Events: []protocol.Event{
				{Property: "ensure", Previous: "present", Desired: "absent", Message: "removed", Status: "success"}}},
			calls: []string{"get", "set ensure", "flush"},
		},
		{
			name:   "in sync: nothing",
			state:  map[string]any{"ensure": "present", "size": int64(3), "colour": "red", "tags": []any{"b", "a"}},
			params: map[string]any{"ensure": "present", "size": "3", "tags": []any{"a", "b"}},
			want:   protocol.Result{Resource: "Widget[/a]"},
			calls:  []string{"get"},
		},
		{
			name:   "absent and should be absent: nothing more",
			state:  map[string]any{"ensure": "absent"},
			params: map[string]any{"ensure": "absent", "size": 3},
			want:   protocol.Result{Resource: "Widget[/a]"},
			calls:  []string{"get"},
		},
		{
			name:   "no ensure and resource absent: nothing to manage",
			state:  map[string]any{"ensure": "absent"},
			params: map[string]any{"size": 3},
			want:   protocol.Result{Resource: "Widget[/a]"},
			calls:  []string{"get"},
		},
		{
			name:   "unreported ensure counts as present",
			state:  map[string]any{"size": int64(3), "colour": "red"},
			params: map[string]any{"size": 4},
			want: protocol.Result{Resource: "Widget[/a]", Changed: true, Events: []protocol.Event{
				{Property: "size", Previous: int64(3), Desired: int64(4), Message: "size changed 3 to 4", Status: "success"}}},
			calls: []string{"get", "set size", "flush"},
		},
		{
			name:   "properties in declaration order, default property managed",
			state:  map[string]any{"ensure": "present", "size": int64(3), "colour": "blue"},
			params: map[string]any{"ensure": "present", "size": 4, "tags": "x"},
			want: protocol.Result{Resource: "Widget[/a]", Changed: true, Events: []protocol.Event{
				{Property: "size", Previous: int64(3), Desired: int64(4), Message: "size changed 3 to 4", Status: "success"},
				{Property: "colour", Previous: "blue", Desired: "red", Message: "colour changed 'blue' to 'red'", Status: "success"},
				{Property: "tags", Previous: nil, Desired: []any{"x"}, Message: "defined 'tags' as ['x']", Status: "success"},
			}},
			calls: []string{"get", "set size", "set colour", "set tags", "flush"},
			after: map[string]any{"ensure": "present", "size": int64(4), "colour": "red", "tags": []any{"x"}},
		},
		{
			name:   "noop metaparameter records only",
			state:  map[string]any{"ensure": "present", "size": int64(3), "colour": "red"},
			params: map[string]any{"size": 4, "noop": true},
			want: protocol.Result{Resource: "Widget[/a]", Noop: true, Events: []protocol.Event{
				{Property: "size", Previous: int64(3), Desired: int64(4), Message: "current_value 3, should be 4 (noop)", Status: "noop"}}},
			calls: []string{"get"},
			after: map[string]any{"ensure": "present", "size": int64(3), "colour": "red"},
		},
		{
			name:   "global noop, ensure",
			noop:   true,
			state:  map[string]any{"ensure": "absent"},
			params: map[string]any{"ensure": "present"},
			want: protocol.Result{Resource: "Widget[/a]", Noop: true, Events: []protocol.Event{
				{Property: "ensure", Previous: "absent", Desired: "present", Message: "current_value 'absent', should be 'present' (noop)", Status: "noop"}}},
			calls: []string{"get"},
		},
		{
			name:   "noop false overrides the global noop",
			noop:   true,
			state:  map[string]any{"ensure": "absent"},
			params: map[string]any{"ensure": "present", "noop": false},
			want: protocol.Result{Resource: "Widget[/a]", Changed: true, Events: []protocol.Event{
				{Property: "ensure", Previous: "absent", Desired: "present", Message: "created", Status: "success"}}},
			calls: []string{"get", "set ensure", "flush"},
		},
		{
			name:   "a failed property does not stop the others",
			state:  map[string]any{"ensure": "present", "size": int64(3), "colour": "blue"},
			params: map[string]any{"size": 4},
			setErr: map[string]error{"size": errors.New("disk full")},
			want: protocol.Result{Resource: "Widget[/a]", Changed: true, Failed: true,
				Exception: "change from 3 to 4 failed: mock set size: disk full",
				Events: []protocol.Event{
					{Property: "size", Previous: int64(3), Desired: int64(4), Message: "change from 3 to 4 failed: mock set size: disk full", Status: "failure"},
					{Property: "colour", Previous: "blue", Desired: "red", Message: "colour changed 'blue' to 'red'", Status: "success"},
				}},
			calls: []string{"get", "set size", "set colour", "flush"},
		},
		{
			name:   "only failures: no flush, not changed",
			state:  map[string]any{"ensure": "present", "size": int64(3), "colour": "red"},
			params: map[string]any{"size": 4},
			setErr: map[string]error{"size": errors.New("disk full")},
			want: protocol.Result{Resource: "Widget[/a]", Failed: true,
				Exception: "change from 3 to 4 failed: mock set size: disk full",
				Events: []protocol.Event{
					{Property: "size", Previous: int64(3), Desired: int64(4), Message: "change from 3 to 4 failed: mock set size: disk full", Status: "failure"},
				}},
			calls: []string{"get", "set size"},
		},
		{
			name:     "flush failure fails the changes",
			state:    map[string]any{"ensure": "present", "size": int64(3), "colour": "red"},
			params:   map[string]any{"size": 4},
			flushErr: errors.New("commit refused"),
			want: protocol.Result{Resource: "Widget[/a]", Failed: true,
				Exception: "could not apply the changes: commit refused",
				Events: []protocol.Event{
					{Property: "size", Previous: int64(3), Desired: int64(4), Message: "size changed 3 to 4 (could not apply the changes: commit refused)", Status: "failure"},
				}},
			calls: []string{"get", "set size", "flush"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mock.NewProvider(tc.state)
			p.SetErr = tc.setErr
			p.FlushErr = tc.flushErr
			e, _ := newEngine(t, mock.Widget(p))
			e.Env().Options.Noop = tc.noop
			got := e.Apply(context.Background(), req("Widget", "/a", tc.params))
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.calls, p.CallLog())
			if tc.after != nil {
				assert.Equal(t, tc.after, p.State)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	p := mock.NewProvider(map[string]any{"ensure": "present"})
	e, _ := newEngine(t, mock.Widget(p))
	cases := []struct {
		name, typ, title string
		params           map[string]any
		want             protocol.Result
	}{
		{"unknown type", "starship", "enterprise", nil,
			protocol.ErrorResult("Starship[enterprise]", "unknown resource type 'starship'")},
		{"unknown attribute", "widget", "/a", map[string]any{"parameters": "many"},
			protocol.ErrorResult("Widget[/a]", "no parameter named 'parameters' on Widget[/a]")},
		{"bad value", "WIDGET", "/a", map[string]any{"colour": true},
			protocol.ErrorResult("Widget[/a]", `Parameter colour failed on Widget[/a]: Invalid value "true". Valid values are red, blue.`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &protocol.Request{Type: tc.typ, Title: tc.title, Params: tc.params, ID: []byte(`7`)}
			// The id is echoed by the receiver loop, not the engine.
			assert.Equal(t, tc.want, e.Apply(context.Background(), r))
		})
	}
	assert.Empty(t, p.CallLog(), "the provider is never reached on bad input")
}

func TestApplyPanicAndGetError(t *testing.T) {
	p := mock.NewProvider(nil)
	p.Panic = "boom"
	e, logs := newEngine(t, mock.Widget(p))
	got := e.Apply(context.Background(), req("widget", "/a", map[string]any{"ensure": "present"}))
	assert.True(t, got.Error)
	assert.True(t, got.Failed)
	assert.Equal(t, "Widget[/a]", got.Resource)
	assert.Contains(t, got.Exception, "Widget[/a]: internal error: boom")
	assert.Contains(t, logs.String(), "panic while applying Widget[/a]")

	p2 := mock.NewProvider(nil)
	p2.GetErr = errors.New("permission denied")
	e2, _ := newEngine(t, mock.Widget(p2))
	got = e2.Apply(context.Background(), req("widget", "/a", map[string]any{"ensure": "present"}))
	assert.Equal(t, protocol.Result{Resource: "Widget[/a]", Failed: true,
		Exception: "Could not evaluate Widget[/a]: permission denied"}, got)
}

func TestApplyLogsChanges(t *testing.T) {
	p := mock.NewProvider(map[string]any{"ensure": "present", "size": int64(1), "colour": "red"})
	p.Message = "resized"
	e, logs := newEngine(t, mock.Widget(p))
	got := e.Apply(context.Background(), req("widget", "/a", map[string]any{"size": 2, "before": "X[y]"}))
	require.True(t, got.Changed)
	assert.Equal(t, "resized", got.Events[0].Message, "a provider may rewrite the message")
	out := logs.String()
	assert.Contains(t, out, "level=INFO+2")
	assert.Contains(t, out, "Widget[/a]/size: resized")
	assert.Contains(t, out, "metaparameter 'before' ignored")

	// loglevel moves the change message.
	p.State["size"] = int64(1)
	before := strings.Count(logs.String(), "level=WARN")
	e.Apply(context.Background(), req("widget", "/a", map[string]any{"size": 2, "loglevel": "warning"}))
	assert.Equal(t, before+1, strings.Count(logs.String(), "level=WARN"))
}

func TestNewEngineDefaults(t *testing.T) {
	e := engine.New(applier.NewRegistry(), nil)
	env := e.Env()
	assert.NotEmpty(t, env.Facts["kernel"])
	assert.True(t, env.Features["posix"])
	assert.NotNil(t, env.Log)
	assert.NotNil(t, env.Cache)
	assert.Equal(t, applier.DefaultStateDir(), env.Options.StateDir)
	var nilEnv *applier.Env
	assert.NotNil(t, nilEnv.Logger())
}

// TestProviderReportsUndeclared: a provider reporting a property its type
// does not declare is a bug in the provider; the request gets an error
// answer naming the resource and the property, and the next request of
// the same engine (reusing the recycled storage) is evaluated cleanly.
func TestProviderReportsUndeclared(t *testing.T) {
	bad := mock.NewProvider(map[string]any{"ensure": "present", "colour_typo": "red"})
	good := mock.NewProvider(map[string]any{"ensure": "present", "colour": "red"})
	badType, goodType := mock.Widget(bad), mock.Widget(good)
	goodType.Name = "gadget"
	e, _ := newEngine(t, badType, goodType)

	got := e.Apply(context.Background(), req("widget", "/a", map[string]any{"ensure": "present"}))
	assert.True(t, got.Error)
	assert.Contains(t, got.Exception, `Widget[/a]: internal error: Widget[/a]: provider reports "colour_typo", which the type does not declare`)

	got = e.Apply(context.Background(), req("gadget", "/b", map[string]any{"ensure": "present", "colour": "blue"}))
	require.False(t, got.Error, got.Exception)
	assert.True(t, got.Changed)
	require.Len(t, got.Events, 1)
	assert.Equal(t, "colour", got.Events[0].Property)
	assert.Equal(t, "red", got.Events[0].Previous)
}

func TestState(t *testing.T) {
	r, err := mock.Widget(mock.NewProvider(nil)).NewResource("/a", map[string]any{}, false)
	require.NoError(t, err)
	s := applier.NewState(r)
	_, ok := s.Get("size")
	assert.False(t, ok, "a new State knows nothing")
	s.Set("size", int64(4))
	v, ok := s.Get("size")
	assert.True(t, ok)
	assert.Equal(t, int64(4), v)
	assert.Equal(t, int64(4), s.Value("size"))
	assert.Nil(t, s.Value("colour"))
	assert.Panics(t, func() { s.Set("nope", 1) })
	var zero applier.State
	assert.Nil(t, zero.Value("size"), "the zero State is empty")
}

// resolving is a provider whose desired size depends on "the system": its
// Resolve sets it, and its Get may (wrongly) try to set it too.
type resolving struct {
	*mock.Provider
	r          *applier.Resource
	resolveErr error
	setInGet   bool
	// unset: Resolve drops the desired size; unsetInGet: Get (wrongly) does.
	unset, unsetInGet bool
}

func (p *resolving) Resolve(ctx context.Context) error {
	p.Calls = append(p.Calls, "resolve")
	if p.resolveErr != nil {
		return p.resolveErr
	}
	if p.unset {
		p.r.Unset("size")
		return nil
	}
	if !p.r.Given("size") {
		p.r.Set("size", int64(7))
	}
	return nil
}

func (p *resolving) Get(ctx context.Context, cur *applier.State) error {
	if p.setInGet {
		p.r.Set("size", int64(9))
	}
	if p.unsetInGet {
		p.r.Unset("size")
	}
	return p.Provider.Get(ctx, cur)
}

// The contract's order: Resolve, then Get, then Set; desired values are
// settled before Get, and a Get that sets one is an error answer.
func TestResolverContract(t *testing.T) {
	cases := []struct {
		name       string
		resolveErr error
		setInGet   bool
		unset      bool
		unsetInGet bool
		want       func(t *testing.T, got protocol.Result, p *resolving)
	}{
		{name: "resolve unsets a desired value", unset: true, want: func(t *testing.T, got protocol.Result, p *resolving) {
			require.False(t, got.Failed, got.Exception)
			assert.Empty(t, got.Events, "an unset property is not managed")
			assert.Equal(t, []string{"resolve", "get"}, p.CallLog())
		}},
		{name: "get unsets a desired value", unsetInGet: true, want: func(t *testing.T, got protocol.Result, p *resolving) {
			assert.True(t, got.Error)
			assert.Contains(t, got.Exception, `"size" unset after desired values were resolved`)
		}},
		{name: "resolve sets a desired value", want: func(t *testing.T, got protocol.Result, p *resolving) {
			require.False(t, got.Failed, got.Exception)
			require.Len(t, got.Events, 1)
			assert.Equal(t, int64(7), got.Events[0].Desired)
			assert.Equal(t, []string{"resolve", "get", "set size", "flush"}, p.CallLog())
		}},
		{name: "resolve fails", resolveErr: errors.New("source unreachable"), want: func(t *testing.T, got protocol.Result, p *resolving) {
			assert.True(t, got.Failed)
			assert.False(t, got.Error)
			assert.Equal(t, "Could not evaluate Widget[/a]: source unreachable", got.Exception)
			assert.Equal(t, []string{"resolve"}, p.CallLog(), "nothing read or changed after a failed Resolve")
		}},
		{name: "get sets a desired value", setInGet: true, want: func(t *testing.T, got protocol.Result, p *resolving) {
			assert.True(t, got.Error)
			assert.Contains(t, got.Exception, `"size" set after desired values were resolved`)
			assert.Equal(t, []string{"resolve"}, p.CallLog(), "no change after the contract is broken")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &resolving{Provider: mock.NewProvider(map[string]any{"ensure": "present", "size": int64(3), "colour": "red"}), resolveErr: c.resolveErr, setInGet: c.setInGet,
				unset: c.unset, unsetInGet: c.unsetInGet}
			typ := mock.Widget(p.Provider)
			typ.Providers = []*applier.ProviderSpec{{Name: "mem", New: func(r *applier.Resource, _ *applier.Env) (applier.Provider, error) {
				p.r = r
				return p, nil
			}}}
			e, _ := newEngine(t, typ)
			params := map[string]any{"ensure": "present"}
			if c.unset {
				params["size"] = int64(5) // out of sync (3) unless unset
			}
			c.want(t, e.Apply(context.Background(), req("widget", "/a", params)), p)
		})
	}
}

// parting is a provider whose one change is made of parts, one failing.
type parting struct{ *mock.Provider }

func (p parting) Set(ctx context.Context, c *applier.Change) error {
	c.Parts = append(c.Parts,
		applier.Part{Previous: "file", Desired: "absent", Message: "removed /a"},
		applier.Part{Previous: "file", Desired: "absent", Message: "removed /b", Err: errors.New("busy")})
	return nil
}

// A change made of parts answers one event per part; a failed part fails
// the resource, the others still count as changes.
func TestChangeParts(t *testing.T) {
	p := parting{mock.NewProvider(map[string]any{"ensure": "present", "size": int64(1), "colour": "red"})}
	typ := mock.Widget(p.Provider)
	typ.Providers = []*applier.ProviderSpec{{Name: "mem", New: func(*applier.Resource, *applier.Env) (applier.Provider, error) { return p, nil }}}
	e, logs := newEngine(t, typ)
	got := e.Apply(context.Background(), req("widget", "/a", map[string]any{"size": 2}))
	assert.True(t, got.Changed)
	assert.True(t, got.Failed)
	assert.False(t, got.Error)
	assert.Equal(t, "removed /b failed: busy", got.Exception)
	require.Len(t, got.Events, 2)
	assert.Equal(t, protocol.Event{Property: "size", Previous: "file", Desired: "absent", Message: "removed /a", Status: protocol.StatusSuccess}, got.Events[0])
	assert.Equal(t, protocol.StatusFailure, got.Events[1].Status)
	assert.Contains(t, logs.String(), "removed /b failed: busy")
}
