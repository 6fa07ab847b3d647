// Package applyrun applies a compiled catalog with the receiver's engine:
// the wiring `receiver apply` and `receiver agent` share. A catalog's
// graph is built over every registered type (catalog.Build); a session of
// the engine (applier/engine) applies the native resources; the types
// pippet lacks go to Puppet through the fallback (package delegate),
// which an agent points at the plugins pluginsync brought (LibDir); the
// walk (catalog.Apply) orders, refreshes, skips and reports.
//
// What is set up here and nowhere else: the engine's environment (noop,
// the state directory, the file type's sources), the fallback in front
// of the session and its end (the Puppet process stopped, every command
// the run started killed), and the directories' durability, flushed
// before Apply returns.
package applyrun

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/stream"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/report"
)

// Options say how a catalog is applied.
type Options struct {
	// Noop: change nothing; the report says what would have changed.
	Noop bool
	// Tags and SkipTags select the resources applied (--tags, --skip_tags).
	Tags, SkipTags []string
	// StateDir is pippet's state (the filebucket, the schedules' last
	// runs in StateDir/schedules.json, the audited values in
	// StateDir/audit.json).
	StateDir string
	// Fallback, ModulePath, LibDir and Delegate describe the fallback
	// (delegate.Options' Fallback, ModulePath, LibDir and Types).
	Fallback, ModulePath, LibDir string
	Delegate                     []string
	// Level is the least severe level printed; the fallback's Puppet logs
	// at it too.
	Level slog.Level
	// Log is the handler every line of the apply goes through (kept for
	// the report, printed by the handler it wraps). Nil: kept only.
	Log *catalog.Log
	// Source configures the file type's sources (the agent's puppet://
	// client, a static catalog's inlined metadata).
	Source source.Options
	// TransactionStore keeps what each managed property was left at
	// between runs, so that a change setting back a drifted value is
	// reported corrective, as Puppet's agent does
	// (catalog.Options.TransactionStore); "" keeps none, as puppet apply.
	TransactionStore string
	// PuppetSettings are more of Puppet's settings for the fallback's
	// Puppet (delegate.Options.Settings).
	PuppetSettings []string
	// Started is a fallback made (and maybe being started) ahead by
	// Start, for these same options: Apply uses it instead of making one,
	// and stops it at the end.
	Started *delegate.Fallback
	// Sources maps a puppet:/// source to a local file, as puppet apply
	// reads them from its modulepath (catalog.Options.Sources).
	Sources func(url string) (string, bool)
}

// Apply builds cat's graph and applies it. An error says the catalog
// could not be applied at all (a resource the graph refuses, a fallback
// that cannot be set up): nothing was changed. A resource that fails is
// in the report, not an error.
func Apply(ctx context.Context, cat *catalog.Catalog, o Options) (*report.Report, error) {
	logh := o.Log
	if logh == nil {
		logh = catalog.NewLog(nil)
	}
	logger := slog.New(logh)
	g, err := catalog.Build(cat, applier.Default)
	if err != nil {
		CloseFallback(ctx, o.Started, logger)
		return nil, err
	}
	dirs := stream.NewDirSync(logger, true)
	defer dirs.Flush(context.WithoutCancel(ctx))
	env := &applier.Env{
		Options: applier.Options{Noop: o.Noop, StateDir: o.StateDir},
		Log:     logger,
		Dirs:    dirs,
	}
	file.SetSourceOptions(env, o.Source)
	eng := engine.New(applier.Default, env)
	var app protocol.Applier
	var fb *delegate.Fallback
	if o.Started != nil {
		app, fb, err = withStarted(eng.NewSession(), o.Started, o.Delegate)
	} else {
		app, fb, err = WithFallback(eng.NewSession(), fallbackOptions(o, logh))
	}
	if err != nil {
		CloseFallback(ctx, o.Started, logger)
		return nil, err
	}
	defer CloseFallback(ctx, fb, logger)
	// No command outlives the apply; the process may apply again (the
	// agent's daemon): KillAll, which refuses new ones, is main's.
	defer command.KillRunning()
	var schedules, audits string
	if o.StateDir != "" {
		schedules = filepath.Join(o.StateDir, "schedules.json")
		audits = filepath.Join(o.StateDir, "audit.json")
	}
	if cat.Version != "" {
		logger.Info(fmt.Sprintf("Applying configuration version '%s'", cat.Version))
	}
	return catalog.Apply(ctx, g, app, catalog.Options{
		Noop: o.Noop, Tags: o.Tags, SkipTags: o.SkipTags, Log: logh,
		Schedules: schedules, Audits: audits, TransactionStore: o.TransactionStore,
		Sources: o.Sources,
	}), nil
}

func fallbackOptions(o Options, logh *catalog.Log) delegate.Options {
	return delegate.Options{
		Fallback: o.Fallback, ModulePath: o.ModulePath, LibDir: o.LibDir, Types: o.Delegate,
		Settings: o.PuppetSettings,
		Noop:     o.Noop, LogLevel: puppetlog.Name(o.Level),
		Logger: slog.New(delegate.RelayHandler(logh, applier.LevelNotice)),
	}
}

// Start makes the fallback o describes and starts its Puppet in the
// background, ahead of the catalog, for a caller that expects the
// catalog to delegate (an agent whose last catalog did): Puppet's start
// then overlaps the caller's own work. The result goes in
// Options.Started; nil when there is no fallback. Its Puppet is stopped
// by Apply, or by CloseFallback when no Apply follows.
func Start(ctx context.Context, o Options) *delegate.Fallback {
	logh := o.Log
	if logh == nil {
		logh = catalog.NewLog(nil)
	}
	fb, err := delegate.New(fallbackOptions(o, logh))
	if err != nil || fb == nil {
		return nil
	}
	go (&delegate.Applier{Fallback: fb}).Prestart(ctx)
	return fb
}

// withStarted is WithFallback for a fallback Start made.
func withStarted(sess *engine.Session, fb *delegate.Fallback, types []string) (protocol.Applier, *delegate.Fallback, error) {
	forced := map[string]bool{}
	for _, t := range types {
		if !fb.Knows(t) {
			return sess, fb, fmt.Errorf("--delegate %s: the fallback has no type %s", strings.Join(types, ","), t)
		}
		forced[strings.ToLower(t)] = true
	}
	reg := sess.Engine().Registry()
	return &delegate.Applier{
		Native: sess,
		NativeKnow: func(name string) bool {
			if forced[strings.ToLower(name)] {
				return false
			}
			_, ok := reg.Lookup(name)
			return ok
		},
		Fallback: fb,
	}, fb, nil
}

// WithFallback puts the fallback the options describe in front of the
// engine session; without one the session is returned as it is. The
// types o.Types names go to the fallback even when native: naming one
// without a fallback, or one the fallback cannot apply, is an error.
func WithFallback(sess *engine.Session, o delegate.Options) (protocol.Applier, *delegate.Fallback, error) {
	fb, err := delegate.New(o)
	if err != nil {
		return sess, nil, err
	}
	if fb == nil {
		if len(o.Types) > 0 {
			return sess, nil, fmt.Errorf("--delegate %s: there is no fallback to send them to (--fallback %s)", strings.Join(o.Types, ","), o.Fallback)
		}
		return sess, nil, nil
	}
	return withStarted(sess, fb, o.Types)
}

// CloseFallback stops the Puppet process, if one runs.
func CloseFallback(ctx context.Context, fb *delegate.Fallback, log *slog.Logger) {
	if fb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := fb.Close(ctx); err != nil {
		log.Warn("stopping the fallback: " + err.Error())
	}
}
