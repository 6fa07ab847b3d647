package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/agent/config"
	"github.com/pippet/pippet/agent/logdest"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/protocol"
)

// The command: `receiver agent`'s command line, its log destinations,
// --enable and --disable, and daemonizing, for cmd/receiver to register.

// MainOptions are what the receiver hands the command.
type MainOptions struct {
	// Version is what --version prints.
	Version string
	// SyslogNetwork and SyslogAddr are the syslog socket ("": the
	// system's, /dev/log); tests give a socket of their own.
	SyslogNetwork, SyslogAddr string
}

// cmdUsage is the exit status of a command line the agent refuses, as
// the receiver's.
const cmdUsage = cli.ExitUsage

const agentUsage = `usage: receiver agent [--test|-t] [--onetime|-o] [--[no-]daemonize|-D] [--noop]
         [--tags TAGS] [--detailed-exitcodes] [--waitforcert SECONDS|-w SECONDS]
         [--disable [MESSAGE]|--enable] [--verbose|-v] [--debug|-d]
         [--logdest DEST|-l DEST ...] [--fingerprint [--digest ALG]] [--job-id ID]
         [--server HOST] [--environment ENV|-E ENV] [--certname NAME|--fqdn NAME|-f NAME]
         [--SETTING VALUE ...] [--state-dir DIR] [--fallback MODE] [--delegate TYPES]

Does what 'puppet agent' does against a Puppet Server (certificates,
pluginsync, facts, the node and catalog requests, the report), with the
catalog applied by pippet's engine; types pippet lacks go to Puppet, which
loads the plugins pluginsync brought.

Settings are Puppet's, read as Puppet reads them: from puppet.conf
([main], then [agent]; /etc/puppet/puppet.conf for root, ~/.puppet for
others; --confdir or --config to choose), then from the command line,
which wins: any setting as --SETTING VALUE or --SETTING=VALUE (dashes or
underscores), a boolean one as --SETTING or --no-SETTING. For instance
--server puppet.example.com --serverport 8140 --environment staging
--runinterval 30m --no-usecacheonfailure --ignore_plugin_errors.

  receiver agent -t                     one run in the foreground, verbose,
                                        exit 0, 2 (changes), 4 (failures), 6 (both)
  receiver agent --onetime --no-daemonize --detailed-exitcodes
                                        one run, logged to syslog only
  receiver agent --no-daemonize         a run every runinterval, in the foreground
  receiver agent                        the same, detached (daemonize)
  receiver agent --disable 'MESSAGE'    no runs until --enable
  receiver agent --fingerprint          the certificate's (or request's) digest

The agent's own options:
  --test, -t
      one run now: --onetime --no-daemonize --verbose --detailed-exitcodes
      --show_diff --no-usecacheonfailure --no-splay
  --onetime, -o / --[no-]daemonize, -D
      one run, or a run every runinterval; detached (the default) or not.
      A detached agent logs to syslog unless --logdest names files
  --noop, --tags TAGS, --skip_tags TAGS
      settings: change nothing / apply only (or not) what is tagged so
  --detailed-exitcodes
      exit 2 when changes were made, 4 on failures, 6 both
  --verbose, -v / --debug, -d
      log info (debug) lines too, on the console besides the destinations
  --logdest DEST, -l DEST
      where the log goes: console, syslog (the syslogfacility setting's
      facility, default daemon; program puppet-agent), or a file's absolute
      path (appended to; a .json file gets a JSON array of records, a .jsonl
      file one record a line). Given several times or comma-separated, every
      destination gets every line. Default: syslog, and the console with
      --verbose or --debug
  --disable [MESSAGE] / --enable
      stop (with a reason) or allow runs, as Puppet's agent_disabled.lock
  --waitforcert SECONDS, -w SECONDS
      with no signed certificate yet, ask the CA again this often (0: do not wait)
  --certname NAME, --fqdn NAME, -f NAME
      the node's certificate name
  --fingerprint [--digest ALG]
      print the certificate's digest, or the pending request's, and exit
      (ALG: SHA256 by default, SHA1, SHA384, SHA512, SHA3-256, MD5 ...)
  --job-id ID
      recorded in the report (orchestration)
  --help, -h / --version, -V

Exit status: 1 when the run could not happen (disabled, already running,
no certificate, no catalog, a pluginsync failure without usecacheonfailure);
otherwise 0, or with --detailed-exitcodes 2, 4 or 6. Signals: TERM or INT
stop (a run in progress stops after the resource being applied, and its
report is sent); USR1 starts a run now; HUP restarts the daemon. See
docs/agent.md.

pippet's own flags:
`

// agentFlags are the flags pippet adds to Puppet's: taken out of the
// command line before agent/config reads it.
type agentFlags struct {
	stateDir, fallback, delegate string
	// puppetBetweenRuns: the daemon's Puppet between runs, PuppetStop or
	// PuppetKeep (keep.go).
	puppetBetweenRuns string
	// daemonized: this process is the detached daemon (--daemonize
	// re-executes the command with --daemonized --no-daemonize): it logs
	// as Puppet's daemon does, never to the console.
	daemonized bool
}

