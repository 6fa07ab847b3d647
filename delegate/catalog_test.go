package delegate

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// A delegated resource sees its whole run: richardc-datacat's collector
// finds its File and the fragments in the run the context carries, and
// the content it sets on the File comes back as a run change. The run
// goes to the bridge once, and again to the process that replaced a
// killed one; a new run replaces it (here one without the File: the
// collector fails as Puppet's with a catalog of one).
func TestApplySeesItsRun(t *testing.T) {
	if _, ok := FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent)")
	}
	if _, err := os.Stat("/usr/share/puppet/modules/datacat"); err != nil {
		t.Skip("puppet-module-richardc-datacat not installed")
	}
	f, err := New(Options{Fallback: ModePuppet, ModulePath: "/usr/share/puppet/modules"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close(context.Background()) })
	target := filepath.Join(t.TempDir(), "merged")
	collector := map[string]any{"template": "inline", "template_body": "<%= @data.keys.sort.join(',') %>\n",
		"target_resource": "File[" + target + "]", "target_field": "content", "collects": []any{}}
	fragment := func(name, key string) protocol.RunResource {
		return protocol.RunResource{Type: "datacat_fragment", Title: name, Params: map[string]any{"target": target, "data": map[string]any{key: 1}}}
	}
	run, err := applier.NewRunSet(nil, []protocol.RunResource{
		fragment("one", "a"),
		{Type: "file", Title: target, Params: map[string]any{"content": "To be replaced\n"}},
		{Type: "datacat_collector", Title: target, Params: collector},
		fragment("two", "b"),
	})
	require.NoError(t, err)
	ctx := applier.WithRun(context.Background(), run)
	apply := func(ctx context.Context) protocol.Result {
		return f.Apply(ctx, &protocol.Request{Type: "datacat_collector", Title: target, Params: collector})
	}
	want := []protocol.RunResource{{Type: "file", Title: target, Params: map[string]any{"content": "a,b\n"}}}

	res := apply(ctx)
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, want, res.RunChanges)
	_, err = os.Stat(target)
	assert.True(t, os.IsNotExist(err), "the File is the caller's to apply")

	pid := f.Pid()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !f.recv.Running() }, 10*time.Second, 20*time.Millisecond, "the bridge's death is seen")
	res = apply(ctx)
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, want, res.RunChanges, "the run sent again to the new process")
	assert.NotEqual(t, pid, f.Pid())

	other, err := applier.NewRunSet(nil, []protocol.RunResource{fragment("one", "a")})
	require.NoError(t, err)
	res = apply(applier.WithRun(context.Background(), other))
	assert.True(t, res.Failed)
	assert.Contains(t, res.Exception, "Failed to map File["+target+"] into a resource")
	assert.Empty(t, res.RunChanges)
}
