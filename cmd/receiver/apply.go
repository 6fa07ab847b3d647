package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/agent/config"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/assemble"
	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/report"
)

// apply wires `receiver apply CATALOG`: the logic is package catalog's,
// the run's assembly internal/assemble's.
const applyUsage = `usage: receiver apply [flags] CATALOG.json | - | MANIFEST.pp
       receiver apply [flags] -e CODE

Applies a compiled Puppet catalog (the JSON puppet apply --catalog reads;
- for stdin) as Puppet's agent does: in dependency order, refresh events
along notify/subscribe, failed dependencies skipped; types pippet does not
implement go to Puppet (--fallback). A manifest (a .pp file, or -e CODE) is
first compiled by Puppet's own compiler (Puppet must be installed), then
applied natively. See docs/catalog.md.

Flags:
`

func applyMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return applyWith(ctx, args, os.Stdin, stdout, stderr)
}

func applyWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver apply", flag.ContinueOnError)
	noop := fs.Bool("noop", false, "evaluate every resource, change nothing; the report lists what would change")
	tags := fs.String("tags", "", "comma-separated `tags`: apply only the resources that carry one")
	skipTags := fs.String("skip_tags", "", "comma-separated `tags`: leave out the resources that carry one")
	reportFile := fs.String("lastrunreport", "", "write Puppet's transaction report (YAML) to `file`")
	summary := fs.String("lastrunfile", "", "write Puppet's last run summary (YAML) to `file`")
	detailed := fs.Bool("detailed-exitcodes", false, "exit 2 when something changed, 4 when something failed, 6 for both, 0 otherwise")
	logLevel := fs.String("log-level", "notice", "least severe `level` logged to stderr: debug, info, notice, warning, err")
	verbose := fs.Bool("verbose", false, "log info and above")
	debug := fs.Bool("debug", false, "log everything")
	stateDir := fs.String("state-dir", applier.DefaultStateDir(), "`directory` for pippet's state (the filebucket, the schedules' last runs)")
	code := fs.String("e", "", "compile this manifest `code` with Puppet, then apply it")
	showDiff := fs.Bool("show_diff", false, "log and report the diff of a file's content change (Puppet's show_diff setting; off by default, or as puppet.conf sets it)")
	color := fs.String("color", "ansi", "Puppet's color setting (true, false, ansi, html), taken so that Puppet's command lines run; pippet's lines have no colour either way")
	var forced string
	cli.AddDelegateFlag(fs, &forced)
	var pf puppetFlags
	addPuppetFlags(fs, &pf)
	var fallback, modulePath string
	cli.AddFallbackFlags(fs, &fallback, &modulePath)
	usage := func(w io.Writer) {
		fmt.Fprint(w, applyUsage)
		cli.PrintFlags(w, fs)
	}
	if code, done := cli.ParseFlags(fs, args, "receiver apply", usage, stdout, stderr); done {
		return code
	}
	if (*code == "") != (fs.NArg() == 1) || fs.NArg() > 1 {
		usage(stderr)
		return exitUsage
	}
	switch *color {
	case "true", "false", "ansi", "html":
	default:
		fmt.Fprintf(stderr, "receiver apply: invalid --color %q (true, false, ansi or html)\n", *color)
		return exitUsage
	}
	level, ok := puppetlog.Levels[strings.ToLower(*logLevel)]
	if !ok {
		fmt.Fprintf(stderr, "receiver apply: invalid --log-level %q\n", *logLevel)
		return exitUsage
	}
	if *verbose {
		level = min(level, slog.LevelInfo)
	}
	if *debug {
		level = slog.LevelDebug
	}
	// SIGTERM or SIGINT stops the run as Puppet's does: what runs is
	// cancelled, nothing more is applied, the report is still written,
	// and "Could not run: SIGTERM" is the last word (exit 1).
	ctx, stopSignals := signalContext(ctx)
	defer stopSignals()
	start := time.Now()
	var cat *catalog.Catalog
	var err error
	if *code != "" || strings.HasSuffix(fs.Arg(0), ".pp") {
		cat, err = compileManifest(ctx, fs.Arg(0), *code, modulePath, *debug, stderr)
	} else {
		cat, err = readCatalog(fs.Arg(0), stdin)
	}
	if sig := caught(ctx); sig != "" {
		fmt.Fprintf(stderr, "Error: Could not run: %s\n", sig)
		return exitFailed
	}
	if errors.Is(err, delegate.ErrCompileLogged) {
		return exitFailed // Puppet's own error line said it, as puppet apply does
	}
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitFailed
	}
	puppetOpts, settings, ok := resolvePuppet("receiver apply", "user", pf, stderr)
	if !ok {
		return exitUsage
	}
	// A static catalog's inlined metadata spares the server's
	// file_metadata requests, as for Puppet's agent.
	static, err := cat.Static()
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitFailed
	}
	logh := catalog.NewLog(puppetlog.New(stderr, level))
	// Puppet's show_diff setting: the flag, or puppet.conf's.
	showDiffOn := *showDiff || settings.ShowDiff
	puppet, err := assemble.NewPuppet(assemble.PuppetConfig{
		Fallback: fallback, ModulePath: modulePath, Delegate: cli.SplitList(forced),
		Settings: assemble.ShowDiffSetting(showDiffOn),
		Noop:     *noop, Level: level, Log: logh,
	})
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitFailed
	}
	defer puppet.Close(ctx)
	rep, err := assemble.Apply(ctx, cat, assemble.Options{
		Noop: *noop, Tags: cli.SplitList(*tags), SkipTags: cli.SplitList(*skipTags),
		ShowDiff: showDiffOn,
		StateDir: *stateDir, Log: logh, Puppet: puppet,
		Source:  source.Options{Puppet: puppetOpts, Static: static},
		Sources: localSources(pf, settings, modulePath),
	})
	status := exitOK
	if err != nil {
		// Refused before anything ran (a cycle, a relationship to a
		// resource the catalog lacks): said as Puppet says it, and
		// reported failed, as puppet apply --catalog reports it.
		logger := slog.New(logh)
		var ce *catalog.CycleError
		if errors.As(err, &ce) {
			logger.Error(ce.Error())
			logger.Error("Failed to apply catalog: One or more resource dependency cycles detected in graph")
		} else {
			logger.Error("Failed to apply catalog: " + err.Error())
		}
		rep = &report.Report{Host: cat.Name, Environment: cat.Environment, ConfigurationVersion: cat.Version,
			CatalogUUID: cat.UUID, CodeID: cat.CodeID, Time: start, Duration: time.Since(start), Noop: *noop,
			Incomplete: true, Logs: logh.Take()}
		status = exitFailed
	}
	sig := caught(ctx)
	if sig != "" {
		slog.New(logh).Error("Could not run: " + sig)
		rep.Logs = append(rep.Logs, logh.Take()...)
		rep.Incomplete = true
		status = exitFailed
	}
	if *reportFile != "" {
		if err := writeVia(ctx, *reportFile, rep.WriteYAML); err != nil {
			fmt.Fprintf(stderr, "receiver apply: %v\n", err)
			status = exitFailed
		}
	}
	if *summary != "" {
		if err := writeVia(ctx, *summary, rep.WriteSummary); err != nil {
			fmt.Fprintf(stderr, "receiver apply: %v\n", err)
			status = exitFailed
		}
	}
	if *detailed && status == exitOK {
		return rep.ExitCode()
	}
	return status
}

