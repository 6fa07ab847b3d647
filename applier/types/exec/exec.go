// Package exec declares the exec type: run a command when (and only when)
// its checks say it is needed.
//
// # Model
//
// Puppet models exec with one property, `returns`: the engine reads it
// through the provider's Get, which runs the checks (`refreshonly`,
// `creates`, `unless`, `onlyif`, in that order). When every check passes
// the current value is "notrun", out of sync with the desired exit codes,
// so the engine syncs `returns`, which runs the command (`tries` times at
// most) and succeeds when the exit code is one of `returns`. When a check
// fails Get reports the desired codes themselves and nothing runs. Checks
// run in noop mode too, as in Puppet, so noop tells whether the command
// would run.
//
// A request carrying a refresh (the protocol's "refresh": true, a notify
// edge of the caller's graph) runs the command once more after that, when
// its checks allow: that is the only time a refreshonly command runs.
// Held back by its checks, the refresh is still an event (Triggered
// 'refresh' from 1 event), as Puppet reports it.
//
// # Running a command
//
// Every command runs in its own process group (in its own session when
// the receiver has a controlling terminal),
// with stdin from /dev/null and stdout and stderr combined into one
// bounded buffer that keeps the last 64 KiB. `timeout` and a cancelled
// context kill the whole process group (SIGTERM, then SIGKILL after a
// second). The environment is the receiver's minus HOME, USER and
// LOGNAME, plus PATH from `path` and the `environment` settings. `user`
// and `group` run the command under another account (names or ids,
// supplementary groups of the user included); `umask` is applied by a
// /bin/sh wrapper that execs the command, so the receiver's own umask is
// never touched.
//
// The posix provider (the default) runs a command string the way Ruby's
// Kernel.exec does for Puppet: a string with no shell metacharacter and no
// leading shell keyword or special built-in is split on blanks and run
// directly; any other string runs under `/bin/sh -c`. An array command
// always runs directly. The shell provider always passes the string to
// `/bin/sh -c`, and does not require a qualified command.
package exec

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Type is the exec type's declaration.
var Type = &applier.Type{
	Name:      "exec",
	Refreshes: true,
	// As Puppet's exec: one of command, unless and onlyif given as
	// Sensitive makes all three secret (their output too).
	SensitiveWith: map[string][]string{
		"command": {"unless", "onlyif"},
		"unless":  {"command", "onlyif"},
		"onlyif":  {"command", "unless"},
	},
	// Puppet's autorequires: the working directory, the program of each
	// command given by absolute path, and the user the commands run as.
	Auto: []applier.AutoRel{
		{Type: "file", Attr: "cwd"},
		{Type: "file", Attr: "command", Titles: applier.Executable},
		{Type: "file", Attr: "onlyif", Titles: applier.Executable},
		{Type: "file", Attr: "unless", Titles: applier.Executable},
		{Type: "user", Attr: "user", Titles: applier.Names},
	},
	Doc: "Executes external commands. Any command in an exec resource must be able to run " +
		"multiple times without causing harm: it runs whenever its checks (`creates`, " +
		"`onlyif`, `unless`, `refreshonly`) allow, so guard it with them. Commands that are " +
		"not fully qualified need `path`.",
	Attrs: []*applier.Attr{
		{
			Name:      "command",
			Behaviour: applier.Namevar,
			Kind:      applier.KindAny,
			Munge:     mungeCommand,
			Doc: "The actual command to execute: a string, or an array of the program and its " +
				"arguments (run without a shell). Must be fully qualified or found through `path`. " +
				"Defaults to the title.",
		},
		{
			Name:      "returns",
			Behaviour: applier.Property,
			Kind:      applier.KindInteger,
			Array:     true,
			// An exit code is never a float: Puppet takes 0.0, runs the
			// command, and fails it (returned 0 instead of one of [0.0]);
			// refused here before anything runs.
			Accepts:  applier.AcceptString | applier.AcceptInteger,
			Default:  int64(0),
			Validate: validateExitCode,
			Doc: "The expected exit code(s): one or an array. Any other exit code fails the " +
				"resource. Default 0.",
		},
		{
			Name:      "creates",
			Behaviour: applier.Parameter,
			Kind:      applier.KindPath,
			Array:     true,
			Doc: "A file (or array of files) that the command creates: when any of them exists " +
				"the command is not run.",
		},
		{
			Name:      "unless",
			Behaviour: applier.Parameter,
			Kind:      applier.KindAny,
			Munge:     mungeCommandList,
			Doc: "A test command (or array of commands; each a string or an array) run with the " +
				"same provider, path, user, group, cwd and environment: the command runs only if " +
				"every test exits non-zero.",
		},
		{
			Name:      "onlyif",
			Behaviour: applier.Parameter,
			Kind:      applier.KindAny,
			Munge:     mungeCommandList,
			Doc: "A test command (or array of commands; each a string or an array) run with the " +
				"same provider, path, user, group, cwd and environment: the command runs only if " +
				"every test exits 0.",
		},
		{
			Name:      "refreshonly",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    []string{"true", "false"},
			Default:   "false",
			Doc: "Run the command only on a refresh: a request carrying `\"refresh\": true`, " +
				"which a graph engine sends when a notify edge into the exec fires.",
		},
		{
			Name:      "cwd",
			Behaviour: applier.Parameter,
			Kind:      applier.KindPath,
			Doc:       "The directory to run the command in. If it does not exist the command fails.",
		},
		{
			Name:      "environment",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Array:     true,
			Validate:  validateEnvSetting,
			Doc: "Additional environment variables, as `NAME=value` strings (an array for " +
				"several). A PATH set here overrides `path`.",
		},
		{
			Name:      "path",
			Behaviour: applier.Parameter,
			Kind:      applier.KindAny,
			Accepts:   applier.AcceptString,
			Munge:     mungeSearchPath,
			Doc: "The search path used for command execution: an array of directories or a " +
				"colon-separated string. Commands must be fully qualified when it is not given.",
		},
		{
			Name:      "timeout",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   "300",
			Munge:     mungeSeconds("The timeout must be a number."),
			Range:     &applier.Range{Min: 0, Max: applier.MaxSeconds, What: "timeout"},
			Doc: "The maximum time in seconds the command (and each check) may take; then its " +
				"whole process group is killed and the resource fails. 0 disables it. Default 300.",
		},
		{
			Name:      "tries",
			Behaviour: applier.Parameter,
			Kind:      applier.KindInteger,
			Default:   int64(1),
			Validate: func(v any) error {
				if v.(int64) < 1 {
					return errors.New("Tries must be an integer >= 1")
				}
				return nil
			},
			Doc: "How many times to try the command until it returns an accepted exit code. " +
				"The timeout applies to each try. Default 1.",
		},
		{
			Name:      "try_sleep",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   "0",
			Munge:     mungeSeconds("try_sleep must be a number"),
			Range:     &applier.Range{Min: 0, Max: applier.MaxSeconds, What: "try_sleep"},
			Doc:       "Seconds to sleep between tries. Default 0.",
		},
		{
			Name:      "user",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Validate:  applier.ValidID("user"),
			Doc: "The user (name or uid) to run the command and its checks as; only root can " +
				"run commands as another user. Their supplementary groups apply too.",
		},
		{
			Name:      "group",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Validate:  applier.ValidID("group"),
			Doc:       "The group (name or gid) to run the command and its checks as.",
		},
		{
			Name:      "umask",
			Behaviour: applier.Parameter,
			Kind:      applier.KindAny,
			Munge:     mungeUmask,
			Format:    func(v any) string { return fmt.Sprintf("%04o", v) },
			Doc:       "The umask to run the command with: an octal string such as `'0022'` (quoted: an unquoted 0022 is a YAML integer).",
		},
		{
			Name:      "logoutput",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    []string{"true", "false", "on_failure"},
			Default:   "on_failure",
			Doc: "Whether to log the command's output at the resource's loglevel: `true`, " +
				"`false`, or `on_failure` (the default: only when the exit code is not accepted).",
		},
		{
			Name:      "refresh",
			Behaviour: applier.Parameter,
			Kind:      applier.KindAny,
			Accepts:   applier.AcceptString,
			Munge:     mungeCommand,
			Doc: "The command to run on refresh instead of `command`. Accepted for " +
				"compatibility; nothing sends refresh events to the receiver.",
		},
	},
	Validate: validate,
	Providers: []*applier.ProviderSpec{
		{
			Name:     "posix",
			Doc:      "Runs commands directly, or through /bin/sh -c when the string needs a shell (as Ruby's Kernel.exec decides).",
			Confine:  applier.Confine{Features: []string{"posix"}},
			Defaults: map[string][]string{"feature": {"posix"}},
			New:      newProvider(false),
		},
		{
			Name:    "shell",
			Doc:     "Passes every command string to /bin/sh -c; commands need not be qualified.",
			Confine: applier.Confine{Features: []string{"posix"}, Files: []string{"/bin/sh"}},
			New:     newProvider(true),
		},
	},
}

