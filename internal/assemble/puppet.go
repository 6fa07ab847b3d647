package assemble

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
)

// PuppetConfig says which Puppet a run falls back on, and how it runs.
type PuppetConfig struct {
	// Fallback, ModulePath, LibDir and Settings are delegate.Options'
	// Fallback, ModulePath, LibDir and Settings (--fallback, --modulepath,
	// an agent's VARDIR/lib and settings).
	Fallback, ModulePath, LibDir string
	Settings                     []string
	// Delegate names the types sent to Puppet even when pippet has them
	// (--delegate): naming one without a fallback is an error.
	Delegate []string
	// Noop: Puppet runs with --noop.
	Noop bool
	// Level is the least severe level Puppet logs at.
	Level slog.Level
	// MaxRequest is the receiver's --max-line (0: the runner's default).
	MaxRequest int
	// Log receives Puppet's lines, each at the level its prefix names
	// (delegate.RelayHandler); nil discards them.
	Log slog.Handler
}

// Puppet is the owner of a run's Puppet: the fallback for the types
// pippet lacks (and those forced to it), which also evaluates an agent's
// custom facts. Making one starts nothing: the process starts on first
// use (the first delegated request, the first custom facts), or ahead,
// in the background, when the caller calls Start. Whoever made it calls
// Close, once, when the run ends; Close is the only place a run's
// Puppet is stopped. A nil *Puppet is a run without a fallback.
type Puppet struct {
	opts   delegate.Options
	forced map[string]bool
	log    *slog.Logger

	mu      sync.Mutex
	fb      *delegate.Fallback
	started bool
}

// NewPuppet makes the owner of the Puppet c describes. Its fallback is
// nil when there is none to fall back on (--fallback none, or no Puppet
// installed in auto mode); an error when c cannot be honoured (no Puppet
// for --fallback puppet, --delegate without a fallback).
func NewPuppet(c PuppetConfig) (*Puppet, error) {
	h := c.Log
	if h == nil {
		h = slog.DiscardHandler
	}
	p := &Puppet{
		opts: delegate.Options{
			Fallback: c.Fallback, ModulePath: c.ModulePath, LibDir: c.LibDir,
			Settings: c.Settings, Types: c.Delegate, Noop: c.Noop,
			LogLevel: puppetlog.Name(c.Level), MaxRequest: c.MaxRequest,
			Logger: slog.New(delegate.RelayHandler(h, applier.LevelNotice)),
		},
		forced: map[string]bool{},
		log:    slog.New(h),
	}
	for _, t := range c.Delegate {
		p.forced[strings.ToLower(t)] = true
	}
	fb, err := delegate.New(p.opts)
	if err != nil {
		return nil, err
	}
	if fb == nil && len(c.Delegate) > 0 {
		return nil, fmt.Errorf("--delegate %s: there is no fallback to send them to (--fallback %s)", strings.Join(c.Delegate, ","), c.Fallback)
	}
	p.fb = fb
	return p, nil
}

// Fallback is the fallback requests and custom facts go to, nil without
// one. Its process starts on its first request.
func (p *Puppet) Fallback() *delegate.Fallback {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fb
}

// Start starts Puppet now, in the background of the caller's own work
// (an agent whose last run needed it): its first use then does not wait
// for its start. It reports whether it started it: false when there is
// none, or it runs or is starting already.
func (p *Puppet) Start(ctx context.Context) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	fb := p.fb
	first := fb != nil && !p.started && fb.Pid() == 0
	p.started = p.started || first
	p.mu.Unlock()
	if first {
		go (&delegate.Applier{Fallback: fb}).Prestart(ctx)
	}
	return first
}

// Restart stops Puppet and makes a new one, to start on its next use
// (Ruby loads a required file once: code pluginsync changed needs a new
// process).
func (p *Puppet) Restart(ctx context.Context) {
	if p == nil {
		return
	}
	p.Close(ctx)
	fb, err := delegate.New(p.opts)
	if err != nil {
		p.log.Warn("starting the fallback again: " + err.Error())
	}
	p.mu.Lock()
	p.fb, p.started = fb, false
	p.mu.Unlock()
}

// Close stops the Puppet process, if one runs, letting the request in
// progress finish (10 seconds at most). A later use starts it again.
func (p *Puppet) Close(ctx context.Context) {
	fb := p.Fallback()
	if fb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := fb.Close(ctx); err != nil {
		p.log.Warn("stopping the fallback: " + err.Error())
	}
	p.mu.Lock()
	p.started = false
	p.mu.Unlock()
}

// Native is the routing rule of every run: a resource of type name is
// applied natively unless forced to Puppet (--delegate) or unknown to
// reg. Whether Puppet knows an unknown type is the fallback's to say
// (delegate.Applier).
func (p *Puppet) Native(reg *applier.Registry, name string) bool {
	if p != nil && len(p.forced) > 0 && p.forced[strings.ToLower(name)] {
		return false
	}
	_, ok := reg.Lookup(name)
	return ok
}

// route puts the fallback in front of sess by the routing rule; without
// a fallback sess is returned as it is. A forced type the fallback cannot
// apply is an error.
func (p *Puppet) route(sess *engine.Session) (protocol.Applier, error) {
	fb := p.Fallback()
	if fb == nil {
		return sess, nil
	}
	for _, t := range p.opts.Types {
		if !fb.Knows(t) {
			return sess, fmt.Errorf("--delegate %s: the fallback has no type %s", strings.Join(p.opts.Types, ","), t)
		}
	}
	reg := sess.Engine().Registry()
	return &delegate.Applier{
		Native:     sess,
		NativeKnow: func(name string) bool { return p.Native(reg, name) },
		Fallback:   fb,
	}, nil
}
