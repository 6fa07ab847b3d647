package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/runner"
)

// Resource.Refresh reaches the real receiver as "refresh": true: an exec
// with refreshonly runs only on the request that carries it, and a request
// without it leaves it alone.
func TestRefreshRunsRefreshonlyExec(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	log := filepath.Join(dir, "runs")
	exec := func(refresh bool) *runner.Resource {
		return &runner.Resource{Type: "exec", Title: "count",
			Values:  map[string]any{"command": []any{"/bin/sh", "-c", "echo run >> " + log}, "refreshonly": true},
			Refresh: refresh}
	}
	runs := func() string { b, _ := os.ReadFile(log); return string(b) }

	changed, err := runner.Apply(ctx, r, exec(false))
	require.NoError(t, err)
	assert.False(t, changed, "refreshonly without a refresh does nothing")
	assert.Empty(t, runs())

	res, err := runner.ApplyResult(ctx, r, exec(true))
	require.NoError(t, err)
	assert.True(t, res.Changed, "a refresh runs it")
	assert.Equal(t, "run\n", runs())
	require.NotEmpty(t, res.Events)

	changed, err = runner.Apply(ctx, r, exec(false))
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, "run\n", runs(), "the refresh is per request, not remembered")
}

// The request line carries "refresh": true only when Refresh is set, with
// params in either form, and the mock reads it back.
func TestRefreshOnTheWire(t *testing.T) {
	m := &mock.Runner{}
	defer m.Close()
	ctx := context.Background()
	for _, res := range []*runner.Resource{
		{Type: "service", Title: "a", Params: "{ensure: running}", Refresh: true},
		{Type: "service", Title: "b", Values: map[string]any{"ensure": "running"}, Refresh: true},
		{Type: "service", Title: "c", Params: "{ensure: running}"},
	} {
		_, err := runner.Apply(ctx, m, res)
		require.NoError(t, err)
	}
	raw := m.RawLines()
	require.Len(t, raw, 3)
	assert.Equal(t, `{"type":"service","title":"a","params":"{ensure: running}","refresh":true}`, raw[0])
	assert.Equal(t, `{"type":"service","title":"b","params":{"ensure":"running"},"refresh":true}`, raw[1])
	assert.Equal(t, `{"type":"service","title":"c","params":"{ensure: running}"}`, raw[2])
	reqs := m.Requests()
	assert.True(t, reqs[0].Refresh)
	assert.True(t, reqs[1].Refresh)
	assert.False(t, reqs[2].Refresh)
}
