package applier

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/pippet/pippet/applier/source"
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
	// StateDir holds pippet's own state (the filebucket); NewEngine sets
	// DefaultStateDir() when empty.
	StateDir string
	// CAFile, when set, is the PEM bundle HTTPS sources are verified against
	// instead of the system roots.
	CAFile string
	// HTTPTimeout bounds idle time in one HTTP or puppet:// source request
	// (0: 60s): connecting, the handshake, the wait for the headers and
	// every wait for more of the body, never the whole transfer.
	HTTPTimeout time.Duration
	// MaxSourceSize bounds the bytes one HTTP source may send (0: 4 GiB).
	MaxSourceSize int64
	// Puppet, when set, is how puppet:// sources reach a Puppet Server.
	Puppet *source.PuppetOptions
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
