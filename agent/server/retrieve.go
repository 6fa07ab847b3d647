package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/internal/puppetlog"
)

// Cached catalog statuses, as the report's cached_catalog_status says.
const (
	CacheNotUsed             = "not_used"
	CacheExplicitlyRequested = "explicitly_requested"
	CacheOnFailure           = "on_failure"
)

// Puppet's log levels as slog levels (notice sits between info and
// warning).
const (
	levelInfo    = slog.LevelInfo
	levelNotice  = puppetlog.LevelNotice
	levelWarning = slog.LevelWarn
	levelErr     = slog.LevelError
)

// MaxEnvironmentTries is how many times the catalog is requested again
// when it comes back from another environment than the one asked: as
// Puppet's agent, the fifth such answer ends the run.
const MaxEnvironmentTries = 4

// Options say how Retrieve chooses the catalog (the agent's settings).
type Options struct {
	// Environment is the agent's environment (Settings.Environment).
	Environment string
	// EnvironmentFromCLI: --environment was given on the command line;
	// the node is not asked for its environment (Puppet's set_by_cli).
	EnvironmentFromCLI bool
	// LastEnvironment is the server-specified environment of the last
	// run (last_run_summary: converged_environment when it differs from
	// initial_environment) when use_last_environment is on; when set, it
	// is used without a node request, as Puppet does.
	LastEnvironment string
	// StrictEnvironmentMode: never leave Environment; a catalog from
	// another environment is an error.
	StrictEnvironmentMode bool
	// UseCachedCatalog: run the cached catalog without asking the server
	// (when there is one).
	UseCachedCatalog bool
	// UseCacheOnFailure: when the catalog cannot be retrieved, run the
	// cached one of the same environment.
	UseCacheOnFailure bool
	// CacheDir is the client data directory (client_datadir): the cache
	// is CacheDir/catalog/CERTNAME.json. Empty: no cache.
	CacheDir string
	// Noop: a run that changes nothing does not replace the cache.
	Noop bool
	// RunningFailure, when it says true before a catalog request, is
	// Puppet's running failure (pluginsync failed, usecacheonfailure on):
	// the cached catalog is run instead of asking the server, when there
	// is one (cached_catalog_status on_failure); else the server is asked.
	RunningFailure func() bool
	// TransactionUUID is sent with the node and catalog requests.
	TransactionUUID string
	// Prepare readies the run for env (pluginsync, then the facts) and
	// returns the facts document for the catalog request (FactsJSON). It
	// is called for the first environment and again each time the server
	// moves the agent to another one. Required unless the cached catalog
	// is used.
	Prepare func(ctx context.Context, env string) (facts []byte, err error)
	// Log receives Puppet's lines (Info, Notice, Warning, Error); nil:
	// none.
	Log *slog.Logger
}

// Result is the catalog a run applies and where it came from.
type Result struct {
	Catalog *catalog.Catalog
	// Raw is the catalog's JSON, as sent or as cached.
	Raw []byte
	// Environment is the environment the run converged on.
	Environment string
	// CachedCatalogStatus is not_used, explicitly_requested or on_failure.
	CachedCatalogStatus string
	// Cached: the catalog came from the cache (CachedCatalogStatus says why).
	Cached bool
	// NodeRetrieval and CatalogRetrieval are the time spent on the node
	// request and on the catalog requests (the report's node_retrieval
	// and part of config_retrieval).
	NodeRetrieval, CatalogRetrieval time.Duration
	// Tries is the number of catalog requests made.
	Tries int
}

// ErrNoCatalog is wrapped by Retrieve's every error: no catalog can be
// run (the request failed and no cached catalog stood in: Puppet's
// "Could not retrieve catalog; skipping run"; the environment did not
// converge; ...).
var ErrNoCatalog = errors.New("Could not retrieve catalog; skipping run")

