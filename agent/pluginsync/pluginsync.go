// Package pluginsync brings a Puppet Server's plugins to the agent before
// it asks for its catalog, as Puppet's agent does: the `pluginfacts`
// mount (every module's facts.d) into Vardir/facts.d, then the `plugins`
// mount (every module's lib: types, providers, functions, custom facts)
// into Vardir/lib.
//
// Puppet syncs each mount by applying one file resource in a catalog of
// its own (Puppet::Configurer::Downloader): the destination directory
// with the mount as source, recurse, purge and force, links followed,
// no backup, never noop, owned by the agent's user. pluginsync does the
// same through pippet's engine and file type, so that what is copied,
// compared, purged and refused is the file type's one implementation:
// the server's file_metadatas lists each mount once; an entry whose
// checksum matches the local file costs nothing more (no file_content
// request, no write); a new or changed file is downloaded into a temp
// file beside it, fsynced and renamed over it; an entry the server no
// longer has is removed; nothing is written through a symbolic link
// swapped in below the destination. pluginfacts keep the server's modes
// (source_permissions use), plugins get the default ones (ignore), as
// in Puppet.
//
// The log is Puppet's: "Info: Retrieving pluginfacts", "Info: Retrieving
// plugin", then one notice per changed entry, named as the file resource
// Puppet generates for it ("/File[/var/cache/puppet/lib/facter/x.rb]/
// ensure: defined content as '{sha256}...'").
//
// The locales mount is not synced: Debian's Puppet 7 has disable_i18n
// true, so its agent does not sync it either (Options.Locales asks for it).
package pluginsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/internal/assemble"
	"github.com/pippet/pippet/protocol"
)

// DefaultIgnore is Puppet's pluginsignore: what is never synced.
var DefaultIgnore = []string{".svn", "CVS", ".git", ".hg"}

// Options say where plugins come from and go.
type Options struct {
	// Client carries the requests: the run's client, with the agent's
	// certificate.
	Client *http.Client
	// Server is the Puppet Server's base URL, https://HOST:PORT.
	Server string
	// Environment is the environment whose modules are synced (default
	// production).
	Environment string
	// Vardir is the agent's vardir: plugins go to Vardir/lib (Puppet's
	// plugindest, libdir), pluginfacts to Vardir/facts.d
	// (pluginfactdest), locales to Vardir/locales.
	Vardir string
	// Log receives Puppet's lines (Info: Retrieving plugin, the notices of
	// the changes); nil discards.
	Log *slog.Logger
	// Ignore are the names never synced (default DefaultIgnore).
	Ignore []string
	// Locales syncs the locales mount too, as Puppet does when
	// disable_i18n is false (Debian's default is true).
	Locales bool
	// Timeout bounds each wait for the server (default 60s).
	Timeout time.Duration
	// Checksum is the digest compared with the server's (Puppet's
	// digest_algorithm; default sha256).
	Checksum string
	// IgnoreErrors is Puppet's ignore_plugin_errors: a mount that fails
	// (an entry that could not be written) is logged and the next one is
	// synced, and Sync returns no error. Without it (Puppet's default)
	// the first failing mount ends the sync with the error.
	IgnoreErrors bool
}

// Result lists what a sync changed: the entries written or created
// (Changed) and those removed because the server no longer has them
// (Removed), by full path.
type Result struct{ Changed, Removed []string }

// mount is one of Puppet's downloads.
type mount struct {
	name, source, dest, perms string
	checksum                  string
	ignore                    []string
}

// Sync brings the environment's pluginfacts and plugins into the vardir.
// The error, when the server could not be read or an entry could not be
// written, is Puppet's "Failed to retrieve NAME: DETAIL"; the Result then
// still lists what was changed before.
func Sync(ctx context.Context, o Options) (*Result, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Vardir == "" || !filepath.IsAbs(o.Vardir) {
		return nil, fmt.Errorf("pluginsync: the vardir %q is not an absolute path", o.Vardir)
	}
	env := o.Environment
	if env == "" {
		env = "production"
	}
	host, port, err := splitServer(o.Server)
	if err != nil {
		return nil, err
	}
	ignore := o.Ignore
	if ignore == nil {
		ignore = DefaultIgnore
	}
	mounts := []mount{
		{name: "pluginfacts", source: "puppet:///pluginfacts", dest: filepath.Join(o.Vardir, "facts.d"), perms: "use", ignore: ignore},
		{name: "plugin", source: "puppet:///plugins", dest: filepath.Join(o.Vardir, "lib"), perms: "ignore", ignore: ignore},
	}
	if o.Locales {
		mounts = append(mounts, mount{name: "locales", source: "puppet:///locales", dest: filepath.Join(o.Vardir, "locales"),
			perms: "ignore", ignore: append(append([]string(nil), ignore...), "*.pot", "config.yaml")})
	}
	sum := o.Checksum
	if sum == "" {
		sum = source.SHA256
	}
	for i := range mounts {
		mounts[i].checksum = sum
	}
	if err := os.MkdirAll(o.Vardir, 0o750); err != nil {
		return nil, fmt.Errorf("pluginsync: %w", err)
	}

	reg := applier.NewRegistry()
	ft, ok := applier.Default.Lookup("file")
	if !ok {
		return nil, errors.New("pluginsync: the file type is not registered")
	}
	reg.Add(ft)
	eng := assemble.New(assemble.Config{
		Registry: reg,
		Facts:    applier.Facts{},
		// Log: none; the changes are logged as Puppet logs them, below.
		// backup is false: nothing goes to a filebucket.
		Options: applier.Options{StateDir: filepath.Join(o.Vardir, "clientbucket")},
		Source: &source.Options{
			HTTPTimeout: o.Timeout,
			Puppet:      &source.PuppetOptions{Server: host, Port: port, Environment: env, Client: o.Client},
		},
	}).Engine

	res := &Result{}
	for _, m := range mounts {
		if err := syncMount(ctx, eng, m, log, res); err != nil && (!o.IgnoreErrors || ctx.Err() != nil) {
			return res, err
		}
	}
	return res, nil
}

