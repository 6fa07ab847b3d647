// Package agent is one run of Puppet's agent against a Puppet Server,
// with the catalog applied by pippet's engine: what `puppet agent
// --onetime --no-daemonize` does, in Puppet's order (its configurer.rb
// and agent.rb), each step being a package of its own:
//
//  1. the agent is not disabled (`--disable`: agent/config's lock file);
//     a splay when the settings ask for one;
//  2. the certificates (agent/ssl): the ssldir made complete, as the
//     agent's bootstrap does, and the TLS configuration of every request;
//  3. the run lock (agent/config): one run at a time;
//  4. the catalog (agent/server): the node request for the server's
//     environment, then, for that environment, pluginsync
//     (agent/pluginsync) and the facts (agent/facts), then the catalog
//     request; the catalog cached, and the cache used when the server
//     cannot give one and usecacheonfailure says so;
//  5. the apply (internal/assemble, as `receiver apply`): native types
//     by the engine, the others by Puppet, which finds the types
//     pluginsync brought in VARDIR/lib;
//  6. the report (package report): last_run_summary.yaml, the report sent
//     to the server, last_run_report.yaml.
//
// Each phase is timed for the report's time metrics, by Puppet's names
// (startup_time, node_retrieval, plugin_sync, fact_generation,
// convert_catalog, config_retrieval, transaction_evaluation,
// catalog_application, total); the report's time is when the run began,
// and total the time from then to the report. A run that cannot get a
// catalog applies nothing and still sends a failed report, as Puppet's
// agent does. Run's result is the
// process's exit status: 1 when the run could not happen (disabled,
// locked, no certificate, no catalog), else 0, or with detailed exit
// codes 2 (changes), 4 (failures) or 6 (both).
//
// Loop (daemon.go) runs Run every runinterval, as the agent's daemon.
package agent

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/agent/config"
	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/agent/pluginsync"
	"github.com/pippet/pippet/agent/server"
	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/internal/assemble"
	"github.com/pippet/pippet/report"
)

// Exit statuses of a run.
const (
	ExitOK = 0
	// ExitFailed: the run could not happen (disabled, locked, no
	// certificate, no catalog), as Puppet's agent exits 1.
	ExitFailed = 1
	// ExitChanged and ExitFailures are the detailed exit codes' bits.
	ExitChanged  = 2
	ExitFailures = 4
)

// Options are what the command line gives beyond Puppet's settings.
type Options struct {
	// Log prints the run's lines in Puppet's format (puppetlog); nil
	// prints nothing. Every line at notice and above also goes into the
	// report.
	Log slog.Handler
	// Level is the least severe level Log prints; the fallback's Puppet
	// logs at it too.
	Level slog.Level
	// DetailedExitcodes: exit 2, 4 or 6 as the report says.
	DetailedExitcodes bool
	// EnvironmentFromCLI: --environment was given on the command line:
	// the node is not asked for its environment (Puppet's set_by_cli).
	EnvironmentFromCLI bool
	// StateDir is pippet's own state (the filebucket, the schedules'
	// last runs); "" is applier.DefaultStateDir().
	StateDir string
	// Fallback and Delegate: the receiver's --fallback and --delegate.
	Fallback string
	Delegate []string
	// JobID is sent in the report (Puppet's --job-id).
	JobID string
	// Start is when the process started (the report's startup_time, up
	// to the run's beginning: ProcessStart); zero: when Run is called.
	Start time.Time
	// NoSplay: do not splay even when the settings say so (the daemon's
	// runs after its first, `--test`).
	NoSplay bool
	// kept is the daemon's Puppet kept between runs
	// (--puppet-between-runs keep); nil: the run starts its own, when it
	// needs one, and stops it when it ends.
	kept *keptPuppet
}

// Run does one agent run and returns the exit status.
func Run(ctx context.Context, s *config.Settings, o Options) int {
	r := newRun(s, o)
	return r.run(ctx)
}

