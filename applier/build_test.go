package applier_test

import (
	"log/slog"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/mock"
)

func TestNewResource(t *testing.T) {
	wt := mock.Widget(mock.NewProvider(nil))
	cases := []struct {
		name    string
		title   string
		params  map[string]any
		check   func(t *testing.T, r *applier.Resource)
		wantErr string
	}{
		{name: "title fills namevar, defaults", title: "/a/", params: map[string]any{},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, "/a", r.Name())
				assert.Equal(t, "red", r.Value("colour"))
				assert.Equal(t, false, r.Value("force"))
				assert.Equal(t, "label of /a", r.Value("label"))
				assert.False(t, r.Has("ensure"))
				assert.False(t, r.Given("colour"))
				assert.Equal(t, "Widget[/a/]", r.Ref())
			}},
		{name: "namevar given wins over title", title: "x", params: map[string]any{"path": "/b"},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, "/b", r.Name())
				assert.True(t, r.Given("path"))
			}},
		{name: "alias and given", title: "/a", params: map[string]any{"ensure": "installed", "size": "12", "tags": "x"},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, "present", r.Value("ensure"))
				assert.Equal(t, int64(12), r.Value("size"))
				assert.Equal(t, []any{"x"}, r.Value("tags"))
				assert.True(t, r.Given("ensure"))
			}},
		{name: "null param refused, as Puppet refuses it", title: "/a", params: map[string]any{"size": nil, "colour": "red"},
			wantErr: "Got nil value for size on Widget[/a]"},
		{name: "null metaparameter refused", title: "/a", params: map[string]any{"noop": nil},
			wantErr: "Got nil value for noop on Widget[/a]"},
		{name: "metaparameters accepted", title: "/a", params: map[string]any{
			"noop": "true", "loglevel": "info", "tag": []any{"a"}, "alias": "w", "audit": "all",
			"before": "File[/x]", "require": "File[/y]", "notify": "X[y]", "subscribe": "X[z]", "schedule": "daily", "stage": "main"},
			check: func(t *testing.T, r *applier.Resource) {
				assert.True(t, r.Noop)
				assert.Equal(t, slog.LevelInfo, r.LogLevel)
				assert.Equal(t, []string{"alias", "audit", "before", "notify", "require", "schedule", "stage", "subscribe", "tag"}, r.Ignored)
				assert.False(t, r.Declares("tag"), "metaparameters are not attributes")
			}},
		{name: "provider parameter", title: "/a", params: map[string]any{"provider": "mem"},
			check: func(t *testing.T, r *applier.Resource) { assert.Equal(t, "mem", r.Value("provider")) }},
		{name: "unknown attribute", title: "/a", params: map[string]any{"zz": 1, "bogus": 1},
			wantErr: "no parameter named 'bogus' on Widget[/a]"},
		{name: "bad enum", title: "/a", params: map[string]any{"colour": "green"},
			wantErr: `Parameter colour failed on Widget[/a]: Invalid value "green". Valid values are red, blue.`},
		{name: "bad integer", title: "/a", params: map[string]any{"size": "big"},
			wantErr: "Parameter size failed on Widget[/a]: expected an integer, got 'big'"},
		{name: "relative namevar", title: "rel", params: map[string]any{},
			wantErr: "Parameter path failed on Widget[rel]: File paths must be fully qualified, not 'rel'"},
		{name: "read-only given", title: "/a", params: map[string]any{"serial": "x"},
			wantErr: "Parameter serial failed on Widget[/a]: is read-only"},
		{name: "bad noop", title: "/a", params: map[string]any{"noop": "perhaps"},
			wantErr: "Parameter noop failed on Widget[/a]: expected a boolean"},
		{name: "bad loglevel", title: "/a", params: map[string]any{"loglevel": "loud"},
			wantErr: `Parameter loglevel failed on Widget[/a]: Invalid value "loud"`},
		{name: "bad provider", title: "/a", params: map[string]any{"provider": "disk"},
			wantErr: `Parameter provider failed on Widget[/a]: Invalid value "disk". Valid values are mem.`},
		{name: "type validate", title: "/a", params: map[string]any{"force": "yes", "ensure": "absent"},
			wantErr: "Validation of Widget[/a] failed: force and ensure absent conflict"},
		{name: "type validate names attribute", title: "/a", params: map[string]any{"size": 5000},
			wantErr: "Parameter size failed on Widget[/a]: must be at most 1000, got 5000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := wt.NewResource(tc.title, tc.params, false)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, r)
		})
	}
}

func TestTitlePatternsAndRequired(t *testing.T) {
	kt := &applier.Type{
		Name: "key",
		Attrs: []*applier.Attr{
			{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString},
			{Name: "type", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"rsa", "ed25519"}, Required: true},
		},
		TitlePatterns: []applier.TitlePattern{{Re: regexp.MustCompile(`^(?P<name>[^@]+)@(?P<type>.+)$`)}},
		RefTitle:      func(r *applier.Resource) string { return r.Name() + "@" + r.String("type") },
		Providers:     []*applier.ProviderSpec{mock.NewProvider(nil).Spec("mem")},
	}
	cases := []struct {
		title    string
		params   map[string]any
		name, ty string
		wantErr  string
	}{
		{"host@rsa", nil, "host", "rsa", ""},
		{"host@rsa", map[string]any{"type": "ed25519"}, "host", "ed25519", ""},
		{"host@rsa", map[string]any{"name": "other"}, "other", "rsa", ""},
		{"host@dsa", nil, "", "", `Parameter type failed on Key[host@dsa]: Invalid value "dsa"`},
		{"plain", map[string]any{"type": "rsa"}, "plain", "rsa", ""},
		{"plain", nil, "", "", "Parameter type failed on Key[plain]: a value is required"},
	}
	for _, tc := range cases {
		r, err := kt.NewResource(tc.title, tc.params, false)
		if tc.wantErr != "" {
			require.Error(t, err, tc.title)
			assert.Contains(t, err.Error(), tc.wantErr)
			continue
		}
		require.NoError(t, err, tc.title)
		assert.Equal(t, tc.name, r.Name(), tc.title)
		assert.Equal(t, tc.ty, r.String("type"), tc.title)
		assert.Equal(t, "Key["+tc.name+"@"+tc.ty+"]", r.Ref(), "RefTitle names the resource: "+tc.title)
	}
}

