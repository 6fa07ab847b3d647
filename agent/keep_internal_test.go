package agent

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/assemble"
)

// TestKeptPuppetReusedUntilItsConfigurationChanges: a daemon's kept
// Puppet is the same from run to run while the configuration a run gives
// it and puppet.conf stay the same, and a new one (the old one closed)
// when either changes; the run's log handler alone may differ.
func TestKeptPuppetReusedUntilItsConfigurationChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	conf := filepath.Join(dir, "puppet.conf")
	require.NoError(t, os.WriteFile(conf, []byte("[main]\n"), 0o644))
	var log1, log2 bytes.Buffer
	c := assemble.PuppetConfig{Fallback: delegate.ModeAuto, LibDir: filepath.Join(dir, "lib"),
		Settings: []string{"--confdir=" + dir}, Log: slog.NewTextHandler(&log1, nil)}
	k := &keptPuppet{}
	defer k.Close(ctx)
	p1, err := k.puppet(ctx, c, conf)
	require.NoError(t, err)
	k.release()
	c.Log = slog.NewTextHandler(&log2, nil)
	p2, err := k.puppet(ctx, c, conf)
	require.NoError(t, err)
	assert.Same(t, p1, p2, "the same configuration, another run's log: the same Puppet")
	k.release()

	c.Noop = true
	p3, err := k.puppet(ctx, c, conf)
	require.NoError(t, err)
	assert.NotSame(t, p2, p3, "another configuration (noop): a new Puppet")
	k.release()
	c.Settings = append(c.Settings, "--show_diff")
	p4, err := k.puppet(ctx, c, conf)
	require.NoError(t, err)
	assert.NotSame(t, p3, p4, "another setting: a new Puppet")
	k.release()

	// puppet.conf rewritten (another size, another mtime): Puppet read
	// the old one.
	require.NoError(t, os.WriteFile(conf, []byte("[main]\nnoop = true\n"), 0o644))
	require.NoError(t, os.Chtimes(conf, time.Now().Add(time.Minute), time.Now().Add(time.Minute)))
	p5, err := k.puppet(ctx, c, conf)
	require.NoError(t, err)
	assert.NotSame(t, p4, p5, "puppet.conf changed: a new Puppet")
	p6, err := k.puppet(ctx, c, conf)
	require.NoError(t, err)
	assert.Same(t, p5, p6)
}

// TestSwitchHandlerFollowsTheRun: the kept Puppet's lines go to the
// handler of the run of the moment, handlers derived from it
// (WithAttrs, WithGroup) included, and nowhere between runs.
func TestSwitchHandlerFollowsTheRun(t *testing.T) {
	s := newSwitchHandler()
	log := slog.New(s)
	derived := slog.New(s.WithAttrs([]slog.Attr{slog.String("from", "puppet")}).WithGroup("g"))
	log.Info("between runs")
	var run1, run2 bytes.Buffer
	s.set(slog.NewTextHandler(&run1, nil))
	log.Info("first run")
	derived.Info("derived", "k", "v")
	s.set(nil)
	log.Info("between runs again")
	assert.False(t, s.Enabled(context.Background(), slog.LevelError))
	s.set(slog.NewTextHandler(&run2, nil))
	derived.Info("second run")
	assert.NotContains(t, run1.String()+run2.String(), "between runs")
	assert.Contains(t, run1.String(), "msg=\"first run\"")
	assert.Contains(t, run1.String(), "from=puppet g.k=v")
	assert.NotContains(t, run1.String(), "second run")
	assert.Contains(t, run2.String(), "msg=\"second run\" from=puppet")
}
