package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/stream"
)

// apply wires `receiver apply CATALOG`: the logic is package catalog's.
func init() {
	subcommands["apply"] = applyMain
}

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
	report := fs.String("lastrunreport", "", "write Puppet's transaction report (YAML) to `file`")
	summary := fs.String("lastrunfile", "", "write Puppet's last run summary (YAML) to `file`")
	detailed := fs.Bool("detailed-exitcodes", false, "exit 2 when something changed, 4 when something failed, 6 for both, 0 otherwise")
	logLevel := fs.String("log-level", "notice", "least severe `level` logged to stderr: debug, info, notice, warning, err")
	verbose := fs.Bool("verbose", false, "log info and above")
	debug := fs.Bool("debug", false, "log everything")
	stateDir := fs.String("state-dir", applier.DefaultStateDir(), "`directory` for pippet's state (the filebucket, the schedules' last runs)")
	code := fs.String("e", "", "compile this manifest `code` with Puppet, then apply it")
	var forced string
	cli.AddDelegateFlag(fs, &forced)
	var pf source.PuppetOptions
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
	var cat *catalog.Catalog
	var err error
	if *code != "" || strings.HasSuffix(fs.Arg(0), ".pp") {
		cat, err = compileManifest(ctx, fs.Arg(0), *code, modulePath, stderr)
	} else {
		cat, err = readCatalog(fs.Arg(0), stdin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitFailed
	}
	puppetOpts, ok := resolvePuppet("receiver apply", pf, stderr)
	if !ok {
		return exitUsage
	}
	printer := puppetlog.New(stderr, level)
	logh := catalog.NewLog(printer)
	logger := slog.New(logh)
	dirs := stream.NewDirSync(logger, true)
	defer dirs.Flush(context.WithoutCancel(ctx))
	env := &applier.Env{
		Options: applier.Options{Noop: *noop, StateDir: *stateDir},
		Log:     logger,
		Dirs:    dirs,
	}
	// A static catalog's inlined metadata spares the server's
	// file_metadata requests, as for Puppet's agent.
	static, err := cat.Static()
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitFailed
	}
	file.SetSourceOptions(env, source.Options{Puppet: puppetOpts, Static: static})
	eng := engine.New(applier.Default, env)
	g, err := catalog.Build(cat, applier.Default)
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitFailed
	}
	app, fb, err := withFallback(eng.NewSession(), delegate.Options{
		Fallback: fallback, ModulePath: modulePath, Types: cli.SplitList(forced), Noop: *noop, LogLevel: puppetlog.Name(level),
		Logger: slog.New(delegate.RelayHandler(logh, applier.LevelNotice)),
	})
	if err != nil {
		fmt.Fprintf(stderr, "receiver apply: %v\n", err)
		return exitUsage
	}
	defer closeFallback(ctx, fb, logger)
	defer command.KillAll()
	rep := catalog.Apply(ctx, g, app, catalog.Options{
		Noop: *noop, Tags: cli.SplitList(*tags), SkipTags: cli.SplitList(*skipTags), Log: logh,
		Schedules: filepath.Join(*stateDir, "schedules.json"), Audits: filepath.Join(*stateDir, "audit.json"),
		Sources: localSources(pf, modulePath),
	})
	status := exitOK
	if *report != "" {
		if err := writeVia(*report, rep.WriteYAML); err != nil {
			fmt.Fprintf(stderr, "receiver apply: %v\n", err)
			status = exitFailed
		}
	}
	if *summary != "" {
		if err := writeVia(*summary, rep.WriteSummary); err != nil {
			fmt.Fprintf(stderr, "receiver apply: %v\n", err)
			status = exitFailed
		}
	}
	if *detailed {
		return rep.ExitCode()
	}
	return status
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

// writeVia writes a file through a temp file and a rename.
func writeVia(name string, write func(io.Writer) error) error {
	dir := filepath.Dir(name)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o640); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// localSources: without a Puppet Server configured (--server, or server
// in puppet.conf), puppet:///modules/ sources are read from the
// modulepath, as puppet apply reads them.
func localSources(pf source.PuppetOptions, modulePath string) func(string) (string, bool) {
	if pf.Server != "" {
		return nil
	}
	if conf, err := source.ReadPuppetConf(filepath.Join(source.PuppetConfDir(), "puppet.conf")); err == nil && (conf["server"] != "" || conf["server_list"] != "") {
		return nil
	}
	mp := delegate.DefaultModulePath()
	if modulePath != "" {
		mp = filepath.SplitList(modulePath)
	}
	return catalog.ModuleFiles(mp)
}

// compileManifest has Puppet compile a manifest file or code.
func compileManifest(ctx context.Context, manifest, code, modulePath string, stderr io.Writer) (*catalog.Catalog, error) {
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
	data, err := delegate.Compile(ctx, delegate.CompileOptions{Manifest: manifest, Code: code, ModulePath: modulePath, Stderr: stderr})
	if err != nil {
		return nil, err
	}
	return catalog.Parse(bytes.NewReader(data))
}