// syncMount applies the mount's file resource, as Puppet's Downloader.
func syncMount(ctx context.Context, eng *engine.Engine, m mount, log *slog.Logger, res *Result) error {
	log.Info("Retrieving " + m.name)
	// The destination itself is never followed: a link there (made by
	// whoever could write the vardir) would send the plugins elsewhere.
	if fi, err := os.Lstat(m.dest); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// Logged as the resource's failure is, whatever the caller does
		// with the error.
		log.Error("/File[" + m.dest + "]: Could not evaluate: " + m.dest + " is a symbolic link; not syncing through it")
		return fmt.Errorf("Failed to retrieve %s: %s is a symbolic link; not syncing through it", m.name, m.dest)
	}
	ignore := make([]any, len(m.ignore))
	for i, s := range m.ignore {
		ignore[i] = s
	}
	req := &protocol.Request{Type: "file", Title: m.dest, Params: map[string]any{
		"source":             m.source,
		"recurse":            "true",
		"links":              "follow",
		"source_permissions": m.perms,
		"purge":              true,
		"force":              true,
		"backup":             false,
		"noop":               false,
		"max_files":          int64(-1),
		"ignore":             ignore,
		"checksum":           m.checksum,
		"owner":              int64(os.Getuid()),
		"group":              int64(os.Getgid()),
	}}
	// The entries' lines wait for the directory's own (created), which
	// the engine reports once its Set is done: Puppet logs the parent
	// first.
	type line struct {
		level slog.Level
		text  string
	}
	var lines []line
	var changed []string
	var firstErr string
	var listErr error
	ctx = file.WithTreeObserver(ctx, func(c file.TreeChange) {
		if c.Listing {
			if listErr == nil {
				listErr = c.Err
			}
			return
		}
		text := "/File[" + c.Path + "]/" + c.Property + ": " + c.Message
		if c.Err != nil {
			text += ": " + c.Err.Error()
			if firstErr == "" {
				firstErr = c.Message + ": " + c.Err.Error()
			}
			lines = append(lines, line{slog.LevelError, text})
			return
		}
		lines = append(lines, line{applier.LevelNotice, text})
		if c.Property == "ensure" && c.Message == "removed" {
			res.Removed = append(res.Removed, c.Path)
		} else if n := len(changed); n == 0 || changed[n-1] != c.Path {
			changed = append(changed, c.Path)
		}
	})
	_, statErr := os.Lstat(m.dest)
	absent := errors.Is(statErr, os.ErrNotExist)
	r := eng.Apply(ctx, req)
	// The directory's own changes (created, its owner); its content's
	// event sums up the entries, whose lines follow. A directory created
	// whose entries then failed is created all the same (Puppet's
	// generated children fail on their own).
	for _, ev := range r.Events {
		if ev.Property == "content" {
			continue
		}
		if ev.Status != protocol.StatusSuccess {
			if fi, err := os.Lstat(m.dest); ev.Property != "ensure" || !absent || err != nil || !fi.IsDir() {
				continue
			}
			ev.Message = "created"
		}
		log.Log(ctx, applier.LevelNotice, "/File["+m.dest+"]/"+ev.Property+": "+ev.Message)
		if ev.Property == "ensure" {
			res.Changed = append(res.Changed, m.dest)
		}
	}
	res.Changed = append(res.Changed, changed...)
	for _, l := range lines {
		log.Log(ctx, l.level, l.text)
	}
	if listErr != nil && firstErr == "" {
		// The server could not list the mount (an error answer, no
		// answer): Puppet's File fails to generate its children, which
		// its transaction logs without failing the resource; the sync goes
		// on with the next mount.
		log.Error("/File[" + m.dest + "]: Failed to generate additional resources using 'eval_generate': " + listErr.Error())
		return nil
	}
	if r.Failed || r.Error {
		detail := firstErr
		if detail == "" {
			detail = r.Exception
		}
		if detail == "" {
			detail = "unknown"
		}
		return fmt.Errorf("Failed to retrieve %s: %s", m.name, detail)
	}
	return nil
}

// splitServer takes https://HOST:PORT apart (port 8140 when none).
func splitServer(s string) (string, int, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", 0, fmt.Errorf("pluginsync: the server %q is not https://HOST:PORT", s)
	}
	host, p := u.Hostname(), u.Port()
	if p == "" {
		return host, 8140, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("pluginsync: the server %q has no valid port", s)
	}
	return host, port, nil
}
