package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/runner"
)

// Declare through the real receiver: a purge leaves alone what the run
// manages and a concat_file gathers its declared fragments, one request
// at a time; a refused declaration leaves the run as it was; a receiver
// that dies is replaced by one that gets the declaration again before
// any request.
func TestBinaryDeclare(t *testing.T) {
	r := realReceiver(t, runner.Options{Command: []string{receiverBin, "--state-dir", t.TempDir()}})
	defer r.Unregister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	tree := filepath.Join(dir, "conf.d")
	require.NoError(t, os.Mkdir(tree, 0o755))
	target := filepath.Join(dir, "motd")
	write := func(names ...string) {
		for _, n := range names {
			require.NoError(t, os.WriteFile(filepath.Join(tree, n), []byte(n), 0o644))
		}
	}
	write("managed.conf", "stray.conf")
	purge := &runner.Resource{Type: "file", Title: tree, Values: map[string]any{"ensure": "directory", "recurse": true, "purge": true}}
	concat := &runner.Resource{Type: "concat_file", Title: target, Values: map[string]any{"mode": "0644"}}
	run := []runner.Resource{
		*purge,
		{Type: "file", Title: filepath.Join(tree, "managed.conf")},
		{Type: "concat_fragment", Title: "tail", Values: map[string]any{"target": target, "content": "tail\n", "order": 20}},
		{Type: "concat_fragment", Title: "head", Params: "{target: " + target + ", content: \"head\\n\", order: '10'}"},
		*concat,
	}
	require.NoError(t, runner.Declare(ctx, r, run))
	changed, err := runner.Apply(ctx, r, purge)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.FileExists(t, filepath.Join(tree, "managed.conf"))
	assert.NoFileExists(t, filepath.Join(tree, "stray.conf"))
	changed, err = runner.Apply(ctx, r, concat)
	require.NoError(t, err)
	assert.True(t, changed)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "head\ntail\n", string(got))

	// Refused: the run stays as it was.
	err = runner.Declare(ctx, r, []runner.Resource{{Type: "file", Title: "/x"}, {Type: "file", Title: "/x"}})
	var re *runner.ResultError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "Declaration[2 resources]: receiver could not apply it: ")
	assert.Contains(t, err.Error(), "File[/x]: declared twice; the run is unchanged")
	assert.Equal(t, "File[/x]", re.Result.Resource)
	write("stray.conf")
	_, err = runner.Apply(ctx, r, purge)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(tree, "managed.conf"))
	assert.NoFileExists(t, filepath.Join(tree, "stray.conf"))

	// The receiver dies: its replacement gets the declaration before the
	// purge (which would otherwise take managed.conf).
	first := r.Pid()
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)
	write("stray.conf")
	changed, err = runner.Apply(ctx, r, purge)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotEqual(t, first, r.Pid())
	assert.FileExists(t, filepath.Join(tree, "managed.conf"), "the new receiver has the declaration")
	assert.NoFileExists(t, filepath.Join(tree, "stray.conf"))
	changed, err = runner.Apply(ctx, r, concat)
	require.NoError(t, err)
	assert.False(t, changed, "the fragments are declared to the new receiver too")

	// Cleared, on this receiver and for the next one.
	require.NoError(t, runner.Declare(ctx, r, nil))
	second := r.Pid()
	require.NoError(t, syscall.Kill(second, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)
	changed, err = runner.Apply(ctx, r, purge)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NoFileExists(t, filepath.Join(tree, "managed.conf"))
}

