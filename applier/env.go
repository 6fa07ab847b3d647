package applier

import (
	"log/slog"
)

// LevelNotice is Puppet's notice level, between info and warning.
const LevelNotice = slog.Level(2)

// Facts are what is known about this machine, read once per process:
// os.family, os.name, os.release.full, os.release.major, kernel,
// kernelrelease, architecture, hostname, fqdn, domain (and the legacy flat
// names osfamily, operatingsystem, operatingsystemrelease).
type Facts map[string]string

// Options are the process-wide settings that types and providers read.
type Options struct {
	// Noop: evaluate every resource without changing anything.
	Noop bool
	// StateDir holds pippet's own state (the filebucket). Default /var/lib/pippet.
	StateDir string
	// CAFile, when set, is the PEM bundle HTTPS sources are verified against
	// instead of the system roots.
	CAFile string
	// HTTPTimeout bounds one HTTP source request (0: 60s).
	HTTPTimeoutSeconds int
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
	// Dirs makes changes to directory entries durable (see DirSync): a
	// provider that renames, links, unlinks or makes an entry calls
	// Dirs.Mark(parent). nil is immediate mode: each Mark fsyncs at once.
	// The receiver sets a deferred one and flushes it.
	Dirs *DirSync
}
