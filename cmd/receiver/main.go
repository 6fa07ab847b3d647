// Command receiver is a drop-in replacement for `puppet yamlresource
// receive`: it reads one resource request per line on stdin, applies it,
// and answers with one JSON line on stdout.
//
// The loop (loop.go) depends only on protocol.Applier and a line
// decoder; main wires in a session of the engine (applier/engine) over
// every registered type, which decodes, remembers lines sent again and
// applies. Subcommands (describe, facts, filebucket, ...) register
// themselves in the subcommands map from their own files and are
// dispatched on the first argument.
//
// One goroutine reads a line (bufio.Reader.ReadSlice, so a line over
// --max-line is read to its end without being held), decodes, applies and
// writes its answer with its own write before it reads the next: a lone
// request waits for no other goroutine, and a stream is read 64 KiB at a
// time. Signals go to their own goroutine: the
// first lets the resource in progress finish and be answered, the second
// cancels its context. A panic while decoding, applying or encoding
// becomes an error answer naming the resource. Logging is log/slog with a
// handler that prints Puppet's format (log.go). Changes to directory
// entries are made durable in groups after their answers, or one by one
// before them with --sync (durability.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/source"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/internal/assemble"
	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/internal/stream"
)

func main() {
	// As Puppet does at start: the sbin directories join the PATH.
	os.Setenv("PATH", withSbin(os.Getenv("PATH")))
	os.Exit(realMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// options are the apply loop's flags.
type options struct {
	noop          bool
	noBanner      bool
	compat        bool
	maxLine       int
	logLevel      string
	verbose       bool
	debug         bool
	detailed      bool
	stateDir      string
	caFile        string
	httpTimeout   time.Duration
	maxSourceSize int64
	version       bool
	cpuProfile    string
	sync          bool
	puppet        source.PuppetOptions // what the flags give; the rest from puppet.conf
	fallback      string
	modulePath    string
	delegate      string
}

func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	fs.BoolVar(&o.noop, "noop", false, "evaluate every resource, change nothing; answers say \"noop\":true with the events that would have happened")
	fs.BoolVar(&o.noBanner, "no-banner", false, "do not write the ready banner line before the first answer")
	fs.BoolVar(&o.compat, "compat", false, "answer with exactly Puppet's six fields (no id, no events)")
	fs.IntVar(&o.maxLine, "max-line", 16<<20, "longest request line in `bytes`; a longer one is skipped and answered with an error")
	fs.StringVar(&o.logLevel, "log-level", "", "least severe `level` logged to stderr: debug, info, notice, warning, err (default notice when stderr is a terminal, else warning)")
	fs.BoolVar(&o.verbose, "verbose", false, "log info and above (as --log-level info)")
	fs.BoolVar(&o.debug, "debug", false, "log everything (as --log-level debug)")
	fs.BoolVar(&o.detailed, "detailed-exitcodes", false, "at the end of input exit 2 when something changed, 4 when something failed, 6 for both, 0 otherwise (as puppet apply)")
	fs.StringVar(&o.stateDir, "state-dir", applier.DefaultStateDir(), "`directory` for pippet's own state (the filebucket); "+applier.SystemStateDir+" for root, else $XDG_STATE_HOME/pippet or ~/.local/state/pippet")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM `file` to verify HTTPS sources against instead of the system roots")
	fs.DurationVar(&o.httpTimeout, "http-timeout", 60*time.Second, "idle time limit of an HTTP(S) or puppet:// source request: connecting, the TLS handshake, the wait for the headers, each wait for more of the body; a download that keeps arriving is never cut (a `duration` such as 30s)")
	fs.Int64Var(&o.maxSourceSize, "max-source-size", 4<<30, "most `bytes` one HTTP(S) source may send; a longer body fails the resource and installs nothing")
	fs.BoolVar(&o.sync, "sync", false, "make each change durable (its directory fsynced) before its answer; by default directories are fsynced in groups: when input pauses, every 64 changes, within 100ms, and before exit")
	fs.BoolVar(&o.version, "version", false, "print the version and the commit the binary was built from (and whether its tree was modified), and exit")
	addPuppetFlags(fs, &o.puppet)
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `file` (for go tool pprof)")
	cli.AddFallbackFlags(fs, &o.fallback, &o.modulePath)
	cli.AddDelegateFlag(fs, &o.delegate)
	return fs
}

// addPuppetFlags declares the agent's settings that puppet:// sources use,
// named as the agent's; those left empty come from puppet.conf, else
// Puppet's defaults (resolvePuppet).
func addPuppetFlags(fs *flag.FlagSet, p *source.PuppetOptions) {
	fs.StringVar(&p.Server, "server", "", "the Puppet Server `host` of puppet:/// sources (default: puppet.conf's server, else puppet)")
	fs.IntVar(&p.Port, "serverport", 0, "the Puppet Server's `port` (default: puppet.conf's serverport, else 8140)")
	fs.StringVar(&p.Environment, "environment", "", "the `environment` puppet:// sources are served from (default: puppet.conf's environment, else production)")
	fs.StringVar(&p.Certname, "certname", "", "the agent certificate's `name` in the SSL directory (default: puppet.conf's certname, else this host's fqdn)")
	fs.StringVar(&p.SSLDir, "ssldir", "", "the agent's SSL `directory` (certs/CERTNAME.pem, private_keys/CERTNAME.pem, certs/ca.pem, crl.pem; default: puppet.conf's ssldir, else /var/lib/puppet/ssl for root, ~/.puppet/etc/ssl otherwise)")
}

func realMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if sub, ok := subcommands[args[0]]; ok {
			return sub(ctx, args[1:], stdout, stderr)
		}
	}
	o, level, code, done := parseOptions(args, stdout, stderr)
	if done {
		return code
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "receiver: --cpuprofile: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "receiver: --cpuprofile: %v\n", err)
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	puppetOpts, _, ok := resolvePuppet("receiver", "agent", o.puppet, stderr)
	if !ok {
		return exitUsage
	}
	handler := puppetlog.New(stderr, level)
	puppet, err := assemble.NewPuppet(assemble.PuppetConfig{
		Fallback:   o.fallback,
		ModulePath: o.modulePath,
		Delegate:   cli.SplitList(o.delegate),
		Noop:       o.noop,
		Level:      level,
		MaxRequest: o.maxLine,
		Log:        handler,
	})
	if err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		return exitUsage
	}
	// The Puppet process, if one was started, is stopped whatever ends
	// the loop (after the resource in progress).
	defer puppet.Close(ctx)
	durability := assemble.Grouped
	if o.sync {
		durability = assemble.AtOnceLogged
	}
	run := assemble.New(assemble.Config{
		Options:    applier.Options{Noop: o.noop, StateDir: o.stateDir},
		Log:        handler,
		Durability: durability,
		Source: &source.Options{
			CAFile:      o.caFile,
			HTTPTimeout: o.httpTimeout,
			MaxSize:     o.maxSourceSize,
			Puppet:      puppetOpts,
		},
		Puppet: puppet,
	})
	logger := run.Log
	// One session reads every line of stdin: it keeps the lines sent
	// again and what was built from them.
	sess, app, err := run.Session()
	if err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		return exitUsage
	}

	// A closed stdout must not kill us with SIGPIPE: the write fails with
	// EPIPE and the loop ends quietly with exitOutput. The signal is
	// caught, not ignored: an ignored disposition would survive exec into
	// every command we run (`yes | head -1` would never end).
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// Whatever ends the receiver, no command it started outlives it.
	defer command.KillAll()

	// The summary is a notice: it is printed whenever notices are.
	summary := level <= applier.LevelNotice
	var count *stream.Tally
	if summary || o.detailed {
		count = &stream.Tally{}
	}
	code = stream.Run(ctx, stream.Config{
		MaxLine: o.maxLine,
		Compat:  o.compat,
		Banner:  !o.noBanner,
		Log:     logger,
		Dirs:    run.Dirs,
		Tally:   count,
		Decode:  sess.Decode,
		Declare: sess.Declare,
	}, app, stdin, stdout, sigs)
	if code != exitOK {
		return code
	}
	if summary {
		logger.Log(ctx, applier.LevelNotice, count.Summary())
	}
	if o.detailed {
		return count.DetailedExitCode()
	}
	return exitOK
}