var agentOwnFlags = map[string]func(f *agentFlags, v string){
	"state-dir":           func(f *agentFlags, v string) { f.stateDir = v },
	"fallback":            func(f *agentFlags, v string) { f.fallback = v },
	"delegate":            func(f *agentFlags, v string) { f.delegate = v },
	"puppet-between-runs": func(f *agentFlags, v string) { f.puppetBetweenRuns = v },
}

// splitAgentFlags takes pippet's flags (--name VALUE or --name=VALUE) out
// of args.
func splitAgentFlags(args []string) (agentFlags, []string, error) {
	f := agentFlags{stateDir: applier.DefaultStateDir(), fallback: delegate.ModeAuto, puppetBetweenRuns: PuppetStop}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "--daemonized" {
			f.daemonized = true
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		set, ok := agentOwnFlags[name]
		if !strings.HasPrefix(a, "--") || !ok {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return f, nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			val = args[i]
		}
		set(&f, val)
	}
	if f.puppetBetweenRuns != PuppetStop && f.puppetBetweenRuns != PuppetKeep {
		return f, nil, fmt.Errorf("--puppet-between-runs %q: stop or keep", f.puppetBetweenRuns)
	}
	return f, rest, nil
}

func printAgentUsage(w io.Writer) {
	fmt.Fprint(w, agentUsage)
	fmt.Fprint(w, `  --state-dir DIRECTORY
      pippet's own state: the filebucket, the schedules' last runs (default `+applier.DefaultStateDir()+`)
  --fallback MODE
      where resources of types pippet does not implement go: puppet, none, auto (default auto)
  --delegate TYPES
      comma-separated types sent to Puppet even though pippet has them natively
  --puppet-between-runs stop|keep
      a run every runinterval: the Puppet process a run starts for the types
      and custom facts pippet hands to Puppet is stopped when the run ends
      (stop, the default: the daemon alone stays in memory) or kept for the
      next run (keep: no Ruby start a run, Puppet's memory held between runs)
`)
}

// Main is `receiver agent ARGS`: the command line read (pippet's own
// flags, then Puppet's settings, agent/config), the log destinations
// opened (agent/logdest), then --fingerprint, --enable or --disable, or
// the runs: one (--onetime), or Loop's, in the foreground or detached
// (--daemonize). It returns the process's exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, o MainOptions) int {
	// The report's startup_time counts from the process's start, as
	// Puppet's from its own.
	start := ProcessStart()
	own, rest, err := splitAgentFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "receiver agent: %v\nRun 'receiver agent --help' for usage.\n", err)
		return cmdUsage
	}
	a, err := config.ParseArgs(rest)
	if err != nil {
		fmt.Fprintf(stderr, "receiver agent: %v\nRun 'receiver agent --help' for usage.\n", err)
		return cmdUsage
	}
	switch {
	case a.Help:
		printAgentUsage(stdout)
		return ExitOK
	case a.Version:
		fmt.Fprint(stdout, o.Version)
		return ExitOK
	case len(a.Rest) > 0:
		fmt.Fprintf(stderr, "receiver agent: the agent takes no arguments, only options (%q)\n", a.Rest[0])
		return cmdUsage
	}
	s, err := config.Load("", a.Settings)
	if err != nil {
		fmt.Fprintf(stderr, "receiver agent: %v\n", err)
		return cmdUsage
	}
	level := applier.LevelNotice
	if a.Verbose {
		level = slog.LevelInfo
	}
	if a.Debug {
		level = slog.LevelDebug
	}
	console := logdest.Console(stdout, stderr, level)
	dests := logDestinations(a, s, own.daemonized)
	if a.Fingerprint {
		// As Puppet: the fingerprint's errors go to the console too.
		dests = append(dests, "console")
	}
	logs, err := logdest.Open(dests, logdest.Options{
		Console: console, Level: level, Facility: s.Values["syslogfacility"],
		SyslogNetwork: o.SyslogNetwork, SyslogAddr: o.SyslogAddr,
	})
	if err != nil {
		slog.New(console).Error(err.Error())
		return ExitFailed
	}
	defer logs.Close()
	logger := slog.New(logs)
	for _, dir := range logs.Created {
		logger.Info("Creating log directory " + dir)
	}
	for _, w := range s.Warnings {
		logger.Warn(w)
	}
	if a.Fingerprint {
		fp, err := Fingerprint(s, a.Digest)
		switch {
		case errors.Is(err, ErrNoFingerprint):
			fmt.Fprintln(stderr, err.Error())
			return ExitFailed
		case err != nil:
			logger.Error("Failed to generate fingerprint: " + err.Error())
			return ExitFailed
		}
		fmt.Fprintln(stdout, fp)
		return ExitOK
	}
	if a.Enable || a.Disable {
		if err := MakeDirs(s); err != nil {
			logger.Error(fmt.Sprintf("Could not %s: %v", map[bool]string{true: "enable", false: "disable"}[a.Enable], err))
			return ExitFailed
		}
	}
	switch {
	case a.Enable:
		logger.Log(ctx, applier.LevelNotice, "Enabling Puppet.")
		if err := config.Enable(s.DisabledLockfile); err != nil {
			logger.Error(fmt.Sprintf("Could not enable: %v", err))
			return ExitFailed
		}
		return ExitOK
	case a.Disable:
		logger.Log(ctx, applier.LevelNotice, "Disabling Puppet.")
		if err := config.Disable(s.DisabledLockfile, a.DisableMessage); err != nil {
			logger.Error(fmt.Sprintf("Could not disable: %v", err))
			return ExitFailed
		}
		return ExitOK
	}
	_, envFromCLI := a.Settings["environment"]
	if s.Daemonize && !own.daemonized {
		// As Puppet, --daemonize detaches first, also for one run
		// (--onetime): the run happens in the background.
		return detach(s, args, stderr)
	}
	opts := Options{
		Log: logs, Level: level,
		DetailedExitcodes:  a.DetailedExitcodes,
		EnvironmentFromCLI: envFromCLI,
		StateDir:           own.stateDir,
		Fallback:           own.fallback,
		Delegate:           cli.SplitList(own.delegate),
		JobID:              a.JobID,
		NoSplay:            a.Test,
		Start:              start,
	}
	if s.Onetime {
		// The first TERM or INT stops the run after the resource being
		// applied (its report is still sent); a second one ends the
		// process.
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		go func() {
			<-ctx.Done()
			stop()
		}()
		return Run(ctx, s, opts)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	defer signal.Stop(sigs)
	if own.puppetBetweenRuns == PuppetKeep {
		opts.kept = &keptPuppet{}
		defer opts.kept.Close(context.WithoutCancel(ctx))
	}
	logger.Log(ctx, applier.LevelNotice, "Starting Puppet client version "+agentVersion())
	first := true
	return Loop(ctx, LoopOptions{
		Interval: s.Runinterval, Splay: s.Splay, Splaylimit: s.Splaylimit,
		Signals: sigs, Log: logger,
		Restart: func() error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if opts.kept != nil {
				opts.kept.Close(ctx)
			}
			return syscall.Exec(self, os.Args, os.Environ())
		},
	}, func(ctx context.Context) int {
		o := opts
		// The loop splays once, itself.
		o.NoSplay = true
		if !first {
			o.Start = time.Time{}
		}
		first = false
		code := Run(ctx, s, o)
		// What the run allocated goes back to the system now rather than
		// when the runtime gets to it: the daemon waits small.
		debug.FreeOSMemory()
		return code
	})
}

