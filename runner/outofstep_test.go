package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/runner"
)

// extraAnswer is a second answer line for Notify[a], printed after its
// own: a child out of step with the requests.
const extraAnswer = `{"resource":"Notify[a]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}` + "\n"

// TestExtraAnswerIsTheChildsFailure: a child that prints one answer too
// many does not shift the later answers by one. The next answer read is
// checked against its request: with Puppet's receiver (no ids) by the
// resource it names, with ours also by the id the runner gave the request
// (which catches a duplicate of the same resource's answer too). The
// mismatch is the child's failure (ErrBadAnswer), the child is replaced,
// and the request after it is answered by the new child.
func TestExtraAnswerIsTheChildsFailure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protocol int
		second   string // the title of the second request
	}{
		{"no ids, another resource", 0, "b"},
		{"ids, another resource", 2, "b"},
		{"ids, the same resource", 2, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mock.Runner{Protocol: tc.protocol, Script: []mock.Reply{
				{Answer: &runner.Result{Changed: true}, Raw: extraAnswer},
				{Answer: &runner.Result{}}, // the true answer to the second request
			}}
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			changed, err := runner.Apply(ctx, m, &runner.Resource{Type: "notify", Title: "a"})
			require.NoError(t, err)
			assert.True(t, changed)

			res, err := runner.ApplyResult(ctx, m, &runner.Resource{Type: "notify", Title: tc.second})
			require.ErrorIs(t, err, runner.ErrBadAnswer, "the extra answer was taken for %s's: %+v", tc.second, res)
			assert.Contains(t, err.Error(), "out of step")

			res, err = runner.ApplyResult(ctx, m, &runner.Resource{Type: "notify", Title: "c"})
			require.NoError(t, err)
			assert.Equal(t, "Notify[c]", res.Resource)
			assert.Equal(t, 2, m.Starts(), "the child out of step was replaced")
		})
	}
}

// TestPipelineExtraAnswerIsTheChildsFailure: the same through a
// Pipeline, where the requests are on their way before any answer is
// read: the answer out of step and every later one owed are errors.
func TestPipelineExtraAnswerIsTheChildsFailure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protocol int
		second   string
	}{
		{"no ids, another resource", 0, "b"},
		{"ids, the same resource", 2, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mock.Runner{Protocol: tc.protocol, Script: []mock.Reply{
				{Answer: &runner.Result{Changed: true}, Raw: extraAnswer},
				{Answer: &runner.Result{}},
				{Answer: &runner.Result{}},
			}}
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			p := runner.NewPipeline(m)
			for _, title := range []string{"a", tc.second, "z"} {
				sent, err := p.Send(ctx, &runner.Resource{Type: "notify", Title: title})
				require.NoError(t, err)
				require.True(t, sent)
			}
			res, result, err := p.Receive(ctx)
			require.NoError(t, err)
			assert.Equal(t, "a", res.Title)
			assert.True(t, result.Changed)

			res, result, err = p.Receive(ctx)
			assert.Equal(t, tc.second, res.Title)
			require.ErrorIs(t, err, runner.ErrBadAnswer, "the extra answer was taken for %s's: %+v", tc.second, result)

			res, _, err = p.Receive(ctx)
			assert.Equal(t, "z", res.Title)
			require.Error(t, err, "an answer owed by a child out of step is not trusted")
			assert.Zero(t, p.Owed())
		})
	}
}

// TestCompatReceiverEchoesNoID: a receiver run with --compat answers
// Puppet's six fields only, the id left out: the runner learns from the
// child's first answer that it echoes no id and checks its answers by
// resource alone, instead of taking every answer for one out of step.
func TestCompatReceiverEchoesNoID(t *testing.T) {
	r := runner.New(runner.Options{Command: []string{receiverBin, "--compat", "--state-dir", t.TempDir()}})
	require.NoError(t, r.Register())
	defer r.Unregister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, title := range []string{"a", "b", "c"} {
		res, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "notify", Title: title})
		require.NoError(t, err)
		assert.Equal(t, "Notify["+title+"]", res.Resource)
	}
	pid := r.Pid()
	_, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "notify", Title: "d"})
	require.NoError(t, err)
	assert.Equal(t, pid, r.Pid(), "the same child answered every request")
}
