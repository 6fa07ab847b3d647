package agent

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pippet/pippet/internal/assemble"
)

// The daemon's Puppet between runs (--puppet-between-runs).
//
// A run that needs Ruby (a resource of a type pippet hands to Puppet, a
// custom fact file pippet does not know) starts one Puppet process for
// it. By default (PuppetBetweenRuns "stop") the run stops it when it
// ends, as a `-t` run does: the daemon holds only its own memory
// between runs, and each run that needs Puppet starts it again, in the
// background of its requests. With "keep" the daemon keeps that process
// for the next run: no Ruby start per run, at the price of Puppet's
// resident memory between runs (BENCHMARKS.md, the daemon's Puppet
// between runs, has the figures that chose the default). A kept Puppet
// is replaced when pluginsync changes code it may have loaded, when its
// configuration differs (the settings the run gives it), or when
// puppet.conf changed since it started (it read the file then).

// Values of PuppetBetweenRuns.
const (
	PuppetStop = "stop"
	PuppetKeep = "keep"
)

// keptPuppet is the Puppet a daemon keeps between its runs.
type keptPuppet struct {
	mu     sync.Mutex
	p      *assemble.Puppet
	config assemble.PuppetConfig // what p was made with, Log aside
	conf   fileStamp             // puppet.conf when p was made
	log    *switchHandler
}

// fileStamp tells whether a file changed: its size, modification time
// and inode (the zero stamp for a file that is not there).
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	ok    bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil || path == "" {
		return fileStamp{}
	}
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime(), ok: true}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}

// puppet is the run's Puppet for c: the kept one when it was made with
// the same configuration and puppet.conf (confFile) has not changed
// since, else a new one (the old one stopped). Its lines go to c.Log
// until release.
func (k *keptPuppet) puppet(ctx context.Context, c assemble.PuppetConfig, confFile string) (*assemble.Puppet, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.log == nil {
		k.log = newSwitchHandler()
	}
	k.log.set(c.Log)
	stamp := stampOf(confFile)
	key := c
	key.Log = nil
	if k.p != nil && reflect.DeepEqual(key, k.config) && stamp == k.conf {
		return k.p, nil
	}
	if k.p != nil {
		k.p.Close(ctx)
		k.p = nil
	}
	c.Log = k.log
	p, err := assemble.NewPuppet(c)
	if err != nil {
		return nil, err
	}
	k.p, k.config, k.conf = p, key, stamp
	return p, nil
}

// release ends a run's use: the kept Puppet's lines go nowhere until
// the next run.
func (k *keptPuppet) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.log != nil {
		k.log.set(nil)
	}
}

// Close stops the kept Puppet (the daemon's end).
func (k *keptPuppet) Close(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.p != nil {
		k.p.Close(ctx)
		k.p = nil
	}
}

// switchHandler passes records to the handler set last (none: dropped),
// so that a Puppet kept between runs logs into the run of the moment.
type switchHandler struct {
	cur *atomic.Pointer[slog.Handler]
	// ops are the WithAttrs and WithGroup calls made on this handler,
	// applied to the current target.
	ops []func(slog.Handler) slog.Handler
}

func newSwitchHandler() *switchHandler {
	return &switchHandler{cur: &atomic.Pointer[slog.Handler]{}}
}

func (s *switchHandler) set(h slog.Handler) {
	if h == nil {
		s.cur.Store(nil)
		return
	}
	s.cur.Store(&h)
}

func (s *switchHandler) target() slog.Handler {
	p := s.cur.Load()
	if p == nil {
		return nil
	}
	h := *p
	for _, op := range s.ops {
		h = op(h)
	}
	return h
}

func (s *switchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	h := s.target()
	return h != nil && h.Enabled(ctx, l)
}

func (s *switchHandler) Handle(ctx context.Context, r slog.Record) error {
	if h := s.target(); h != nil {
		return h.Handle(ctx, r)
	}
	return nil
}

func (s *switchHandler) with(op func(slog.Handler) slog.Handler) *switchHandler {
	ops := append(append([]func(slog.Handler) slog.Handler(nil), s.ops...), op)
	return &switchHandler{cur: s.cur, ops: ops}
}

func (s *switchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

func (s *switchHandler) WithGroup(name string) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}
