package concat_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/concat"
	"github.com/pippet/pippet/applier/typetest/puppetcase"
	"github.com/pippet/pippet/protocol"
)

// TestRun: a concat_file gathers its fragments from the run in its
// context, by target (path or title) or by tag, and syncs the file with
// the File's events.
func TestRun(t *testing.T) {
	p := filepath.Join(t.TempDir(), "motd")
	run := puppetcase.Run{
		{Type: "concat_file", Title: "motd", Params: map[string]any{"path": p, "tag": "_motd", "mode": "0640"}},
		{Type: "concat_fragment", Title: "body", Params: map[string]any{"target": p, "content": "body\n", "order": int64(10)}},
		{Type: "concat_fragment", Title: "head", Params: map[string]any{"target": "motd", "content": "head\n", "order": "01"}},
		{Type: "concat_fragment", Title: "tagged", Params: map[string]any{"target": "elsewhere", "tag": "_motd", "content": "tail\n", "order": 99}},
		{Type: "concat_fragment", Title: "other", Params: map[string]any{"target": "/other", "content": "no\n"}},
	}
	ctx := applier.WithRun(context.Background(), run)
	e := testEngine()
	req := &protocol.Request{Type: "concat_file", Title: "motd", Params: map[string]any{"path": p, "mode": "0640", "tag": "_motd"}}
	res := e.Apply(ctx, req)
	assert.True(t, res.Changed, "%+v", res)
	require.Len(t, res.Events, 1)
	assert.Equal(t, "ensure", res.Events[0].Property)
	assert.Contains(t, res.Events[0].Message, "defined content as '{")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "head\nbody\ntail\n", string(b))
	fi, _ := os.Stat(p)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	res = e.Apply(ctx, req)
	assert.False(t, res.Changed, "converged: %+v", res)
	assert.Empty(t, res.Events)

	require.NoError(t, os.Chmod(p, 0o644))
	res = e.Apply(ctx, &protocol.Request{Type: "concat_file", Title: "motd", Params: map[string]any{"path": p, "mode": "0640", "noop": true}})
	assert.False(t, res.Changed)
	require.Len(t, res.Events, 1, "%+v", res)
	assert.Equal(t, protocol.StatusNoop, res.Events[0].Status)
	assert.Equal(t, "mode", res.Events[0].Property, "in noop too, the File's property, as Puppet reports its generated File")
	assert.Equal(t, "current_value '0644', should be '0640' (noop)", res.Events[0].Message)

	res = e.Apply(ctx, req)
	require.Len(t, res.Events, 1, "%+v", res)
	assert.Equal(t, "mode", res.Events[0].Property, "the File's property name")
	assert.Equal(t, "mode changed '0644' to '0640'", res.Events[0].Message)
}

// TestAlone: without a run, a concat_file has no fragments (an empty
// file) and a concat_fragment does nothing.
func TestAlone(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	e := testEngine()
	res := e.Apply(context.Background(), &protocol.Request{Type: "concat_file", Title: p})
	assert.True(t, res.Changed, "%+v", res)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Empty(t, b)
	res = e.Apply(context.Background(), &protocol.Request{Type: "concat_fragment", Title: "x", Params: map[string]any{"target": p, "content": "x"}})
	assert.Equal(t, protocol.Result{Resource: "Concat_fragment[x]"}, res)
}

// TestFragmentWithoutTarget: in a run without its concat_file, a
// fragment warns as the module does, and succeeds.
func TestFragmentWithoutTarget(t *testing.T) {
	var logs bytes.Buffer
	reg := applier.NewRegistry()
	reg.Add(concat.FragmentType)
	e := engine.New(reg, &applier.Env{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	run := puppetcase.Run{{Type: "concat_fragment", Title: "lost", Params: map[string]any{"target": "/nowhere", "content": "x"}}}
	res := e.Apply(applier.WithRun(context.Background(), run), &protocol.Request{Type: "concat_fragment", Title: "lost", Params: map[string]any{"target": "/nowhere", "content": "x"}})
	assert.Equal(t, protocol.Result{Resource: "Concat_fragment[lost]"}, res)
	assert.Contains(t, logs.String(), "Target Concat_file with path or title '/nowhere' not found in the catalog")
}

// TestBadFragment: a fragment the fragment type refuses fails the
// concat_file that gathers it, naming the fragment; nothing is written.
func TestBadFragment(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	run := puppetcase.Run{{Type: "concat_fragment", Title: "bad", Params: map[string]any{"target": p, "content": "x", "source": "/etc/hostname"}}}
	res := testEngine().Apply(applier.WithRun(context.Background(), run), &protocol.Request{Type: "concat_file", Title: p})
	assert.True(t, res.Failed, "%+v", res)
	assert.Contains(t, res.Exception, "fragment Concat_fragment[bad]: Validation of Concat_fragment[bad] failed: Can't use 'source' and 'content' at the same time")
	_, err := os.Stat(p)
	assert.True(t, os.IsNotExist(err))
}

// TestLogsOnce: at info level and above the target's changes are logged
// once, as the concat_file's: neither the noop probe's events nor the
// File's own lines (those are at debug level).
func TestLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	reg := applier.NewRegistry()
	reg.Add(concat.FileType)
	e := engine.New(reg, &applier.Env{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o600))
	run := puppetcase.Run{{Type: "concat_fragment", Title: "a", Params: map[string]any{"target": p, "content": "new\n"}}}
	res := e.Apply(applier.WithRun(context.Background(), run), &protocol.Request{Type: "concat_file", Title: p, Params: map[string]any{"mode": "0644"}})
	require.True(t, res.Changed, "%+v", res)
	out := logs.String()
	assert.NotContains(t, out, "(noop)")
	assert.NotContains(t, out, "File["+p+"]")
	assert.Equal(t, 1, strings.Count(out, "Concat_file["+p+"]/content: content changed"), out)
	assert.Equal(t, 1, strings.Count(out, "Concat_file["+p+"]/mode: mode changed"), out)
}