func init() { applier.Register(Type) }

// mungeCommand accepts a string or an array of strings (program and arguments).
func mungeCommand(v any) (any, error) {
	switch c := v.(type) {
	case string:
		return c, nil
	case []any:
		if len(c) == 0 {
			return nil, errors.New("Command must not be an empty array")
		}
		out := make([]any, len(c))
		for i, e := range c {
			s, ok := scalar(e)
			if !ok {
				return nil, fmt.Errorf("Command must be a String or Array<String>, got an element %v", e)
			}
			out[i] = s
		}
		return out, nil
	default:
		if s, ok := scalar(v); ok {
			return s, nil
		}
		return nil, fmt.Errorf("Command must be a String or Array<String>, got value of class %s", applier.RubyClass(v))
	}
}

// mungeCommandList makes onlyif/unless a list of commands: a string is one
// command; an array holds strings and arrays (each array one command).
func mungeCommandList(v any) (any, error) {
	list, ok := v.([]any)
	if !ok {
		c, err := mungeCommand(v)
		if err != nil {
			return nil, err
		}
		return []any{c}, nil
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		c, err := mungeCommand(e)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64, int, float64, bool, uint64:
		return applier.FormatValue(x), true
	}
	return "", false
}

// mungeSearchPath flattens a string or an array of strings, splitting each on ':'.
func mungeSearchPath(v any) (any, error) {
	var items []any
	switch p := v.(type) {
	case []any:
		items = p
	default:
		items = []any{p}
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		s, ok := scalar(it)
		if !ok {
			return nil, fmt.Errorf("path must be a string or an array of strings, got %v", it)
		}
		for _, d := range strings.Split(s, ":") {
			if d != "" {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

func mungeSeconds(msg string) func(v any) (any, error) {
	return func(v any) (any, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v.(string)), 64)
		// Go reads NaN and Inf(inity); Ruby's Float() refuses them.
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errors.New(msg)
		}
		if f < 0 {
			if strings.HasPrefix(msg, "try_sleep") {
				return nil, errors.New("try_sleep cannot be a negative number")
			}
			f = 0
		}
		return f, nil
	}
}

var umaskRe = regexp.MustCompile(`^0?[0-7]{1,4}$`)

func mungeUmask(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		// An unquoted YAML 0022 is the integer 18: ambiguous, refused as Puppet does.
		return nil, fmt.Errorf("The umask specification must be a string such as '0022', not %v (quote it in YAML)", v)
	}
	if !umaskRe.MatchString(s) {
		return nil, fmt.Errorf("The umask specification is invalid: %q", s)
	}
	n, _ := strconv.ParseInt(s, 8, 64)
	if n > 0o777 {
		return nil, fmt.Errorf("The umask specification is invalid: %q", s)
	}
	return n, nil
}

