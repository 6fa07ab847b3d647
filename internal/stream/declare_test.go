package stream

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/protocol"
)

// A declaration sets the run of every request that follows, in the
// context the Applier gets, until the next one; a refused one leaves it.
func TestLoopDeclaration(t *testing.T) {
	var mu sync.Mutex
	var seen []applier.Run
	app := &mock.Applier{Func: func(ctx context.Context, req *protocol.Request) protocol.Result {
		mu.Lock()
		seen = append(seen, applier.RunFrom(ctx))
		mu.Unlock()
		return protocol.Result{Resource: protocol.Ref(req.Type, req.Title)}
	}}
	in := strings.Join([]string{
		`notify a {}`,
		`{"op":"declare","resources":[{"type":"file","title":"/etc/a"},{"type":"file","title":"/etc/b","params":"{ensure: file}"}],"id":1}`,
		`notify b {}`,
		`{"op":"declare","resources":[{"type":"file","title":"/etc/c"},{"type":"file","title":"/etc/c"}],"id":2}`,
		`notify c {}`,
		`{"op":"declare","resources":[{"type":"file","title":"/etc/d"}]}`,
		`notify d {}`,
		`{"op":"declare","resources":[],"id":3}`,
		`notify e {}`,
	}, "\n")
	out, code := runString(t, Config{}, app, in)
	require.Equal(t, ExitOK, code)
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 9)
	assert.Nil(t, as[1].Resource)
	assert.False(t, as[1].Failed)
	assert.Equal(t, "1", string(as[1].ID))
	assert.True(t, as[3].Error)
	assert.Equal(t, "File[/etc/c]", *as[3].Resource)
	assert.Equal(t, "2", string(as[3].ID))
	assert.Contains(t, *as[3].Exception, "request line 4: invalid declaration: File[/etc/c]: declared twice; the run is unchanged")
	assert.False(t, as[7].Failed)
	assert.Equal(t, "3", string(as[7].ID))

	require.Len(t, seen, 5, "declarations never reach the applier")
	assert.Nil(t, seen[0])
	require.NotNil(t, seen[1])
	assert.True(t, seen[1].Managed("file", "/etc/b/"))
	assert.Equal(t, map[string]any{"ensure": "file"}, seen[1].Resources("file")[1].Params)
	assert.Same(t, seen[1], seen[2], "a refused declaration leaves the run as it was")
	assert.True(t, seen[3].Managed("file", "/etc/d"))
	assert.False(t, seen[3].Managed("file", "/etc/a"), "a declaration replaces the one before")
	assert.Nil(t, seen[4], "an empty declaration clears the run")
}

// Config.Declare makes the run: the engine session's knows the namevars
// of its types.
func TestLoopDeclareHook(t *testing.T) {
	var got []protocol.RunResource
	app := &mock.Applier{}
	cfg := Config{Declare: func(rs []protocol.RunResource) (applier.Run, error) {
		got = rs
		return applier.NewRunSet(nil, rs)
	}}
	out, _ := runString(t, cfg, app, `{"op":"declare","resources":[{"type":"Host","title":"h","params":{"ip":"127.0.0.1"}}]}`+"\n")
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 1)
	assert.False(t, as[0].Failed)
	assert.Equal(t, []protocol.RunResource{{Type: "host", Title: "h", Params: map[string]any{"ip": "127.0.0.1"}}}, got)
}
