package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/cli"
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

	app, fb, err := withFallback(eng, delegate.Options{Fallback: "sh " + script, Types: cli.SplitList(" Anchor, ")})
	require.NoError(t, err)
	defer closeFallback(ctx, fb, slog.New(slog.DiscardHandler))
	res := app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "Anchor[a]", res.Resource)
	assert.Equal(t, "from the fallback", res.Exception, "named: delegated")
	assert.Equal(t, "Notify[n]", app.Apply(ctx, &protocol.Request{Type: "notify", Title: "n"}).Resource, "not named: native")

	app, fb, err = withFallback(eng, delegate.Options{Fallback: "sh " + script})
	require.NoError(t, err)
	defer closeFallback(ctx, fb, slog.New(slog.DiscardHandler))
	res = app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "Anchor[a]", res.Resource)
	assert.Empty(t, res.Exception, "without --delegate: native")

	_, _, err = withFallback(eng, delegate.Options{Fallback: delegate.ModeNone, Types: []string{"file_line"}})
	assert.ErrorContains(t, err, "--delegate file_line: there is no fallback to send them to (--fallback none)")
}
