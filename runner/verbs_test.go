package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

func TestVerbsWithMock(t *testing.T) {
	ctx := context.Background()
	state := protocol.State{{Name: "ensure", Value: "present"}, {Name: "uid", Value: int64(0)}}
	m := &mock.Runner{Protocol: 2, Script: []mock.Reply{
		mock.Found(state, "{ensure: 'present', uid: 0}"),
		mock.Listed(protocol.Instance{Title: "a", State: state}, protocol.Instance{Title: "b", State: state}),
		mock.Declared(`{"name":"user"}`),
		mock.Errored("cannot search Exec: provider posix of type exec cannot list instances"),
	}}
	defer m.Close()

	f, err := runner.Find(ctx, m, "user", "root")
	require.NoError(t, err)
	assert.Equal(t, &runner.Found{Ref: "User[root]", State: state, Params: "{ensure: 'present', uid: 0}"}, f)
	assert.True(t, f.Exists())

	list, err := runner.Search(ctx, m, "user", map[string]any{"shell": "/bin/sh"})
	require.NoError(t, err)
	assert.Equal(t, []runner.Instance{{Title: "a", State: state}, {Title: "b", State: state}}, list)

	d, err := runner.Describe(ctx, m, "user")
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"user"}`, string(d))

	_, err = runner.Search(ctx, m, "exec", nil)
	var re *runner.ResultError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Contains(t, re.Error(), "cannot list instances")

	assert.Equal(t, []string{"find", "search", "describe", "search"}, m.Ops())
	assert.Equal(t, []string{
		`{"op":"find","type":"user","title":"root","params":"{}","id":1}`,
		`{"op":"search","type":"user","title":"","params":{"shell":"/bin/sh"},"id":2}`,
		`{"op":"describe","type":"user","title":"","params":"{}","id":3}`,
		`{"op":"search","type":"exec","title":"","params":"{}","id":4}`,
	}, m.RawLines())

	_, err = runner.Find(ctx, m, "user", "")
	assert.ErrorIs(t, err, runner.ErrInvalidRequest)
}

// Puppet's receiver has no verbs: nothing is written, the next apply is
// answered on the same child.
func TestVerbsUnsupportedWithMock(t *testing.T) {
	ctx := context.Background()
	m := &mock.Runner{}
	defer m.Close()
	_, err := runner.Find(ctx, m, "user", "root")
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	_, err = runner.Search(ctx, m, "user", nil)
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	_, err = runner.Describe(ctx, m, "user")
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	assert.Empty(t, m.RawLines())
	changed, err := runner.Apply(ctx, m, &runner.Resource{Type: "notify", Title: "x"})
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, 1, m.Starts())
}

func TestBinaryVerbs(t *testing.T) {
	ctx := context.Background()
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	assert.Equal(t, 3, r.ProtocolLevel())
	pid := r.Pid()

	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("10.1.1.1 a.example a\n10.1.1.2 b.example\n"), 0o644))

	f, err := runner.FindResource(ctx, r, &runner.Resource{Type: "host", Title: "a.example", Values: map[string]any{"target": hosts}})
	require.NoError(t, err)
	assert.Equal(t, "Host[a.example]", f.Ref)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "present"}, {Name: "host_aliases", Value: []any{"a"}},
		{Name: "ip", Value: "10.1.1.1"}, {Name: "provider", Value: "parsed"}, {Name: "target", Value: hosts}}, f.State)
	changed, err := runner.Apply(ctx, r, &runner.Resource{Type: "host", Title: "a.example", Params: f.Params})
	require.NoError(t, err)
	assert.False(t, changed, "the round trip changed %s", f.Params)

	f, err = runner.FindResource(ctx, r, &runner.Resource{Type: "host", Title: "c.example", Values: map[string]any{"target": hosts}})
	require.NoError(t, err)
	assert.False(t, f.Exists())

	list, err := runner.Search(ctx, r, "host", map[string]any{"target": hosts})
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "a.example", list[0].Title)
	assert.Equal(t, "b.example", list[1].Title)

	d, err := runner.Describe(ctx, r, "host")
	require.NoError(t, err)
	var decl struct {
		Name    string `json:"name"`
		Chosen  string `json:"chosen"`
		CanList bool   `json:"can_list"`
	}
	require.NoError(t, json.Unmarshal(d, &decl))
	assert.Equal(t, "host", decl.Name)
	assert.Equal(t, "parsed", decl.Chosen)
	assert.True(t, decl.CanList)

	_, err = runner.Search(ctx, r, "notify", nil)
	var re *runner.ResultError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, "Notify", re.Ref)
	_, err = runner.Find(ctx, r, "nosuchtype", "x")
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Contains(t, re.Result.Exception, "unknown resource type 'nosuchtype'")

	// Errors did not disturb the stream: the same child answers.
	changed, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "still here"})
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, pid, r.Pid())
}

// A receiver that starts as Puppet's does (a Notice line, no banner, the
// six fields only) is asked nothing: the verbs fail with ErrUnsupported
// before a line is written, and applies go on on the same child.
func TestBinaryVerbsPuppetStyle(t *testing.T) {
	ctx := context.Background()
	wrapper := script(t, "printf 'Notice: ready\\n'\nexec "+receiverBin+" --no-banner --compat\n")
	r := realReceiver(t, runner.Options{Command: wrapper})
	defer r.Unregister()
	assert.Equal(t, 0, r.ProtocolLevel())
	pid := r.Pid()
	_, err := runner.Find(ctx, r, "user", "root")
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	_, err = runner.Search(ctx, r, "user", nil)
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	_, err = runner.Describe(ctx, r, "user")
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	res, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "notify", Title: "p"})
	require.NoError(t, err)
	assert.Equal(t, runner.Result{Resource: "Notify[p]", Changed: true}, res)
	assert.Equal(t, pid, r.Pid())
}
