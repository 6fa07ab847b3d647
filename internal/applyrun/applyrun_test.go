package applyrun

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
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
)

// TestDelegateFlag: --delegate sends a native type to the fallback, and
// only the types it names; it needs a fallback that has them.
func TestDelegateFlag(t *testing.T) {
	script := filepath.Join(t.TempDir(), "receiver.sh")
	require.NoError(t, os.WriteFile(script, []byte(`echo '{"ready":true}'
while IFS= read -r l; do
  t=${l#*\"title\":\"}; t=${t%%\"*}
  printf '{"resource":"Anchor[%s]","failed":false,"changed":false,"noop":false,"error":false,"exception":"from the fallback"}\n' "$t"
done
`), 0o755))
	eng := engine.New(applier.Default, nil).NewSession()
	ctx := context.Background()

	app, fb, err := WithFallback(eng, delegate.Options{Fallback: "sh " + script, Types: cli.SplitList(" Anchor, ")})
	require.NoError(t, err)
	defer CloseFallback(ctx, fb, slog.New(slog.DiscardHandler))
	res := app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "Anchor[a]", res.Resource)
	assert.Equal(t, "from the fallback", res.Exception, "named: delegated")
	assert.Equal(t, "Notify[n]", app.Apply(ctx, &protocol.Request{Type: "notify", Title: "n"}).Resource, "not named: native")

	app, fb, err = WithFallback(eng, delegate.Options{Fallback: "sh " + script})
	require.NoError(t, err)
	defer CloseFallback(ctx, fb, slog.New(slog.DiscardHandler))
	res = app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "Anchor[a]", res.Resource)
	assert.Empty(t, res.Exception, "without --delegate: native")

	_, _, err = WithFallback(eng, delegate.Options{Fallback: delegate.ModeNone, Types: []string{"file_line"}})
	assert.ErrorContains(t, err, "--delegate file_line: there is no fallback to send them to (--fallback none)")
}

// TestApply: a catalog applied in order, its version announced, its
// lines kept for the report; a second run changes nothing.
func TestApply(t *testing.T) {
	dir := t.TempDir()
	doc := `{"name":"node1","version":"1234","environment":"production","resources":[
	 {"type":"File","title":"` + dir + `/a","parameters":{"ensure":"file","content":"a\n"}},
	 {"type":"File","title":"` + dir + `/b","parameters":{"ensure":"file","content":"b\n","require":"File[` + dir + `/a]"}}],
	 "edges":[]}`
	cat, err := catalog.Parse(strings.NewReader(doc))
	require.NoError(t, err)
	var out bytes.Buffer
	o := Options{StateDir: t.TempDir(), Fallback: delegate.ModeNone, Level: slog.LevelInfo}
	o.Log = catalog.NewLog(puppetlog.New(&out, slog.LevelInfo))
	rep, err := Apply(context.Background(), cat, o)
	require.NoError(t, err)
	assert.Equal(t, "changed", rep.Status)
	assert.Equal(t, 2, rep.ExitCode())
	assert.Contains(t, out.String(), "Info: Applying configuration version '1234'\n")
	assert.Contains(t, out.String(), "Notice: /File["+dir+"/b]/ensure: defined content as")
	assert.Regexp(t, `Notice: Applied catalog in \d+\.\d\d seconds\n$`, out.String())
	b, err := os.ReadFile(filepath.Join(dir, "b"))
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(b))

	o.Log = catalog.NewLog(nil)
	rep, err = Apply(context.Background(), cat, o)
	require.NoError(t, err)
	assert.Equal(t, "unchanged", rep.Status)
	assert.Equal(t, 0, rep.ExitCode())
}

// TestApplyRefusedCatalog: a catalog the graph refuses (a dependency
// cycle) is an error, and nothing is applied.
func TestApplyRefusedCatalog(t *testing.T) {
	dir := t.TempDir()
	doc := `{"name":"node1","version":"1","environment":"production","resources":[
	 {"type":"File","title":"` + dir + `/a","parameters":{"ensure":"file","require":"File[` + dir + `/b]"}},
	 {"type":"File","title":"` + dir + `/b","parameters":{"ensure":"file","require":"File[` + dir + `/a]"}}],
	 "edges":[]}`
	cat, err := catalog.Parse(strings.NewReader(doc))
	require.NoError(t, err)
	_, err = Apply(context.Background(), cat, Options{StateDir: t.TempDir(), Fallback: delegate.ModeNone})
	require.Error(t, err)
	assert.NoFileExists(t, filepath.Join(dir, "a"))
	assert.NoFileExists(t, filepath.Join(dir, "b"))
}