// Retrieve chooses and gets the catalog a run applies, as Puppet's agent
// does (package doc), and caches a catalog the server sent (unless
// Noop). Every line Puppet's agent logs on the way is logged to
// o.Log, the failure included: the caller need not log the error again.
// The error wraps ErrNoCatalog and the cause (a *ConnectionError, an
// *HTTPError, ErrBadCatalog, or Prepare's error) for the exit code and
// the report; with it, the Result (when not nil) has no catalog but says
// the environment the run had reached and the time spent, for the
// report.
func (c *Client) Retrieve(ctx context.Context, o Options) (*Result, error) {
	log := o.Log
	if log == nil {
		log = slog.New(discard{})
	}
	logf := func(level slog.Level, format string, args ...any) {
		log.Log(ctx, level, fmt.Sprintf(format, args...))
	}
	env := o.Environment
	if env == "" {
		env = "production"
	}
	res := &Result{CachedCatalogStatus: CacheNotUsed}

	if o.UseCachedCatalog && o.CacheDir != "" {
		cat, raw, err := LoadCache(o.CacheDir, c.certname)
		switch {
		case err == nil:
			if cat.Environment != "" && cat.Environment != env {
				if o.StrictEnvironmentMode {
					err := fmt.Errorf("Not using catalog because its environment '%s' does not match agent specified environment '%s' and strict_environment_mode is set", cat.Environment, env)
					logf(levelErr, "%v", err)
					return nil, fmt.Errorf("%w: %w", ErrNoCatalog, err)
				}
				logf(levelNotice, "Local environment: '%s' doesn't match the environment of the cached catalog '%s', switching agent to '%s'.", env, cat.Environment, cat.Environment)
				env = cat.Environment
			}
			logf(levelInfo, "Using cached catalog from environment '%s'", cat.Environment)
			res.Catalog, res.Raw, res.Environment, res.Cached = cat, raw, env, true
			res.CachedCatalogStatus = CacheExplicitlyRequested
			return res, nil
		case !errors.Is(err, ErrNoCache):
			logf(levelErr, "Could not retrieve catalog from cache: %v", err)
		}
	}
	if o.Prepare == nil {
		return nil, fmt.Errorf("%w: no facts for the catalog request (Options.Prepare)", ErrNoCatalog)
	}

	switch {
	case o.EnvironmentFromCLI || o.StrictEnvironmentMode:
	case o.LastEnvironment != "":
		env = o.LastEnvironment
	default:
		start := time.Now()
		nodeEnv, err := c.Node(ctx, env, nil, o.TransactionUUID)
		res.NodeRetrieval = time.Since(start)
		if err != nil {
			if ctx.Err() != nil {
				res.Environment = env
				return res, fmt.Errorf("%w: %w", ErrNoCatalog, ctx.Err())
			}
			logf(levelWarning, "Unable to fetch my node definition, but the agent run will continue:")
			logf(levelWarning, "%v", err)
		} else {
			if nodeEnv != env {
				logf(levelNotice, "Local environment: '%s' doesn't match server specified node environment '%s', switching agent to '%s'.", env, nodeEnv, nodeEnv)
			}
			env = nodeEnv
		}
	}
	logf(levelInfo, "Using environment '%s'", env)

	fail := func(err error) (*Result, error) {
		logf(levelErr, "%v", err)
		res.Environment = env
		return res, fmt.Errorf("%w: %w", ErrNoCatalog, err)
	}
	facts, err := o.Prepare(ctx, env)
	if err != nil {
		return fail(err)
	}
	cat, raw, err := c.fetch(ctx, o, env, facts, res, logf)
	if err != nil {
		res.Environment = env
		return res, err
	}
	if o.StrictEnvironmentMode && cat.Environment != env {
		return fail(fmt.Errorf("Not using catalog because its environment '%s' does not match agent specified environment '%s' and strict_environment_mode is set", cat.Environment, env))
	}
	for tries := 0; cat.Environment != "" && cat.Environment != env; tries++ {
		if tries >= MaxEnvironmentTries {
			return fail(fmt.Errorf("Catalog environment didn't stabilize after %d fetches, aborting run", tries))
		}
		logf(levelNotice, "Local environment: '%s' doesn't match server specified environment '%s', restarting agent run with environment '%s'", env, cat.Environment, cat.Environment)
		env = cat.Environment
		if facts, err = o.Prepare(ctx, env); err != nil {
			return fail(err)
		}
		if cat, raw, err = c.fetch(ctx, o, env, facts, res, logf); err != nil {
			res.Environment = env
			return res, err
		}
	}
	res.Catalog, res.Raw, res.Environment = cat, raw, env
	if !res.Cached && !o.Noop && o.CacheDir != "" {
		logf(levelInfo, "Caching catalog for %s", c.certname)
		if err := SaveCache(o.CacheDir, c.certname, raw); err != nil {
			logf(levelErr, "Could not save catalog %s: %v", c.certname, err)
		}
	}
	return res, nil
}

// fetch is one catalog request with Puppet's fallback to the cache
// (configurer.rb retrieve_catalog).
func (c *Client) fetch(ctx context.Context, o Options, env string, facts []byte, res *Result, logf func(slog.Level, string, ...any)) (*catalog.Catalog, []byte, error) {
	if o.RunningFailure != nil && o.CacheDir != "" && o.RunningFailure() {
		cached, cachedRaw, cerr := LoadCache(o.CacheDir, c.certname)
		if cerr == nil {
			logf(levelInfo, "Using cached catalog from environment '%s'", cached.Environment)
			res.Cached, res.CachedCatalogStatus = true, CacheOnFailure
			return cached, cachedRaw, nil
		}
		if !errors.Is(cerr, ErrNoCache) {
			logf(levelErr, "Could not retrieve catalog from cache: %v", cerr)
		}
	}
	start := time.Now()
	res.Tries++
	cat, raw, err := c.Catalog(ctx, env, facts, o.TransactionUUID)
	res.CatalogRetrieval += time.Since(start)
	if err == nil {
		res.Cached, res.CachedCatalogStatus = false, CacheNotUsed
		return cat, raw, nil
	}
	logf(levelErr, "Could not retrieve catalog from remote server: %v", err)
	if ctx.Err() != nil || !o.UseCacheOnFailure || o.CacheDir == "" {
		if !o.UseCacheOnFailure {
			logf(levelWarning, "Not using cache on failed catalog")
		}
		logf(levelErr, "%v", ErrNoCatalog)
		return nil, nil, fmt.Errorf("%w: %w", ErrNoCatalog, err)
	}
	cached, cachedRaw, cerr := LoadCache(o.CacheDir, c.certname)
	if cerr != nil {
		if !errors.Is(cerr, ErrNoCache) {
			logf(levelErr, "Could not retrieve catalog from cache: %v", cerr)
		}
		logf(levelErr, "%v", ErrNoCatalog)
		return nil, nil, fmt.Errorf("%w: %w", ErrNoCatalog, err)
	}
	if cached.Environment != env {
		logf(levelErr, "Not using cached catalog because its environment '%s' does not match '%s'", cached.Environment, env)
		logf(levelErr, "%v", ErrNoCatalog)
		return nil, nil, fmt.Errorf("%w: %w", ErrNoCatalog, err)
	}
	logf(levelInfo, "Using cached catalog from environment '%s'", cached.Environment)
	res.Cached, res.CachedCatalogStatus = true, CacheOnFailure
	return cached, cachedRaw, nil
}

type discard struct{}

func (discard) Enabled(context.Context, slog.Level) bool  { return false }
func (discard) Handle(context.Context, slog.Record) error { return nil }
func (d discard) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discard) WithGroup(string) slog.Handler           { return d }
