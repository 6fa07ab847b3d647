package applier

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
)

// LevelNotice is Puppet's notice level, between info and warning
// (internal/puppetlog's, which prints it).
const LevelNotice = puppetlog.LevelNotice

// Facts are what is known about this machine, read once per process:
// os.family, os.name, os.release.full, os.release.major, kernel,
// kernelrelease, architecture, hostname, fqdn, domain (and the legacy flat
// names osfamily, operatingsystem, operatingsystemrelease).
type Facts map[string]string

// Options are the process-wide settings that every type may read. What
// only one type reads (where the file type's sources come from) is that
// type's, in Env.TypeOptions.
type Options struct {
	// Noop: evaluate every resource without changing anything.
	Noop bool
	// StateDir holds pippet's own state (the filebucket); engine.New sets
	// DefaultStateDir() when empty.
	StateDir string
	// ShowDiff is Puppet's show_diff setting (off by default, as for
	// puppet apply; on with the agent's --test or --show_diff): a type
	// that can show what a change does to a file's content (a diff) shows
	// it only when it is set and the resource's show_diff allows, never
	// for a Sensitive value.
	ShowDiff bool
}

// Env is what a provider may use besides its resource: facts, settings,
// logging and process-wide caches. One Env serves the whole process.
type Env struct {
	Facts    Facts
	Options  Options
	Log      *slog.Logger
	Features map[string]bool
	// Cache is for providers' safe-to-cache lookups (user and group ids,
	// prefetched instances). Keys should be prefixed by the type name.
	Cache *Cache
	// Dirs makes changes to directory entries durable (see dirsync.Syncer): a
	// provider that renames, links, unlinks or makes an entry calls
	// Dirs.Mark(parent). nil is immediate mode: each Mark fsyncs at once.
	// The receiver sets a deferred one and flushes it.
	Dirs *dirsync.Syncer
	// TypeOptions holds settings that only one type reads, under the
	// type's name; the type says what it takes there and offers a setter
	// (file: a source.Options, see file.SetSourceOptions). The engine
	// never looks at it.
	TypeOptions map[string]any
	// Engine, set by the engine this Env serves, makes an engine over reg
	// with env (this Env, or a copy of it with another logger): how a
	// type composed of others applies their requests (concat_file applies
	// its target as a file) without importing the engine. nil outside an
	// engine.
	Engine func(reg *Registry, env *Env) protocol.Applier
}

// SystemStateDir is root's state directory, as Puppet's vardir is
// /opt/puppetlabs/puppet/cache for root.
const SystemStateDir = "/var/lib/pippet"

// DefaultStateDir is where pippet keeps its own state (the filebucket)
// unless told otherwise: SystemStateDir for root; for any other user a
// directory of their own, $XDG_STATE_HOME/pippet, else
// ~/.local/state/pippet (as Puppet gives a user other than root a vardir
// under ~/.puppetlabs), so that a normal user's backups go where that user
// may write. With neither an absolute XDG_STATE_HOME nor HOME it is
// SystemStateDir.
func DefaultStateDir() string { return stateDirFor(os.Geteuid(), os.Getenv) }

// stateDirFor is DefaultStateDir for effective uid euid and the
// environment getenv.
func stateDirFor(euid int, getenv func(string) string) string {
	if euid == 0 {
		return SystemStateDir
	}
	// The XDG base directory spec: a relative path is invalid and ignored.
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "pippet")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "pippet")
	}
	return SystemStateDir
}

// DefaultFeatures are the features of this process: "posix", and "root"
// when running with effective uid 0.
func DefaultFeatures() map[string]bool {
	f := map[string]bool{"posix": true}
	if os.Geteuid() == 0 {
		f["root"] = true
	}
	return f
}

var discardLogger = slog.New(slog.DiscardHandler)

// Logger returns the environment's logger, or one that discards when the
// Env or its Log is nil.
func (env *Env) Logger() *slog.Logger {
	if env == nil || env.Log == nil {
		return discardLogger
	}
	return env.Log
}

// Cache is a process-wide map for providers' safe-to-cache lookups.
type Cache struct{ m sync.Map }

// Get returns the cached value for key.
func (c *Cache) Get(key string) (any, bool) { return c.m.Load(key) }

// Put stores v under key.
func (c *Cache) Put(key string, v any) { c.m.Store(key, v) }

// Drop forgets key (call it when a change invalidates what was cached).
func (c *Cache) Drop(key string) { c.m.Delete(key) }

// DropPrefix forgets every key starting with prefix.
func (c *Cache) DropPrefix(prefix string) {
	c.m.Range(func(k, _ any) bool {
		if s, ok := k.(string); ok && strings.HasPrefix(s, prefix) {
			c.m.Delete(k)
		}
		return true
	})
}

// Clear forgets everything: for a change that may invalidate anything
// cached, such as an arbitrary command having run.
func (c *Cache) Clear() { c.m.Clear() }
