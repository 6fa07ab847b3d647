// Package assemble puts a run together: every kind of run pippet does
// (the request stream, `receiver apply`, an agent run, pluginsync, the
// `resource` and `describe` commands) calls New once, and New alone calls
// engine.New.
//
// A run is an engine over a registry of types (applier.Default, or
// pluginsync's file type alone), the applier.Env every provider sees
// (noop, the state directory, the facts and the file type's sources the
// caller hands in, with their TLS configuration), the log chain (one
// slog.Handler at the end: Puppet's format, or a catalog's log kept for
// its report) and the directories' durability (dirsync, grouped or at
// once). Session gives the engine's session with the run's Puppet in
// front of it.
//
// The run's Puppet is a Puppet, made by the caller with NewPuppet and
// closed by the caller when the run ends, whatever ended it: the one
// owner of the process. Making it starts nothing; the process starts on
// its first use (a delegated resource, an agent's custom facts), or
// ahead, in the background, when the caller expects to need it
// (Puppet.Start). Which resources go to it is one rule, Puppet.Native:
// native unless forced (--delegate) or unknown.
//
// Apply (catalog.go) is the catalog run `receiver apply` and the agent
// share: the graph built, the run assembled, the walk, the report.
package assemble

import (
	"context"
	"log/slog"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/internal/stream"
	"github.com/pippet/pippet/protocol"
)

// Config describes a run.
type Config struct {
	// Registry holds the types the run applies; nil is applier.Default.
	Registry *applier.Registry
	// Options are every type's: noop, the state directory.
	Options applier.Options
	// Facts are the node's facts, when the caller has them.
	Facts applier.Facts
	// Log is the end of the run's log chain; nil discards.
	Log slog.Handler
	// Durability says when changes to directory entries are fsynced.
	Durability Durability
	// Source configures the file type's sources (the agent's puppet://
	// client and its TLS configuration, a static catalog's metadata);
	// nil leaves the file type's defaults.
	Source *source.Options
	// Puppet is the run's fallback, nil for none.
	Puppet *Puppet
}

// Durability is when a run fsyncs the directories whose entries it
// changed.
type Durability int

const (
	// AtOnce: each change before its answer, silently (Dirs is nil).
	AtOnce Durability = iota
	// AtOnceLogged: each change before its answer, the fsyncs logged at
	// debug level (the stream's --sync).
	AtOnceLogged
	// Grouped: in groups, after the answers (the stream flushes them as
	// input pauses; a catalog run at its end, Flush).
	Grouped
)

// Run is an assembled run.
type Run struct {
	Env    *applier.Env
	Engine *engine.Engine
	Dirs   *dirsync.Syncer
	Log    *slog.Logger
	puppet *Puppet
}

// New assembles the run c describes.
func New(c Config) *Run {
	reg := c.Registry
	if reg == nil {
		reg = applier.Default
	}
	h := c.Log
	if h == nil {
		h = slog.DiscardHandler
	}
	logger := slog.New(h)
	var dirs *dirsync.Syncer
	if c.Durability != AtOnce {
		dirs = stream.NewDirSync(logger, c.Durability == Grouped)
	}
	env := &applier.Env{Facts: c.Facts, Options: c.Options, Log: logger, Dirs: dirs}
	if c.Source != nil {
		file.SetSourceOptions(env, *c.Source)
	}
	return &Run{Env: env, Engine: engine.New(reg, env), Dirs: dirs, Log: logger, puppet: c.Puppet}
}

// Session is a new session of the run's engine (one stream of lines),
// and the Applier that routes its requests: the session itself, behind
// the run's Puppet when there is one (Puppet.Native).
func (r *Run) Session() (*engine.Session, protocol.Applier, error) {
	sess := r.Engine.NewSession()
	app, err := r.puppet.route(sess)
	return sess, app, err
}

// Flush makes the directory changes still pending durable.
func (r *Run) Flush(ctx context.Context) {
	r.Dirs.Flush(ctx)
}
