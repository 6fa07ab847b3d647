package assemble

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
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
	ctx := context.Background()
	session := func(c PuppetConfig) (protocol.Applier, error) {
		p, err := NewPuppet(c)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { p.Close(ctx) })
		_, app, err := New(Config{Puppet: p}).Session()
		return app, err
	}

	app, err := session(PuppetConfig{Fallback: "sh " + script, Delegate: []string{"Anchor"}})
	require.NoError(t, err)
	res := app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "Anchor[a]", res.Resource)
	assert.Equal(t, "from the fallback", res.Exception, "named: delegated")
	assert.Equal(t, "Notify[n]", app.Apply(ctx, &protocol.Request{Type: "notify", Title: "n"}).Resource, "not named: native")

	app, err = session(PuppetConfig{Fallback: "sh " + script})
	require.NoError(t, err)
	res = app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "Anchor[a]", res.Resource)
	assert.Empty(t, res.Exception, "without --delegate: native")

	_, err = session(PuppetConfig{Fallback: delegate.ModeNone, Delegate: []string{"file_line"}})
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
	o := Options{StateDir: t.TempDir()}
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
	_, err = Apply(context.Background(), cat, Options{StateDir: t.TempDir()})
	require.Error(t, err)
	assert.NoFileExists(t, filepath.Join(dir, "a"))
	assert.NoFileExists(t, filepath.Join(dir, "b"))
}

// TestPuppetOwner: making the run's Puppet starts nothing; its first
// delegated request starts it, Close stops it, and the next use starts it
// again; Start starts it ahead, once; the routing rule is native unless
// forced or unknown.
func TestPuppetOwner(t *testing.T) {
	script := filepath.Join(t.TempDir(), "receiver.sh")
	require.NoError(t, os.WriteFile(script, []byte(`echo '{"ready":true}'
while IFS= read -r l; do
  printf '{"resource":"Anchor[a]","failed":false,"changed":false,"noop":false,"error":false,"exception":"from the fallback"}\n'
done
`), 0o755))
	ctx := context.Background()
	p, err := NewPuppet(PuppetConfig{Fallback: "sh " + script, Delegate: []string{"ANCHOR"}})
	require.NoError(t, err)
	defer p.Close(ctx)
	assert.Zero(t, p.Fallback().Pid(), "made, not started")

	assert.True(t, p.Native(applier.Default, "notify"), "known: native")
	assert.False(t, p.Native(applier.Default, "anchor"), "forced: Puppet")
	assert.False(t, p.Native(applier.Default, "no_such_type"), "unknown: Puppet")
	var none *Puppet
	assert.True(t, none.Native(applier.Default, "anchor"), "no Puppet: native when known")
	assert.False(t, none.Native(applier.Default, "no_such_type"))

	_, app, err := New(Config{Puppet: p}).Session()
	require.NoError(t, err)
	res := app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "from the fallback", res.Exception)
	pid := p.Fallback().Pid()
	assert.NotZero(t, pid, "started by its first use")
	assert.False(t, p.Start(ctx), "running: Start has nothing to start")

	p.Close(ctx)
	assert.Zero(t, p.Fallback().Pid(), "stopped by Close")
	res = app.Apply(ctx, &protocol.Request{Type: "anchor", Title: "a"})
	assert.Equal(t, "from the fallback", res.Exception, "started again by the next use")
	assert.NotZero(t, p.Fallback().Pid())
	assert.NotEqual(t, pid, p.Fallback().Pid())

	p.Restart(ctx)
	assert.Zero(t, p.Fallback().Pid(), "Restart: stopped, to start on next use")
	assert.True(t, p.Start(ctx), "Start: started ahead")
	assert.False(t, p.Start(ctx), "once")
	assert.Eventually(t, func() bool { return p.Fallback().Pid() != 0 }, 10*time.Second, 10*time.Millisecond, "started in the background")

	_, err = NewPuppet(PuppetConfig{Fallback: delegate.ModeNone})
	require.NoError(t, err)
	var nilPuppet *Puppet
	nilPuppet.Close(ctx) // a run without Puppet closes nothing
	assert.False(t, nilPuppet.Start(ctx))
}