// Timing names, as Puppet's report metrics call them.
const (
	TimeStartup            = "startup_time"
	TimeFactGeneration     = "fact_generation"
	TimePluginSync         = "plugin_sync"
	TimeNodeRetrieval      = "node_retrieval"
	TimeConfigRetrieval    = "config_retrieval"
	TimeCatalogApplication = "catalog_application"
	// TimeConvertCatalog and TimeTransactionEvaluation are the apply's
	// (assemble.Options.Timings).
	TimeConvertCatalog        = "convert_catalog"
	TimeTransactionEvaluation = "transaction_evaluation"
	TimeTotal                 = "total"
	TimeResubmitFacts         = "resubmit_facts"
)

// run is one run's state.
type run struct {
	s       *config.Settings
	o       Options
	logh    *catalog.Log
	log     *slog.Logger
	uuid    string
	start   time.Time
	timings map[string]time.Duration
	// codeID is the applied catalog's code_id (static catalogs).
	codeID string
	// puppet is the run's Puppet (customfacts.go), made when the run
	// configures and stopped when it ends; puppetErr says why there is
	// none when there should be one (the apply then fails). ahead: the
	// custom facts it evaluates during pluginsync.
	puppet    *assemble.Puppet
	puppetErr error
	ahead     *ahead
	// coreFacts receives the core facts gathered while the run asks the
	// server for its environment and plugins (coreAhead), for the first
	// facts of the run; nil once taken.
	coreFacts chan *facts.CoreFacts
	// pluginFailure: pluginsync failed and usecacheonfailure is on:
	// Puppet's running failure (the cached catalog runs, when there is
	// one).
	pluginFailure bool
	// host and port: the server chosen from server_list (servers.go);
	// serverUsed is the report's server_used; serverFailed: none
	// answered, the run goes on without pluginsync for the cache.
	host         string
	port         int
	serverUsed   string
	serverFailed bool
}

func newRun(s *config.Settings, o Options) *run {
	start := time.Now()
	if o.Start.IsZero() {
		o.Start = start
	}
	if o.StateDir == "" {
		o.StateDir = applier.DefaultStateDir()
	}
	logh := catalog.NewLog(o.Log)
	if o.Level <= slog.LevelInfo {
		// The report keeps what the console shows, down to info (-t,
		// --verbose), as Puppet's.
		logh.Keep(slog.LevelInfo)
	}
	return &run{
		s: s, o: o, logh: logh, log: slog.New(logh),
		uuid: newUUID(), start: start,
		timings: map[string]time.Duration{TimeStartup: start.Sub(o.Start)},
	}
}

const client = "Puppet configuration client"

func (r *run) run(ctx context.Context) int {
	if err := MakeDirs(r.s); err != nil {
		r.log.Error(fmt.Sprintf("Could not run %s: %v", client, err))
		return ExitFailed
	}
	if r.disabled(ctx) {
		return ExitFailed
	}
	if r.s.Splay && !r.o.NoSplay && r.s.Splaylimit > 0 {
		if err := r.splay(ctx); err != nil {
			return ExitFailed
		}
		if r.disabled(ctx) {
			return ExitFailed
		}
	}
	if len(r.s.ServerList) > 0 && !r.selectServer(ctx) {
		return ExitFailed
	}
	caServer, caPort := r.caAddr()
	tlsCfg, err := ssl.Bootstrap(ctx, ssl.Options{
		SSLDir: r.s.SSLDir, Certname: r.s.Certname,
		CAServer: caServer, CAPort: caPort,
		Waitforcert: r.s.Waitforcert, Keylength: r.s.Keylength,
		CertificateRevocation: r.s.CertificateRevocation,
		CSRAttributes:         r.s.CSRAttributes, DNSAltNames: r.s.DNSAltNames,
		Timeout: r.s.HTTPConnectTimeout,
		Log:     r.log,
	})
	if err != nil {
		r.log.Error(err.Error())
		return ExitFailed
	}
	unlock, err := config.LockWait(ctx, r.s.CatalogRunLockfile, r.s.Waitforlock, r.s.Maxwaitforlock, func(*config.LockedError) {
		r.log.Info(msgWaitingForLock)
		r.log.Info(fmt.Sprintf("Will try again in %d seconds.", int64(r.s.Waitforlock/time.Second)))
	})
	if err != nil {
		var locked *config.LockedError
		switch {
		case errors.As(err, &locked) && locked.TimedOut:
			r.notice(ctx, msgLockTimedOut)
		case errors.As(err, &locked):
			r.notice(ctx, fmt.Sprintf("Run of %s already in progress; skipping  (%s exists)", client, r.s.CatalogRunLockfile))
		default:
			r.log.Error(fmt.Sprintf("Could not run %s: %v", client, err))
		}
		return ExitFailed
	}
	defer unlock()
	if r.disabled(ctx) {
		return ExitFailed
	}
	if r.s.Runtimeout <= 0 {
		return r.configure(ctx, tlsCfg)
	}
	// runtimeout bounds the run as Puppet's agent: what is under way
	// stops, the report still goes out (finish), and the run fails.
	rctx, cancel := context.WithTimeout(ctx, r.s.Runtimeout)
	defer cancel()
	code := r.configure(rctx, tlsCfg)
	if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		r.log.Error(fmt.Sprintf(msgRuntimeExceeded, client, int64(r.s.Runtimeout/time.Second)))
		return ExitFailed
	}
	return code
}

