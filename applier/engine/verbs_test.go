package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// slotType is a type over a real directory: each file NAME is the
// resource NAME, its content its `data`, its length its read-only `size`,
// its permission bits its `mode`. Its provider lists the directory.
func slotType(dir string) *applier.Type {
	get := func(name string, cur *applier.State) error {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			cur.Set("ensure", "absent")
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		cur.Set("ensure", "present")
		cur.Set("data", string(b))
		cur.Set("size", int64(len(b)))
		cur.Set("mode", modeHandle(fi.Mode().Perm()))
		return nil
	}
	return &applier.Type{
		Name: "slot",
		Doc:  "A file in a test directory.",
		Attrs: []*applier.Attr{
			{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString, Doc: "Name."},
			{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"present", "absent"}, Doc: "Presence."},
			{Name: "data", Behaviour: applier.Property, Kind: applier.KindString, Required: true, Doc: "Content."},
			{Name: "mode", Behaviour: applier.Property, Kind: applier.KindString, Doc: "Mode.",
				InSync: func(is, should any) bool { return fmt.Sprint(is) == fmt.Sprint(should) }},
			{Name: "size", Behaviour: applier.ReadOnly, Kind: applier.KindInteger, Doc: "Length."},
		},
		Providers: []*applier.ProviderSpec{{
			Name: "dir",
			New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
				return &slotProvider{r: r, dir: dir, get: get}, nil
			},
			Instances: func(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
				ents, err := os.ReadDir(dir)
				if err != nil {
					return err
				}
				for _, e := range ents {
					if err := get(e.Name(), add(e.Name())); err != nil {
						return err
					}
				}
				return nil
			},
		}},
	}
}

// modeHandle is a current value reported as a handle (as file's mode is).
type modeHandle os.FileMode

func (m modeHandle) String() string { return fmt.Sprintf("%04o", uint32(m)) }
func (m modeHandle) Report() any    { return m.String() }

type slotProvider struct {
	r   *applier.Resource
	dir string
	get func(string, *applier.State) error
}

func (p *slotProvider) Get(ctx context.Context, cur *applier.State) error {
	return p.get(p.r.Name(), cur)
}

func (p *slotProvider) Set(ctx context.Context, c *applier.Change) error {
	path := filepath.Join(p.dir, p.r.Name())
	switch c.Property {
	case "ensure":
		if c.Should == "absent" {
			return os.Remove(path)
		}
		return os.WriteFile(path, []byte(p.r.String("data")), 0o644)
	case "data":
		return os.WriteFile(path, []byte(c.Should.(string)), 0o644)
	case "mode":
		var m uint32
		fmt.Sscanf(c.Should.(string), "%o", &m)
		return os.Chmod(path, os.FileMode(m))
	}
	return nil
}

func verbReq(op protocol.Op, typ, title string, params map[string]any) *protocol.Request {
	return &protocol.Request{Op: op, Type: typ, Title: title, Params: params}
}

func TestFindRoundTrip(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("it's\nhere"), 0o640))
	e, _ := newEngine(t, slotType(dir))
	ctx := context.Background()

	res := e.Apply(ctx, verbReq(protocol.OpFind, "slot", "a", nil))
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, "Slot[a]", res.Resource)
	assert.Equal(t, protocol.State{
		{Name: "ensure", Value: "present"},
		{Name: "data", Value: "it's\nhere"},
		{Name: "mode", Value: "0640"},
		{Name: "provider", Value: "dir"},
		{Name: "size", Value: int64(9)},
	}, res.State)
	assert.Equal(t, `{ensure: 'present', data: "it's\nhere", mode: '0640', provider: 'dir'}`, res.Params)

	// The params, applied, change nothing.
	params, err := yamlparams.Parse([]byte(res.Params))
	require.NoError(t, err)
	back := e.Apply(ctx, req("slot", "a", params))
	assert.False(t, back.Failed, back.Exception)
	assert.False(t, back.Changed, "%+v", back.Events)

	// The answer line carries them after the six fields.
	line := string(protocol.AppendResult(nil, &res, false))
	assert.Equal(t, `{"resource":"Slot[a]","failed":false,"changed":false,"noop":false,"error":false,"exception":null,`+
		`"state":{"ensure":"present","data":"it's\nhere","mode":"0640","provider":"dir","size":9},`+
		`"params":"{ensure: 'present', data: \"it's\\nhere\", mode: '0640', provider: 'dir'}"}`+"\n", line)
	var dec protocol.Result
	require.NoError(t, protocol.DecodeResult([]byte(line), &dec))
	assert.Equal(t, res.State, dec.State)
	assert.Equal(t, res.Params, dec.Params)
}

func TestFindMissingChangesNothing(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t, slotType(dir))
	res := e.Apply(context.Background(), verbReq(protocol.OpFind, "slot", "nope", map[string]any{"ensure": "present", "data": "x"}))
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "dir"}}, res.State)
	// The params keep what the request gave (with ensure absent nothing
	// else is synced): the round trip reaches the same resource.
	assert.Equal(t, "{ensure: 'absent', provider: 'dir', data: 'x'}", res.Params)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents, "find created something")
}