func TestCheckRejectsBadDeclarations(t *testing.T) {
	cases := map[string]*applier.Type{
		"duplicate": {Name: "d", Attrs: []*applier.Attr{{Name: "a"}, {Name: "a"}}},
		"two namevars": {Name: "d", Attrs: []*applier.Attr{
			{Name: "a", Behaviour: applier.Namevar}, {Name: "b", Behaviour: applier.Namevar}}},
		"metaparameter": {Name: "d", Attrs: []*applier.Attr{{Name: "tag"}}},
		"bad default":   {Name: "d", Attrs: []*applier.Attr{{Name: "n", Kind: applier.KindInteger, Default: "x"}}},
	}
	for name, ty := range cases {
		assert.Error(t, ty.Check(), name)
		assert.Panics(t, func() { applier.NewRegistry().Add(ty) }, name)
	}
}

// TestResourceSlots covers the slot accessors: what the request gave, what
// a default or the title filled, Set and SetGiven, and a recycled Resource
// of another type keeping nothing of the last one.
func TestResourceSlots(t *testing.T) {
	wt := mock.Widget(mock.NewProvider(nil))
	r, err := wt.NewResource("/a", map[string]any{"ensure": "present", "size": 3}, false)
	require.NoError(t, err)

	cases := []struct {
		attr         string
		value        any
		has, isGiven bool
	}{
		{"path", "/a", true, false}, // from the title
		{"ensure", "present", true, true},
		{"size", int64(3), true, true},
		{"colour", "red", true, false},        // static default
		{"label", "label of /a", true, false}, // computed default
		{"tags", nil, false, false},           // declared, unset
		{"provider", nil, false, false},       // the implicit parameter, unset
	}
	for _, c := range cases {
		v, ok := r.Get(c.attr)
		assert.Equal(t, c.value, v, c.attr)
		assert.Equal(t, c.has, ok, "Get(%s) ok", c.attr)
		assert.Equal(t, c.has, r.Has(c.attr), "Has(%s)", c.attr)
		assert.Equal(t, c.value, r.Value(c.attr), "Value(%s)", c.attr)
		assert.Equal(t, c.isGiven, r.Given(c.attr), "Given(%s)", c.attr)
	}

	r.Set("colour", "blue")
	assert.Equal(t, "blue", r.String("colour"))
	assert.False(t, r.Given("colour"), "Set does not make a value given")
	r.SetGiven("tags", []any{"x"})
	assert.True(t, r.Given("tags"))
	assert.Equal(t, []string{"x"}, r.Strings("tags"))
	// A name the type does not declare is a programming error in every
	// accessor: a typo must not read as "unset".
	const undeclared = `Widget[/a]: no attribute named "nope": the type does not declare it`
	for name, f := range map[string]func(){
		"Set": func() { r.Set("nope", 1) }, "SetGiven": func() { r.SetGiven("nope", 1) },
		"Get": func() { r.Get("nope") }, "Value": func() { r.Value("nope") }, "Has": func() { r.Has("nope") },
		"Given": func() { r.Given("nope") }, "String": func() { r.String("nope") }, "Bool": func() { r.Bool("nope") },
		"Int": func() { r.Int("nope") }, "Strings": func() { r.Strings("nope") },
	} {
		assert.PanicsWithValue(t, undeclared, f, name)
	}
	assert.False(t, r.Declares("nope"))
	assert.True(t, r.Declares("provider"))

	// Another type with other slots reusing r's storage, as the engine's
	// pool does: nothing of the widget survives.
	gadget := &applier.Type{Name: "gadget", Attrs: []*applier.Attr{
		{Name: "name", Behaviour: applier.Namevar},
		{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"present", "absent"}},
	}, Providers: []*applier.ProviderSpec{mock.NewProvider(nil).Spec("")}}
	g := applier.Rebuild(gadget, r, "g", map[string]any{}, false)
	require.NotNil(t, g)
	assert.Equal(t, "g", g.Name())
	assert.False(t, g.Has("ensure"), "ensure was the widget's, not the gadget's")
	assert.False(t, g.Given("ensure"))
	assert.False(t, g.Declares("colour"), "colour was the widget's")
}

// TestWhenManaged: the default applies only when a property is given, as
// Puppet defaults ensure only for a managed resource; a parameter alone
// (or a property's own default) does not make the resource managed.
func TestWhenManaged(t *testing.T) {
	wt := mock.Widget(mock.NewProvider(nil))
	wt.Attrs[1].DefaultFunc = applier.WhenManaged("present")
	for _, tc := range []struct {
		name    string
		params  map[string]any
		want    any
		managed bool
	}{
		{"nothing given", map[string]any{}, nil, false},
		{"a parameter only", map[string]any{"force": true}, nil, false},
		{"a property", map[string]any{"size": 3}, "present", true},
		{"ensure given wins", map[string]any{"size": 3, "ensure": "absent"}, "absent", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := wt.NewResource("/a", tc.params, false)
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Value("ensure"))
			assert.Equal(t, tc.managed, r.GivenAnyProperty())
		})
	}
}
