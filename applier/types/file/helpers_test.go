package file_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/protocol"
)

// newEngine is an engine over a registry holding only the file type, with
// its state directory in a temp dir.
func newEngine(t *testing.T, opts ...func(*source.Options)) *engine.Engine {
	t.Helper()
	reg := applier.NewRegistry()
	reg.Add(file.Type)
	env := &applier.Env{Options: applier.Options{StateDir: t.TempDir()}}
	so := source.Options{HTTPTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&so)
	}
	file.SetSourceOptions(env, so)
	return engine.New(reg, env)
}

// newLoggingEngine is newEngine with its log captured.
func newLoggingEngine(t *testing.T) (*engine.Engine, *bytes.Buffer) {
	t.Helper()
	reg := applier.NewRegistry()
	reg.Add(file.Type)
	var buf bytes.Buffer
	env := &applier.Env{Options: applier.Options{StateDir: t.TempDir()},
		Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	return engine.New(reg, env), &buf
}

// newDiffingEngine is newLoggingEngine with Puppet's show_diff setting
// on (the agent's -t, the receiver's --show_diff).
func newDiffingEngine(t *testing.T) (*engine.Engine, *bytes.Buffer) {
	t.Helper()
	e, buf := newLoggingEngine(t)
	e.Env().Options.ShowDiff = true
	return e, buf
}

// apply runs one request whose params are YAML, decoded by the
// receiver's own decoder (the protocol's Psych rules: `yes` is a boolean,
// an unquoted 0644 an octal integer), as typetest does.
func apply(t *testing.T, e *engine.Engine, path, params string) protocol.Result {
	t.Helper()
	line, err := json.Marshal(map[string]string{"type": "file", "title": path, "params": params})
	require.NoError(t, err)
	var dec protocol.Decoder
	var req protocol.Request
	require.NoError(t, dec.DecodeLine(line, &req), "the receiver's decoder refuses %s", params)
	return e.Apply(context.Background(), &req)
}

type outcome struct{ changed, failed, error bool }

func outcomeOf(r protocol.Result) outcome { return outcome{r.Changed, r.Failed, r.Error} }

var (
	changed   = outcome{changed: true}
	unchanged = outcome{}
	failed    = outcome{failed: true}
	errored   = outcome{failed: true, error: true}
)

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Mode()
}

// listDir names every entry below dir (relative), to catch stray temp files.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

func withTimeout(d time.Duration) func(*source.Options) {
	return func(o *source.Options) { o.HTTPTimeout = d }
}

func sha256hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