func TestFindErrors(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t, slotType(dir))
	ctx := context.Background()
	res := e.Apply(ctx, verbReq(protocol.OpFind, "slot", "", nil))
	assert.True(t, res.Error)
	assert.Equal(t, "find of Slot needs a title", res.Exception)
	res = e.Apply(ctx, verbReq(protocol.OpFind, "slott", "a", nil))
	assert.True(t, res.Error)
	assert.Contains(t, res.Exception, "unknown resource type 'slott'")
	res = e.Apply(ctx, verbReq(protocol.OpFind, "slot", "a", map[string]any{"bogus": 1}))
	assert.True(t, res.Error)
	assert.Contains(t, res.Exception, "no parameter named 'bogus' on Slot[a]")
	res = e.Apply(ctx, verbReq(protocol.OpSearch, "slot", "a", nil))
	assert.True(t, res.Error)
	assert.Contains(t, res.Exception, "search of Slot takes no title")
	res = e.Apply(ctx, verbReq(protocol.Op(9), "slot", "a", nil))
	assert.True(t, res.Error)
	assert.Contains(t, res.Exception, "unknown op")
}

func TestSearchListsAndFilters(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"a": "1", "b": "22", "c": "1"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	e, _ := newEngine(t, slotType(dir))
	ctx := context.Background()
	res := e.Apply(ctx, verbReq(protocol.OpSearch, "slot", "", nil))
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, "Slot", res.Resource)
	var titles []string
	for _, in := range res.Instances {
		titles = append(titles, in.Title)
	}
	sort.Strings(titles)
	assert.Equal(t, []string{"a", "b", "c"}, titles)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "present"}, {Name: "data", Value: "22"},
		{Name: "mode", Value: "0644"}, {Name: "provider", Value: "dir"}, {Name: "size", Value: int64(2)}}, res.Instances[1].State)

	// A property among the params filters (data is required for apply, not here).
	res = e.Apply(ctx, verbReq(protocol.OpSearch, "slot", "", map[string]any{"data": "1"}))
	require.False(t, res.Failed, res.Exception)
	titles = nil
	for _, in := range res.Instances {
		titles = append(titles, in.Title)
	}
	sort.Strings(titles)
	assert.Equal(t, []string{"a", "c"}, titles)
	res = e.Apply(ctx, verbReq(protocol.OpSearch, "slot", "", map[string]any{"size": 2}))
	require.False(t, res.Failed, res.Exception)
	require.Len(t, res.Instances, 1)
	assert.Equal(t, "b", res.Instances[0].Title)

	line := protocol.AppendResult(nil, &res, false)
	var dec protocol.Result
	require.NoError(t, protocol.DecodeResult(line, &dec))
	assert.Equal(t, res.Instances, dec.Instances)

	// None found: an empty list, not an error.
	res = e.Apply(ctx, verbReq(protocol.OpSearch, "slot", "", map[string]any{"data": "zzz"}))
	require.False(t, res.Failed, res.Exception)
	assert.Contains(t, string(protocol.AppendResult(nil, &res, false)), `"instances":[]`)
}

func TestSearchOfTypeThatCannotList(t *testing.T) {
	e, _ := newEngine(t, mock.Widget(nil))
	res := e.Apply(context.Background(), verbReq(protocol.OpSearch, "widget", "", nil))
	assert.True(t, res.Error)
	assert.Equal(t, "cannot search Widget: type widget cannot list instances", res.Exception)
}

func TestDescribeJSON(t *testing.T) {
	dir := t.TempDir()
	e, _ := newEngine(t, slotType(dir))
	res := e.Apply(context.Background(), verbReq(protocol.OpDescribe, "slot", "", nil))
	require.False(t, res.Failed, res.Exception)
	var d struct {
		Name       string `json:"name"`
		Attributes []struct {
			Name      string   `json:"name"`
			Behaviour string   `json:"behaviour"`
			Kind      string   `json:"kind"`
			Values    []string `json:"values"`
			Required  bool     `json:"required"`
		} `json:"attributes"`
		Providers []struct {
			Name     string `json:"name"`
			Suitable bool   `json:"suitable"`
			CanList  bool   `json:"can_list"`
		} `json:"providers"`
		Chosen  string `json:"chosen"`
		Why     string `json:"why"`
		CanList bool   `json:"can_list"`
	}
	require.NoError(t, json.Unmarshal(res.Declaration, &d), string(res.Declaration))
	assert.Equal(t, "slot", d.Name)
	require.Len(t, d.Attributes, 6)
	assert.Equal(t, "ensure", d.Attributes[1].Name)
	assert.Equal(t, []string{"present", "absent"}, d.Attributes[1].Values)
	assert.Equal(t, "provider", d.Attributes[5].Name)
	assert.True(t, d.Attributes[2].Required)
	assert.Equal(t, "read-only", d.Attributes[4].Behaviour)
	assert.Equal(t, "dir", d.Chosen)
	assert.Contains(t, d.Why, "first suitable")
	assert.True(t, d.CanList)
	assert.True(t, d.Providers[0].Suitable)
}

// TestFindKeepsScope: a find's params keep what locates the resource: a
// namevar apart from the title reaches the same file on the round trip.
func TestFindKeepsScope(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real"), []byte("x"), 0o600))
	e, _ := newEngine(t, slotType(dir))
	ctx := context.Background()
	res := e.Apply(ctx, verbReq(protocol.OpFind, "slot", "alias", map[string]any{"name": "real"}))
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, "present", res.State[0].Value)
	assert.Equal(t, "{ensure: 'present', data: 'x', mode: '0600', provider: 'dir', name: 'real'}", res.Params)
	params, err := yamlparams.Parse([]byte(res.Params))
	require.NoError(t, err)
	back := e.Apply(ctx, req("slot", "alias", params))
	assert.False(t, back.Failed || back.Error, back.Exception)
	assert.False(t, back.Changed, "%+v", back.Events)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "the round trip made a second file")
}
