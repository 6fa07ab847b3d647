package mock_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/runner"
)

func TestRunnerScriptThenRespond(t *testing.T) {
	m := &mock.Runner{
		Script:  []mock.Reply{mock.Changed(), mock.Failed("boom")},
		Respond: func(req runner.Resource) mock.Reply { return mock.Errored("late " + req.Title) },
	}
	defer m.Close()
	ctx := context.Background()
	res := func(title string) *runner.Resource { return &runner.Resource{Type: "notify", Title: title} }

	changed, err := runner.Apply(ctx, m, res("a"))
	require.NoError(t, err)
	assert.True(t, changed)
	_, err = runner.Apply(ctx, m, res("b"))
	assert.EqualError(t, err, "Notify[b] failed: boom")
	_, err = runner.Apply(ctx, m, res("c"))
	assert.EqualError(t, err, "Notify[c]: receiver could not apply it: late c")
	assert.Equal(t, []string{"a", "b", "c"}, titles(m.Requests()))
	assert.Equal(t, 1, m.Starts())
}

func TestRunnerRawStreams(t *testing.T) {
	m := &mock.Runner{Banner: `{"ready":true}`}
	defer m.Close()
	m.LockApply()
	defer m.UnlockApply()
	// A request line that is not JSON is recorded as written and answered.
	_, err := io.WriteString(m.InputStream(), "notify legacy {message: hi}\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"notify legacy {message: hi}"}, m.RawLines())

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	banner, err := m.Lines().ReadLine(ctx)
	require.NoError(t, err)
	assert.Equal(t, `{"ready":true}`, string(banner))
	answer, err := m.Lines().ReadLine(ctx)
	require.NoError(t, err)
	assert.Equal(t, `{"resource":"Notify[legacy]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}`, string(answer))
}

func TestRunnerReplacesBrokenChild(t *testing.T) {
	m := &mock.Runner{Script: []mock.Reply{{EOF: true}}}
	defer m.Close()
	_, err := runner.Apply(context.Background(), m, &runner.Resource{Type: "notify", Title: "a"})
	require.ErrorIs(t, err, runner.ErrReceiverDied)
	_, err = runner.Apply(context.Background(), m, &runner.Resource{Type: "notify", Title: "b"})
	require.NoError(t, err)
	assert.Equal(t, 2, m.Starts())
}

func titles(rs []runner.Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Title)
	}
	return out
}

// Check's requests and answers, params as values, and a held answer.
func TestRunnerScriptsCheckValuesAndHeldAnswers(t *testing.T) {
	release := make(chan struct{})
	m := &mock.Runner{Script: []mock.Reply{
		mock.InSync(),
		mock.WouldChange(runner.Event{Property: "ensure", Previous: "absent", Desired: "file"}),
		{Wait: release, Answer: &runner.Result{Changed: true}},
	}}
	defer m.Close()
	ctx := context.Background()
	res := &runner.Resource{Type: "file", Title: "/x", Values: map[string]any{"ensure": "file", "mode": "0600"}}

	inSync, events, err := runner.Check(ctx, m, res)
	require.NoError(t, err)
	assert.True(t, inSync)
	assert.Empty(t, events)
	inSync, events, err = runner.Check(ctx, m, &runner.Resource{Type: "file", Title: "/x", Params: "{ensure: file}"})
	require.NoError(t, err)
	assert.False(t, inSync)
	require.Len(t, events, 1)
	assert.Equal(t, "noop", events[0].Status)

	reqs := m.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, map[string]any{"ensure": "file", "mode": "0600", "noop": true}, reqs[0].Values)
	assert.Equal(t, map[string]any{"ensure": "file", "noop": true}, reqs[1].Values, "string params are sent with noop added")

	// The held answer: Apply is in flight until release is closed, and
	// another apply with a short context gives up meanwhile.
	done := make(chan error, 1)
	go func() {
		_, err := runner.Apply(ctx, m, res)
		done <- err
	}()
	require.Eventually(t, func() bool { return len(m.Requests()) == 3 }, 5*time.Second, time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = runner.Apply(short, m, res)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, map[string]any{"ensure": "file", "mode": "0600"}, m.Requests()[2].Values)
}