var envRe = regexp.MustCompile(`^\w+=`)

func validateEnvSetting(v any) error {
	if !envRe.MatchString(v.(string)) {
		return fmt.Errorf("Invalid environment setting '%s'", v)
	}
	return nil
}

func validateExitCode(v any) error {
	if n := v.(int64); n < 0 || n > 255 {
		return fmt.Errorf("exit codes are between 0 and 255, not %d", n)
	}
	return nil
}

// validate requires qualified commands (or a path) unless the shell
// provider was asked for.
func validate(r *applier.Resource) error {
	if r.String("provider") == "shell" || r.Has("path") {
		return nil
	}
	check := func(c any) error {
		exe := extractExe(c)
		if !strings.HasPrefix(exe, "/") {
			return fmt.Errorf("'%s' is not qualified and no path was specified. Please qualify the command or specify a path.", exe)
		}
		return nil
	}
	if err := check(r.Value("command")); err != nil {
		return err
	}
	for _, p := range []string{"unless", "onlyif"} {
		list, _ := r.Value(p).([]any)
		for _, c := range list {
			if err := check(c); err != nil {
				return applier.ParamErrorf(p, "%w", err)
			}
		}
	}
	return nil
}

// extractExe finds the program of a command as Puppet does: the first
// element of an array; for a string, a leading quoted word or the text
// before the first space.
func extractExe(c any) string {
	switch x := c.(type) {
	case []any:
		if len(x) > 0 {
			s, _ := x[0].(string)
			return s
		}
		return ""
	case string:
		if len(x) > 1 && (x[0] == '"' || x[0] == '\'') {
			if end := strings.IndexByte(x[1:], x[0]); end > 0 {
				return x[1 : 1+end]
			}
		}
		exe, _, _ := strings.Cut(x, " ")
		return exe
	}
	return ""
}