// A replacement that refuses the declaration in force (an older receiver,
// here one of protocol level 2) is not used: applies fail, naming why,
// and nothing is applied without the run.
func TestBinaryRedeclareRefused(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "second")
	// The first start runs the receiver; later ones pretend to be of
	// protocol level 2.
	wrapper := script(t, `if [ -e `+marker+` ]; then echo '{"ready":true,"protocol":2}'; exec `+receiverBin+` --no-banner; fi
touch `+marker+`
exec `+receiverBin+"\n")
	r := realReceiver(t, runner.Options{Command: wrapper})
	defer r.Unregister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, runner.Declare(ctx, r, []runner.Resource{{Type: "notify", Title: "declared"}}))
	first := r.Pid()
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)
	_, err := runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "n"})
	require.ErrorIs(t, err, runner.ErrUnavailable)
	assert.Contains(t, err.Error(), "sending the run's declaration again to the new receiver")
	assert.ErrorIs(t, err, runner.ErrUnsupported)
}

// Protocol level 3 is needed: with a lower one, nothing is written.
func TestDeclareNeedsLevel3(t *testing.T) {
	ctx := context.Background()
	for _, level := range []int{0, 2} {
		m := &mock.Runner{Protocol: level}
		err := runner.Declare(ctx, m, []runner.Resource{{Type: "file", Title: "/a"}})
		require.ErrorIs(t, err, runner.ErrUnsupported)
		assert.Contains(t, err.Error(), "a declaration needs protocol level 3")
		assert.Empty(t, m.RawLines())
	}
}

func TestDeclareMock(t *testing.T) {
	ctx := context.Background()
	m := &mock.Runner{Protocol: 3}
	run := []runner.Resource{
		{Type: "file", Title: "/etc/a"},
		{Type: "concat_fragment", Title: "f", Values: map[string]any{"target": "/m", "order": 10}},
		{Type: "concat_fragment", Title: "g", Params: "{target: /m}"},
	}
	require.NoError(t, runner.Declare(ctx, m, run))
	require.NoError(t, runner.Declare(ctx, m, nil))
	_, err := runner.Apply(ctx, m, &runner.Resource{Type: "notify", Title: "x"})
	require.NoError(t, err)
	assert.Equal(t, []string{"declare", "declare", "apply"}, m.Ops())
	assert.Equal(t, [][]runner.Resource{{
		{Type: "file", Title: "/etc/a", Params: "{}"},
		{Type: "concat_fragment", Title: "f", Values: map[string]any{"target": "/m", "order": int64(10)}},
		{Type: "concat_fragment", Title: "g", Params: "{target: /m}"},
	}, {}}, m.Declarations())
	lines := m.RawLines()
	assert.Equal(t, `{"op":"declare","resources":[{"type":"file","title":"/etc/a","params":"{}"},{"type":"concat_fragment","title":"f","params":{"order":10,"target":"/m"}},{"type":"concat_fragment","title":"g","params":"{target: /m}"}],"id":1}`, lines[0])
	assert.Equal(t, `{"op":"declare","resources":[],"id":2}`, lines[1])

	// Refused by the receiver: a *ResultError; the answer may name the
	// resource to blame.
	m = &mock.Runner{Protocol: 3, RespondVerb: func(op string, _ runner.Resource) mock.Reply {
		require.Equal(t, "declare", op)
		return mock.Reply{Answer: &runner.Result{Resource: "File[/a]", Error: true, Failed: true, Exception: "File[/a]: declared twice"}}
	}}
	err = runner.Declare(ctx, m, []runner.Resource{{Type: "file", Title: "/a"}, {Type: "file", Title: "/a"}})
	var re *runner.ResultError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "File[/a]", re.Result.Resource)

	// Refused before sending.
	for _, bad := range []runner.Resource{
		{Type: "exec", Title: "x", Refresh: true},
		{Type: "file"},
		{Title: "x"},
		{Type: "file", Title: "\xff"},
		{Type: "file", Title: "x", Params: "{a: 1}", Values: map[string]any{"a": 1}},
	} {
		m := &mock.Runner{Protocol: 3}
		err := runner.Declare(ctx, m, []runner.Resource{{Type: "file", Title: "/ok"}, bad})
		assert.ErrorIs(t, err, runner.ErrInvalidRequest, "%+v", bad)
		assert.Empty(t, m.RawLines())
	}
}
