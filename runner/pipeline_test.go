package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/runner"
)

// pipelineOn starts the built receiver for a pipeline test: the Receiver
// (unregistered when the test ends), a Pipeline over it, and a context of
// 20 s.
func pipelineOn(t *testing.T) (*runner.Receiver, *runner.Pipeline, context.Context) {
	t.Helper()
	r := realReceiver(t, runner.Options{})
	t.Cleanup(func() { _ = r.Unregister() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return r, runner.NewPipeline(r), ctx
}

// TestPipelineInOrder: requests sent before their answers are read are
// answered in order, each Result to its Resource, error answers
// included; the window stops Send until an answer is read; the lock is
// released once nothing is owed, so Apply works between pipelines.
func TestPipelineInOrder(t *testing.T) {
	r, p, ctx := pipelineOn(t)
	dir := t.TempDir()

	var sent []*runner.Resource
	for i := 0; ; i++ {
		res := &runner.Resource{Type: "file", Title: filepath.Join(dir, fmt.Sprint(i)), Params: fmt.Sprintf("{content: '%d'}", i)}
		if i%5 == 4 {
			res = &runner.Resource{Type: "file", Title: res.Title, Params: "{bogus: 1}"}
		}
		ok, err := p.Send(ctx, res)
		require.NoError(t, err)
		if !ok {
			break
		}
		sent = append(sent, res)
	}
	require.Greater(t, len(sent), 20, "a 4 KiB window holds more than 20 short requests")
	assert.Equal(t, len(sent), p.Owed())
	for i, want := range sent {
		got, res, err := p.Receive(ctx)
		require.Same(t, want, got)
		assert.Equal(t, "File["+want.Title+"]", res.Resource)
		if i%5 == 4 {
			var re *runner.ResultError
			require.ErrorAs(t, err, &re, "request %d", i)
			assert.Contains(t, re.Result.Exception, "bogus")
			continue
		}
		require.NoError(t, err, "request %d", i)
		assert.True(t, res.Changed)
		b, err := os.ReadFile(want.Title)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(i), string(b))
	}
	assert.Zero(t, p.Owed())
	_, _, err := p.Receive(ctx)
	assert.Error(t, err, "nothing owed")

	// The lock is free again.
	changed, err := apply(t, r, "after")
	require.NoError(t, err)
	assert.True(t, changed)
}

// TestPipelineChildDies: a child killed with answers owed: each owed
// answer is an error wrapping ErrReceiverDied, and the next request goes
// to a new child.
func TestPipelineChildDies(t *testing.T) {
	r, p, ctx := pipelineOn(t)
	first := r.Pid()
	ok, err := p.Send(ctx, &runner.Resource{Type: "exec", Title: "sleep", Params: "{command: '/bin/sleep 30'}"})
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = p.Send(ctx, &runner.Resource{Type: "notify", Title: "next"})
	require.NoError(t, err)
	require.True(t, ok)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	for i := 0; i < 2; i++ {
		_, _, err := p.Receive(ctx)
		require.Error(t, err)
		assert.True(t, errors.Is(err, runner.ErrReceiverDied), "%v", err)
	}
	changed, err := apply(t, r, "again")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotEqual(t, first, r.Pid())
}

// TestPipelineAbort: answers given up break the child (the stream is out
// of step) and free the lock; the next Apply gets a new child.
func TestPipelineAbort(t *testing.T) {
	r, p, ctx := pipelineOn(t)
	first := r.Pid()
	ok, err := p.Send(ctx, &runner.Resource{Type: "notify", Title: "x"})
	require.NoError(t, err)
	require.True(t, ok)
	p.Abort(context.Canceled)
	assert.Zero(t, p.Owed())
	changed, err := apply(t, r, "again")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotEqual(t, first, r.Pid())
}

// TestPipelineNoSendAfterBreak: once an owed answer showed the child
// dead, Send refuses while answers are still owed, even where the child's
// input still takes bytes (a grandchild holds it open, as a Puppet
// process' helpers may), and after the last of them goes to a new child.
func TestPipelineNoSendAfterBreak(t *testing.T) {
	// A receiver that takes requests and never answers, with a
	// grandchild holding its stdin (not its stdout) open.
	r := runner.New(runner.Options{Command: script(t, `echo '{"ready":true,"protocol":1}'
sleep 300 >/dev/null 2>&1 &
while IFS= read -r line; do :; done
`)})
	require.NoError(t, r.Register())
	t.Cleanup(func() { _ = r.Unregister() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := runner.NewPipeline(r)
	first := r.Pid()
	for _, title := range []string{"a", "b"} {
		ok, err := p.Send(ctx, &runner.Resource{Type: "notify", Title: title})
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	_, _, err := p.Receive(ctx)
	require.ErrorIs(t, err, runner.ErrReceiverDied)

	next := &runner.Resource{Type: "notify", Title: "next"}
	ok, err := p.Send(ctx, next)
	assert.False(t, ok, "sent to a dead child")
	require.ErrorIs(t, err, runner.ErrReceiverDied)
	assert.Equal(t, 1, p.Owed())
	_, _, err = p.Receive(ctx)
	require.ErrorIs(t, err, runner.ErrReceiverDied)

	// The next goes to a replacement (which takes it and, being the same
	// script, does not answer: the Pipeline gives it up).
	ok, err = p.Send(ctx, next)
	require.NoError(t, err)
	require.True(t, ok)
	assert.NotEqual(t, first, r.Pid())
	p.Abort(context.Canceled)
}