// signalContext is ctx cancelled by the first SIGTERM or SIGINT, with the
// signal as its cause (caught names it).
func signalContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(caughtSignal{s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// caughtSignal is the cause of a context a signal cancelled.
type caughtSignal struct{ sig syscall.Signal }

func (c caughtSignal) Error() string {
	if c.sig == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

// caught names the signal that cancelled ctx ("SIGTERM"), "" for none.
func caught(ctx context.Context) string {
	var c caughtSignal
	if errors.As(context.Cause(ctx), &c) {
		return c.Error()
	}
	return ""
}

// readCatalog reads the catalog from a file, or stdin for "-".
func readCatalog(name string, stdin io.Reader) (*catalog.Catalog, error) {
	if name == "-" {
		return catalog.Parse(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := catalog.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// writeVia writes a file whole through applier/atomicfile (a temp file
// synced, renamed into place, the directory synced), mode 0640, owned by
// the writer. An interrupted run's report is written all the same:
// cancelling ctx does not stop it.
func writeVia(ctx context.Context, name string, write func(io.Writer) error) error {
	return atomicfile.WriteFunc(context.WithoutCancel(ctx), name, atomicfile.Options{Mode: 0o640, UID: -1, GID: -1}, write)
}

// localSources: without a Puppet Server configured (--server, or server
// or server_list in puppet.conf's [user] or [main]), puppet:///modules/
// sources are read from the modulepath, as puppet apply reads them.
func localSources(pf puppetFlags, s *config.Settings, modulePath string) func(string) (string, bool) {
	if pf.Server != "" || s.SetByConfig("server") || s.SetByConfig("server_list") {
		return nil
	}
	mp := delegate.DefaultModulePath()
	if modulePath != "" {
		mp = filepath.SplitList(modulePath)
	}
	return catalog.ModuleFiles(mp)
}

// compileManifest has Puppet compile a manifest file or code; with debug,
// Puppet logs its debug lines and an error's backtrace (--debug --trace).
func compileManifest(ctx context.Context, manifest, code, modulePath string, debug bool, stderr io.Writer) (*catalog.Catalog, error) {
	if manifest != "" {
		abs, err := filepath.Abs(manifest)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, err
		}
		manifest = abs
	}
	var args []string
	if debug {
		args = []string{"--debug", "--trace"}
	}
	data, err := delegate.Compile(ctx, delegate.CompileOptions{Manifest: manifest, Code: code, ModulePath: modulePath, Args: args, Stderr: stderr})
	if err != nil {
		return nil, err
	}
	return catalog.Parse(bytes.NewReader(data))
}
