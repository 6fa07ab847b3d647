package delegate

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

func TestNewModes(t *testing.T) {
	f, err := New(Options{Fallback: ModeNone})
	require.NoError(t, err)
	assert.Nil(t, f, "none: no fallback")

	f, err = New(Options{Fallback: "some-receiver --flag"})
	require.NoError(t, err)
	require.NotNil(t, f)
	assert.True(t, f.Knows("anything"), "a command takes every type")
	assert.Nil(t, f.Types())
	assert.Equal(t, "'some-receiver --flag'", f.String())

	_, found := FindPuppet()
	f, err = New(Options{Fallback: ModeAuto})
	require.NoError(t, err)
	assert.Equal(t, found, f != nil, "auto: a fallback exactly when Puppet is found")
	f, err = New(Options{Fallback: ModePuppet})
	if found {
		require.NoError(t, err)
		assert.Equal(t, 0, f.Pid(), "nothing started by New")
	} else {
		assert.ErrorContains(t, err, "no Puppet installation found")
	}
}

func TestTypesFromModulePath(t *testing.T) {
	if _, ok := FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent)")
	}
	mods, err := filepath.Abs("testdata/modules")
	require.NoError(t, err)
	f, err := New(Options{Fallback: ModePuppet, ModulePath: mods + ":/nonexistent"})
	require.NoError(t, err)
	assert.Equal(t, []string{mods, "/nonexistent"}, f.ModulePath())
	assert.True(t, f.Knows("ini_key"))
	assert.True(t, f.Knows("Ini_Key"), "type names are case-insensitive")
	assert.True(t, f.Knows("pippet_note"))
	assert.True(t, f.Knows("schedule"), "Puppet's own types")
	assert.False(t, f.Knows("whit"), "internal types are not applied alone")
	assert.False(t, f.Knows("starship"))
	byName := map[string]string{}
	for _, ti := range f.Types() {
		byName[ti.Name] = ti.Source
	}
	assert.Equal(t, filepath.Join(mods, "pippet_ini"), byName["ini_key"])
	assert.Equal(t, "puppet", byName["file"])
	assert.Equal(t, 0, f.Pid(), "listing types starts nothing")
}

// TestApplyCommandFallback forwards to a receiver command (a shell loop
// answering each line as a receiver would) and relays its answer.
func TestApplyCommandFallback(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script := `echo '{"ready":true}'; while read -r l; do echo "Notice: got it" >&2; echo '{"resource":"Foo[x]","failed":true,"changed":true,"noop":false,"error":false,"exception":"boom"}'; done`
	f := commandFallback(t, []string{"sh", "-c", script})
	res := f.Apply(context.Background(), &protocol.Request{Type: "foo", Title: "x", Params: map[string]any{"a": int64(1)}})
	assert.Equal(t, protocol.Result{Resource: "Foo[x]", Failed: true, Changed: true, Exception: "boom"}, res)
	require.NoError(t, f.Close(context.Background()))
	assert.Equal(t, 0, f.Pid())
}

// TestApplyDeadFallback: a command that cannot start is an error answer
// naming the resource, and the next request tries again.
func TestApplyDeadFallback(t *testing.T) {
	f := commandFallback(t, []string{"/nonexistent/receiver"})
	for range 2 {
		res := f.Apply(context.Background(), &protocol.Request{Type: "foo", Title: "x"})
		assert.True(t, res.Error)
		assert.Equal(t, "Foo[x]", res.Resource)
		assert.Contains(t, res.Exception, "Foo[x]: cannot delegate to")
		assert.Contains(t, res.Exception, "/nonexistent/receiver")
	}
}

func TestRelayHandler(t *testing.T) {
	var out bytes.Buffer
	next := slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo + 1})
	log := slog.New(RelayHandler(next, slog.LevelInfo+2)).With("component", "pippet-runner", "pid", 7)
	log.Info("receiver stderr", "line", "Notice: /Ini_key[a/b]/value: changed")
	log.Info("receiver stderr", "line", "Info: too quiet")
	log.Info("receiver stderr", "line", "Error: bad")
	log.Info("receiver stderr", "line", "ruby: warning: something")
	log.Debug("receiver started", "command", "ruby")
	log.Warn("replacing receiver")
	got := out.String()
	assert.Contains(t, got, `level=INFO+2 msg="/Ini_key[a/b]/value: changed"`+"\n")
	assert.NotContains(t, got, "too quiet")
	assert.Contains(t, got, "level=ERROR msg=bad\n")
	assert.Contains(t, got, `level=WARN msg="ruby: warning: something"`+"\n")
	assert.NotContains(t, got, "receiver started")
	assert.Contains(t, got, `level=WARN msg="replacing receiver" component=pippet-runner pid=7`)
	assert.Equal(t, 4, strings.Count(got, "\n"))
}

type stubApplier struct{ n int }

func (s *stubApplier) Apply(context.Context, *protocol.Request) protocol.Result {
	s.n++
	return protocol.Result{Resource: "native"}
}

// TestApplierRoutes: known types and verbs other than apply stay native.
func TestApplierRoutes(t *testing.T) {
	script := `echo '{"ready":true}'; while read -r l; do echo '{"resource":"Foo[x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}'; done`
	native := &stubApplier{}
	a := &Applier{Native: native, NativeKnow: func(n string) bool { return n == "file" }, Fallback: commandFallback(t, []string{"sh", "-c", script})}
	ctx := context.Background()
	assert.Equal(t, "native", a.Apply(ctx, &protocol.Request{Type: "file", Title: "/x"}).Resource)
	assert.Equal(t, "Foo[x]", a.Apply(ctx, &protocol.Request{Type: "foo", Title: "x"}).Resource)
	for _, op := range []protocol.Op{protocol.OpFind, protocol.OpSearch, protocol.OpDescribe} {
		assert.Equal(t, "native", a.Apply(ctx, &protocol.Request{Type: "foo", Title: "x", Op: op}).Resource, op.String())
	}
	assert.Equal(t, 4, native.n)
}

// TestTypesFromLibDir: an agent's libdir (where pluginsync puts the
// server's plugins) gives Puppet its types, with an empty modulepath;
// the type is found, and applied by a real Puppet.
func TestTypesFromLibDir(t *testing.T) {
	if _, ok := FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent)")
	}
	lib, err := filepath.Abs("testdata/modules/pippet_ini/lib")
	require.NoError(t, err)
	f, err := New(Options{Fallback: ModePuppet, LibDir: lib})
	require.NoError(t, err)
	defer f.Close(context.Background())
	assert.Empty(t, f.ModulePath(), "an agent's fallback has no modulepath")
	assert.True(t, f.Knows("ini_key"))
	assert.False(t, f.Knows("pippet_note"), "a module not in the libdir")
	byName := map[string]string{}
	for _, ti := range f.Types() {
		byName[ti.Name] = ti.Source
	}
	assert.Equal(t, lib, byName["ini_key"])

	ini := filepath.Join(t.TempDir(), "x.ini")
	res := f.Apply(context.Background(), &protocol.Request{Type: "ini_key", Title: "main/color",
		Params: map[string]any{"path": ini, "value": "blue"}})
	require.False(t, res.Failed, "%+v", res)
	assert.True(t, res.Changed, "%+v", res)
	b, err := os.ReadFile(ini)
	require.NoError(t, err)
	assert.Contains(t, string(b), "blue")
}