// MakeDirs makes the agent's directories that are missing, with Puppet's
// modes, as Puppet's settings do before a run or a --disable (vardir,
// statedir, publicdir, client_datadir, and where pluginsync writes:
// libdir, pluginfactdest).
func MakeDirs(s *config.Settings) error {
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{
		{s.Vardir, 0o755}, {s.Statedir, os.ModeSticky | 0o755}, {s.Publicdir, 0o755}, {s.ClientDataDir, 0o750},
		{s.Libdir, 0o755}, {s.PluginFactDest, 0o755},
	} {
		if d.path == "" {
			continue
		}
		if _, err := os.Stat(d.path); err == nil {
			continue
		}
		if err := os.MkdirAll(d.path, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) notice(ctx context.Context, msg string) {
	r.log.Log(ctx, applier.LevelNotice, msg)
}

// disabled says (and logs, as Puppet) that the agent is disabled.
func (r *run) disabled(ctx context.Context) bool {
	msg, disabled, err := config.Disabled(r.s.DisabledLockfile)
	if err != nil {
		r.log.Error(fmt.Sprintf("Could not run %s: %v", client, err))
		return true
	}
	if disabled {
		r.notice(ctx, fmt.Sprintf("Skipping run of %s; administratively disabled (Reason: '%s');\nUse 'puppet agent --enable' to re-enable.", client, msg))
	}
	return disabled
}

// splay sleeps a random time up to splaylimit, as Puppet's splay.
func (r *run) splay(ctx context.Context) error {
	secs := rand.Int64N(int64(r.s.Splaylimit/time.Second) + 1)
	r.log.Info(fmt.Sprintf("Sleeping for %d seconds (splay is enabled)", secs))
	t := time.NewTimer(time.Duration(secs) * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// serverAddr is the server of the run: the one chosen from server_list
// (selectServer), else server and serverport.
func (r *run) serverAddr() (string, int) {
	if r.host != "" {
		return r.host, r.port
	}
	if len(r.s.ServerList) > 0 {
		hp := r.s.ServerList[0]
		port := hp.Port
		if port == 0 {
			port = r.s.ServerPort
		}
		return hp.Host, port
	}
	return r.s.Server, r.s.ServerPort
}

func baseURL(host string, port int) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// configure is Puppet's configurer run: the catalog, the apply, the
// report.
func (r *run) configure(ctx context.Context, tlsCfg *tls.Config) int {
	hc := server.HTTPClient(tlsCfg, r.s.HTTPConnectTimeout, r.s.HTTPReadTimeout)
	defer hc.CloseIdleConnections()
	host, port := r.serverAddr()
	base := baseURL(host, port)
	c := server.New(hc, base, r.s.Certname)
	// Puppet for the types pippet lacks and the custom facts starts now,
	// in the background of the requests, when the last run needed it;
	// it evaluates the custom facts while pluginsync runs.
	if r.o.kept != nil {
		// A daemon's Puppet kept between runs (keep.go).
		r.puppet, r.puppetErr = r.o.kept.puppet(ctx, r.puppetConfig(), r.s.ConfFile)
		defer r.o.kept.release()
	} else {
		r.puppet, r.puppetErr = assemble.NewPuppet(r.puppetConfig())
		defer r.puppet.Close(ctx)
	}
	r.startFallback(ctx)
	r.evaluateAhead(ctx, r.puppet.Fallback())
	r.coreAhead(ctx)
	defer func() {
		if r.ahead != nil {
			r.ahead.cancel() // never asked for: the run ended before its facts
		}
	}()
	first := true
	res, err := c.Retrieve(ctx, server.Options{
		Environment:           r.s.Environment,
		EnvironmentFromCLI:    r.o.EnvironmentFromCLI,
		LastEnvironment:       r.lastEnvironment(),
		StrictEnvironmentMode: r.s.StrictEnvironmentMode,
		UseCachedCatalog:      r.s.UseCachedCatalog,
		UseCacheOnFailure:     r.s.UseCacheOnFailure,
		CacheDir:              r.s.ClientDataDir,
		Noop:                  r.s.Noop,
		TransactionUUID:       r.uuid,
		RunningFailure:        func() bool { return r.pluginFailure || r.serverFailed },
		Log:                   r.log,
		Prepare: func(ctx context.Context, env string) ([]byte, error) {
			// As Puppet, only the first environment is checked before its
			// pluginsync.
			check := first
			first = false
			return r.prepare(ctx, hc, base, env, check)
		},
	})
	env := r.s.Environment
	status := server.CacheNotUsed
	if res != nil {
		env, status = res.Environment, res.CachedCatalogStatus
		if res.NodeRetrieval > 0 {
			// Only when the node was asked for (not with the last run's
			// environment, as Puppet's use_last_environment).
			r.timings[TimeNodeRetrieval] = res.NodeRetrieval
		}
		r.timings[TimeConfigRetrieval] = res.CatalogRetrieval
	}
	if err != nil {
		// Retrieve logged why ("Could not retrieve catalog; skipping run").
		r.finish(ctx, hc, nil, env, status)
		return ExitFailed
	}
	r.codeID = res.Catalog.CodeID
	static, err := res.Catalog.Static()
	if err != nil {
		r.log.Error(fmt.Sprintf("Failed to apply catalog: %v", err))
		r.finish(ctx, hc, nil, env, status)
		return ExitFailed
	}
	if !r.command(ctx, "prerun_command") {
		r.command(ctx, "postrun_command")
		r.finish(ctx, hc, nil, env, status)
		return ExitFailed
	}
	applyStart := time.Now()
	rep, err := r.apply(ctx, res.Catalog, source.Options{
		Puppet: &source.PuppetOptions{Client: hc, Server: host, Port: port, Environment: env},
		Static: static,
	})
	// As Puppet's, the catalog's conversion (convert_catalog) is a phase
	// of its own, before the application.
	r.timings[TimeCatalogApplication] = time.Since(applyStart) - r.timings[TimeConvertCatalog]
	if err != nil {
		r.log.Error(fmt.Sprintf("Failed to apply catalog: %v", err))
		r.command(ctx, "postrun_command")
		r.finish(ctx, hc, nil, env, status)
		return ExitFailed
	}
	if !r.command(ctx, "postrun_command") {
		r.finish(ctx, hc, rep, env, status)
		return ExitFailed
	}
	r.finish(ctx, hc, rep, env, status)
	if r.o.DetailedExitcodes {
		return rep.ExitCode()
	}
	return ExitOK
}

// apply applies cat with the run's Puppet, its sources as src says.
func (r *run) apply(ctx context.Context, cat *catalog.Catalog, src source.Options) (*report.Report, error) {
	if r.puppetErr != nil {
		return nil, r.puppetErr
	}
	return assemble.Apply(ctx, cat, assemble.Options{
		Noop: r.s.Noop, Tags: r.s.Tags, SkipTags: r.s.SkipTags,
		// Puppet's show_diff: puppet.conf's, --show_diff, or -t's.
		ShowDiff: r.s.ShowDiff,
		StateDir: r.o.StateDir,
		// pippet's, not Puppet's transactionstore.yaml: its own format.
		TransactionStore: filepath.Join(r.o.StateDir, "transactionstore.json"),
		Log:              r.logh, Source: src, Puppet: r.puppet,
		Timings: r.timings,
	})
}

// puppetConfig is the run's Puppet: the agent's libdir, where pluginsync
// put the plugins, and its settings.
func (r *run) puppetConfig() assemble.PuppetConfig {
	return assemble.PuppetConfig{
		Fallback: r.o.Fallback, Delegate: r.o.Delegate,
		LibDir: r.libdir(),
		// What the custom facts Puppet evaluates, and its providers,
		// may ask of the agent's settings (stdlib's puppet_vardir,
		// puppet_server, puppet_environmentpath).
		// and Puppet's show_diff as the native types have it.
		Settings: append(r.puppetSettings(), assemble.ShowDiffSetting(r.s.ShowDiff)...),
		Noop:     r.s.Noop, Level: r.o.Level, Log: r.logh,
	}
}

// startFallback starts the run's Puppet ahead, in the background, when
// the last pluginsync left custom facts pippet does not resolve
// natively, or the cached catalog, the last
// run's, has a resource pippet hands to Puppet: the run to come most
// likely needs it too.
func (r *run) startFallback(ctx context.Context) {
	if r.puppet.Fallback() == nil {
		return
	}
	if facts.NeedsFacter(r.gatherOptions()) {
		r.log.Debug("Starting Puppet ahead for the custom facts")
		r.puppet.Start(ctx)
		return
	}
	if r.s.ClientDataDir == "" {
		return
	}
	cat, _, err := server.LoadCache(r.s.ClientDataDir, r.s.Certname)
	if err != nil {
		return
	}
	for _, res := range cat.Resources {
		if !res.IsContainer() && !r.puppet.Native(applier.Default, res.Type) {
			r.log.Debug("Starting Puppet ahead for " + res.Type + " (the last catalog had one)")
			r.puppet.Start(ctx)
			return
		}
	}
}

// environmentExists asks the server whether it has env, as Puppet's agent
// does (a file_metadatas request for the plugins mount, not recursive):
// false on a 404; an error when the server could not say.
func environmentExists(ctx context.Context, hc *http.Client, base, env string) (bool, error) {
	u := base + "/puppet/v3/file_metadatas/plugins?" + url.Values{
		"environment": {env}, "recurse": {"false"}, "links": {"manage"}, "checksum_type": {"sha256"},
		"source_permissions": {"ignore"},
	}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := server.Send(hc, req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode/100 == 2:
		return true, nil
	}
	return false, fmt.Errorf("Error %d on SERVER: %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// command runs the prerun_command or postrun_command setting, when set,
// as Puppet does around the apply: false (logged) when it fails, and the
// run then fails.
func (r *run) command(ctx context.Context, setting string) bool {
	line := strings.TrimSpace(r.s.Values[setting])
	if line == "" {
		return true
	}
	if ctx.Err() != nil {
		// The run was cut short (runtimeout): postrun_command still
		// runs, as in Puppet, bounded as the report.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), r.reportTimeout())
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Dir = "/"
	out := &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	if err == nil {
		return true
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.log.Error(fmt.Sprintf("Could not run command from %s: Execution of '%s' returned %d: %s", setting, line, ee.ExitCode(), strings.TrimSpace(out.String())))
	} else {
		r.log.Error(fmt.Sprintf("Could not run command from %s: %v", setting, err))
	}
	return false
}

// capped keeps the first max bytes written to it and takes the rest
// unread, so that a command's huge output bounds nothing but the log
// line.
type capped struct {
	max int
	buf []byte
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) String() string { return string(c.buf) }

// prepare readies the run for env and returns the facts to send:
// pluginsync (its failure is logged, the run goes on, as Puppet's), then
// the facts (a failure ends the run). check: first ask whether the
// server has env, as Puppet's agent does before its first pluginsync.
func (r *run) prepare(ctx context.Context, hc *http.Client, base, env string, check bool) ([]byte, error) {
	sync := r.s.Pluginsync && !r.serverFailed
	if sync && check {
		ok, err := environmentExists(ctx, hc, base, env)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.log.Error(err.Error())
			sync = false
		case !ok && r.s.StrictEnvironmentMode:
			return nil, fmt.Errorf("Environment '%s' not found on server, aborting run.", env)
		case !ok:
			r.notice(ctx, fmt.Sprintf("Environment '%s' not found on server, skipping initial pluginsync.", env))
			sync = false
		}
	}
	// What pluginsync changed: custom facts evaluated before it are
	// evaluated again (synced.changed).
	var synced synced
	if sync {
		start := time.Now()
		ignore := r.s.Values["ignore_plugin_errors"] == "true"
		res, err := pluginsync.Sync(ctx, pluginsync.Options{
			Client: hc, Server: base, Environment: env, Vardir: r.s.Vardir, Log: r.log,
			IgnoreErrors: ignore,
		})
		r.timings[TimePluginSync] += time.Since(start)
		synced = syncedOf(res, err, r.factDirs())
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case r.s.UseCacheOnFailure:
			// Puppet's running failure: the entries' errors are logged;
			// the run goes on with the cached catalog, if any.
			r.pluginFailure = true
		default:
			// Without usecacheonfailure (--test) the run ends, as
			// Puppet's (ignore_plugin_errors false, its default).
			return nil, fmt.Errorf("Failed to apply catalog: %w", err)
		}
	}
	start := time.Now()
	fo := r.gatherOptions()
	fo.Evaluate = r.evaluator(ctx, synced)
	if c := r.coreFacts; c != nil {
		// The first facts of the run: the core ones were gathered while
		// the server answered.
		r.coreFacts = nil
		select {
		case fo.Core = <-c:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	for _, dir := range fo.CustomDirs {
		// Puppet says so for each fact directory there is.
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			r.log.Info("Loading facts")
		}
	}
	f, errs := facts.Gather(ctx, fo)
	for _, err := range errs {
		var skipped *facts.SkippedError
		if facts.IsWarning(err) {
			r.log.Warn("Facter: " + err.Error())
			continue
		}
		if errors.As(err, &skipped) {
			// The run goes on without them: a warning, in the words of
			// Facter's own for what it cannot load.
			r.log.Warn(fmt.Sprintf("Facter: Could not evaluate the custom facts %s: %s; the catalog is compiled without them",
				strings.Join(skipped.Facts, ", "), skipped.Reason))
			continue
		}
		r.log.Error("Facter: " + err.Error())
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	b, err := server.FactsJSON(r.s.Certname, f, r.factsOptions())
	r.timings[TimeFactGeneration] += time.Since(start)
	return b, err
}

// factsOptions are what the run adds to the facts it sends.
func (r *run) factsOptions() server.FactsOptions {
	o := server.FactsOptions{Noop: r.s.Noop, TTL: r.s.Runinterval}
	if r.s.EnvironmentSet {
		o.AgentSpecifiedEnvironment = r.s.Environment
	}
	return o
}

// finish ends the run as Puppet's send_report: the summary, the report
// sent to the server (when report is on), the report kept locally. rep
// nil: the run applied no catalog; its report says it failed.
func (r *run) finish(ctx context.Context, hc *http.Client, rep *report.Report, env, cacheStatus string) {
	if r.s.ResubmitFacts {
		// As Puppet, after the apply whatever came of it, before the
		// report; bounded as the report (the run's time may be up).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.reportTimeout())
		r.resubmitFacts(rctx, hc, env)
		cancel()
	}
	if rep == nil {
		rep = &report.Report{Incomplete: true, Logs: r.logh.Take()}
	}
	// The report's time is when the run began, as Puppet's (its report
	// is made at the start of the run), not when the catalog arrived:
	// PuppetDB takes time + the total time as the run's end.
	rep.Time = r.start
	rep.Host = r.s.Certname
	rep.Environment = env
	rep.TransactionUUID = r.uuid
	if r.codeID != "" {
		rep.CodeID = r.codeID
	}
	rep.Noop = r.s.Noop
	r.timings[TimeTotal] = time.Since(r.start)
	rep.Duration = r.timings[TimeTotal]
	r.log.Debug("Run times: " + formatTimings(r.timings))
	rep.Meta = &report.Meta{
		CachedCatalogStatus: cacheStatus, JobID: r.o.JobID,
		InitialEnvironment: r.s.Environment, Timings: r.timings,
		ServerUsed: r.serverUsed,
	}
	// The report goes out even when the run was interrupted: a bounded
	// context of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.reportTimeout())
	defer cancel()
	// As Puppet's send_report: the summary, the report to the server,
	// the report on disk.
	if err := report.WriteFiles(rep, "", r.s.LastRunFile); err != nil {
		r.log.Error(fmt.Sprintf("Could not save last run local report: %v", err))
	}
	if r.s.Report {
		host, port := r.reportAddr()
		body, err := rep.MarshalJSON()
		if err == nil {
			err = report.Submit(ctx, hc, baseURL(host, port), r.s.Certname, env, body, rep.Version())
		}
		if err != nil {
			r.log.Error(fmt.Sprintf("Could not send report: %v", err))
		}
	}
	if err := report.WriteFiles(rep, r.s.LastRunReport, ""); err != nil {
		r.log.Error(fmt.Sprintf("Could not save last run local report: %v", err))
	}
}

// lastEnvironment is the environment to run in without a node request,
// as Puppet's agent reads it from last_run_summary.yaml when
// use_last_environment is on: the last run's converged environment when
// it differs from the one that run started with (the server's), else the
// configured one; "" (ask the node) when there is no agent run's summary.
func (r *run) lastEnvironment() string {
	if r.s.Values["use_last_environment"] == "false" || r.s.LastRunFile == "" {
		return ""
	}
	// A FIFO there would stall the agent before its run: never waited on.
	b, err := sysfile.ReadRegular(r.s.LastRunFile, 0)
	if err != nil {
		return ""
	}
	var sum struct {
		Application struct {
			RunMode              string `yaml:"run_mode"`
			InitialEnvironment   string `yaml:"initial_environment"`
			ConvergedEnvironment string `yaml:"converged_environment"`
		} `yaml:"application"`
	}
	if yaml.Unmarshal(b, &sum) != nil || sum.Application.RunMode != "agent" {
		return ""
	}
	if a := sum.Application; a.InitialEnvironment != a.ConvergedEnvironment {
		r.log.Debug("Found last server-specified environment: " + a.ConvergedEnvironment)
		return a.ConvergedEnvironment
	}
	// Loaded, with no server-specified environment: Puppet asks no node
	// and runs in the configured one.
	return r.s.Environment
}

// puppetSettings are the agent's settings the run's Puppet is given:
// its confdir (whose puppet.conf it then reads), vardir, server and
// environmentpath, as the agent resolved them.
func (r *run) puppetSettings() []string {
	var out []string
	host, _ := r.serverAddr()
	for _, kv := range [][2]string{
		{"confdir", r.s.Confdir}, {"vardir", r.s.Vardir}, {"server", host},
		{"environmentpath", r.s.Values["environmentpath"]},
	} {
		if kv[1] != "" {
			out = append(out, "--"+kv[0]+"="+kv[1])
		}
	}
	return out
}

// libdir is where pluginsync put the plugins: Puppet's libdir.
func (r *run) libdir() string {
	if r.s.Libdir != "" {
		return r.s.Libdir
	}
	return filepath.Join(r.s.Vardir, "lib")
}

func (r *run) reportTimeout() time.Duration {
	if r.s.HTTPReadTimeout > 0 && r.s.HTTPReadTimeout < 2*time.Minute {
		return r.s.HTTPReadTimeout
	}
	return 2 * time.Minute
}

// newUUID is a random (version 4) UUID: the run's transaction_uuid.
func newUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// formatTimings lists the run's times in seconds, by name.
func formatTimings(t map[string]time.Duration) string {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.3f", n, t[n].Seconds())
	}
	return b.String()
}