// logDestinations are where the agent logs, as Puppet's setup_logs decides:
// the --logdest destinations (several flags, or a comma-separated list),
// else the logdest setting (puppet.conf), else syslog, and the console
// too with --verbose or --debug (--test). The daemon (daemonized) has no
// console: it is dropped, and syslog stands in when nothing else is left.
func logDestinations(a *config.Args, s *config.Settings, daemonized bool) []string {
	var dests []string
	if len(a.Logdest) > 0 {
		dests = append(dests, a.Logdest...)
	} else {
		for _, d := range strings.Split(s.Values["logdest"], ",") {
			if d = strings.TrimSpace(d); d != "" {
				dests = append(dests, d)
			}
		}
	}
	if len(dests) == 0 {
		if a.Verbose || a.Debug {
			dests = append(dests, "console")
		}
		dests = append(dests, "syslog")
	}
	if !daemonized {
		return dests
	}
	kept := dests[:0]
	for _, d := range dests {
		if !strings.EqualFold(d, "console") {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		kept = append(kept, "syslog")
	}
	return kept
}

// detach starts the agent again in the background (its own session, no
// terminal, its pid in the pidfile setting's file), as `puppet agent`
// daemonizes, and returns. The daemon logs to syslog (or --logdest's
// files) as Puppet's; its stdout is /dev/null and its stderr, which only
// a crash writes to, is appended to LOGDIR/pippet-agent.log.
func detach(s *config.Settings, args []string, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "receiver agent: daemonize: %v\n", err)
		return ExitFailed
	}
	logFile := filepath.Join(s.Logdir, "pippet-agent.log")
	if err := os.MkdirAll(s.Logdir, 0o750); err != nil {
		fmt.Fprintf(stderr, "receiver agent: daemonize: %v\n", err)
		return ExitFailed
	}
	logf, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		fmt.Fprintf(stderr, "receiver agent: daemonize: %v\n", err)
		return ExitFailed
	}
	defer logf.Close()
	cmd := exec.Command(self, append(append([]string{"agent"}, args...), "--daemonized", "--no-daemonize")...)
	cmd.Stdout, cmd.Stderr = nil, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "receiver agent: daemonize: %v\n", err)
		return ExitFailed
	}
	if pidfile := s.Values["pidfile"]; pidfile != "" {
		if err := os.MkdirAll(filepath.Dir(pidfile), 0o755); err == nil {
			_ = os.WriteFile(pidfile, []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o644)
		}
	}
	_ = cmd.Process.Release()
	return ExitOK
}

// agentVersion is what "Starting Puppet client version" names: the
// Puppet release the agent stands in for, and pippet's.
func agentVersion() string {
	return protocol.PuppetVersion + " (pippet receiver " + protocol.Version + ")"
}