// parseOptions reads the apply loop's flags and checks them; done says
// the receiver ends here (--help, --version, a bad flag) with code. level
// is the least severe level logged: notices at a terminal, as puppet
// apply prints them, warnings and errors on a controller's pipe, as from
// Puppet's receiver, unless a flag says otherwise.
func parseOptions(args []string, stdout, stderr io.Writer) (o options, level slog.Level, code int, done bool) {
	fs := newFlagSet(&o)
	if code, done := cli.ParseFlags(fs, args, "receiver", func(w io.Writer) { usage(w, fs) }, stdout, stderr); done {
		return o, 0, code, true
	}
	usageErr := func(format string, args ...any) (options, slog.Level, int, bool) {
		fmt.Fprintf(stderr, "receiver: "+format+"\n", args...)
		return o, 0, exitUsage, true
	}
	if fs.NArg() > 0 {
		return usageErr("unknown subcommand %q (known: %s); requests are read from stdin", fs.Arg(0), subcommandNames())
	}
	if o.version {
		fmt.Fprint(stdout, versionLine())
		return o, 0, exitOK, true
	}
	level = slog.LevelWarn
	if isTerminal(stderr) {
		level = applier.LevelNotice
	}
	if o.logLevel != "" {
		l, ok := puppetlog.Levels[strings.ToLower(o.logLevel)]
		if !ok {
			return usageErr("invalid --log-level %q (want debug, info, notice, warning or err)", o.logLevel)
		}
		level = l
	}
	if o.verbose {
		level = min(level, slog.LevelInfo)
	}
	if o.debug {
		level = slog.LevelDebug
	}
	if o.maxSourceSize < 1 {
		return usageErr("--max-source-size must be positive")
	}
	if o.maxLine < 1 {
		return usageErr("--max-line must be positive")
	}
	return o, level, 0, false
}

func subcommandNames() string {
	var names []string
	for n := range subcommands {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	sortStrings(names)
	return strings.Join(names, ", ")
}
