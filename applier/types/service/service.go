// Package service is the `service` type: whether a daemon runs, whether it
// starts at boot, and its restart on a refresh, as Puppet 7 manages them.
//
// Three providers, chosen as Puppet chooses on Debian: `systemd` where
// PID 1 is systemd (systemctl start, stop, is-active, is-enabled, enable,
// disable, mask), `debian` otherwise (the init script found in `path`,
// /etc/init.d by default; `service NAME status` as the status with
// hasstatus; update-rc.d and invoke-rc.d for enable), and `base`, which
// needs its commands given (`start`, `stop`, `status`, `restart`) or a
// `binary` to start and a `pattern` to find in the process table (ps -ef).
//
// The status decides `ensure`: the status command's exit code (0 is
// running), else a process whose ps line matches `pattern`. When ensure is
// out of sync it is synced first and `enable` after it, as Puppet syncs
// them; a refresh (the request's "refresh": true) restarts a service that
// is running and was not just started.
//
// Attributes a provider cannot manage (Puppet's provider features:
// enable on base, flags, timeout, logonaccount on Linux) are accepted and
// left alone with a debug message, as Puppet leaves them.
package service

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Type is the service type's declaration.
var Type = &applier.Type{
	Name:      "service",
	Refreshes: true,
	Doc: "Manage running services: whether the service runs (`ensure`), whether it starts at " +
		"boot (`enable`), and restarting it on a refresh. Init scripts need a working status " +
		"command; otherwise give `status`, or set `hasstatus: false` to look for `pattern` in " +
		"the process table.",
	Attrs: []*applier.Attr{
		{
			Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values:  []string{"stopped", "running"},
			Aliases: map[string]string{"false": "stopped", "true": "running"},
			Doc:     "Whether the service should be running: `running` (or `true`) or `stopped` (or `false`).",
		},
		{
			Name: "enable", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values:   []string{"true", "false", "manual", "mask", "delayed"},
			Features: []string{"enableable"},
			InSync:   enableInSync,
			Doc: "Whether the service starts at boot: `true`, `false`, `mask` (systemd: cannot be " +
				"started at all). `manual` and `delayed` are Windows'. Left alone when not given.",
		},
		{
			Name: "flags", Behaviour: applier.Property, Kind: applier.KindString,
			Features: []string{"flaggable"},
			Doc:      "Flags to pass to the startup script (providers that support them: none on Linux).",
		},
		{
			Name: "logonaccount", Behaviour: applier.Property, Kind: applier.KindString,
			Features: []string{"manages_logon_credentials"},
			Doc:      "The account the service runs as (Windows only).",
		},
		{
			Name: "logonpassword", Behaviour: applier.Parameter, Kind: applier.KindString,
			Features: []string{"manages_logon_credentials"},
			Validate: func(v any) error {
				if strings.Contains(v.(string), ":") {
					return fmt.Errorf("Passwords cannot include ':'")
				}
				return nil
			},
			Doc: "The password of logonaccount (Windows only).",
		},
		{
			Name: "binary", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The daemon to run to start the service when no `start` is given (base provider), " +
				"and the default `pattern`.",
		},
		{
			Name: "hasstatus", Behaviour: applier.Parameter, Kind: applier.KindEnum, Default: "true",
			Values: []string{"true", "false"},
			Doc: "Whether the init script has a working status command (exit 0: running). With " +
				"`false` and no `status`, the process table is searched for `pattern`.",
		},
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: validName,
			Doc:      "The name of the service: the init script's name, or the systemd unit.",
		},
		{
			Name: "path", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true,
			Munge: absolutePath,
			Doc:   "Where init scripts are looked for, a list or colon-separated (debian: /etc/init.d).",
		},
		{
			Name: "pattern", Behaviour: applier.Parameter, Kind: applier.KindString,
			DefaultFunc: func(r *applier.Resource) any {
				if b := r.String("binary"); b != "" {
					return b
				}
				return r.Name()
			},
			Validate: func(v any) error {
				if _, err := regexp.Compile(v.(string)); err != nil {
					return fmt.Errorf("invalid regular expression: %w", err)
				}
				return nil
			},
			Doc: "A regular expression searched in the process table (`ps -ef` lines) for the status " +
				"when there is no status command, and to find the process to stop when there is no stop " +
				"command. Defaults to `binary`, else the name.",
		},
		{Name: "restart", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The command to restart the service; otherwise it is stopped and started (or, with " +
				"`hasrestart`, the init script's restart)."},
		{Name: "start", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The command to start the service."},
		{Name: "status", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The command telling whether the service runs: exit 0 running, anything else stopped."},
		{Name: "stop", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The command to stop the service; otherwise (base) the process `pattern` finds is killed."},
		{Name: "control", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "HP-UX's control variable: accepted and unused."},
		{
			Name: "hasrestart", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"true", "false"},
			Doc:    "Whether the init script has a restart command (else stop and start are used).",
		},
		{Name: "manifest", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "Solaris' service manifest: accepted and unused."},
		{
			Name: "timeout", Behaviour: applier.Parameter, Kind: applier.KindInteger, Default: int64(300),
			Validate: func(v any) error {
				if v.(int64) < 1 {
					return fmt.Errorf("\"%d\" is not a positive integer: the timeout parameter must be specified as a positive integer", v)
				}
				return nil
			},
			Range: &applier.Range{Min: 1, Max: applier.MaxSeconds, What: "timeout"},
			Doc: "Seconds any one service command may run before it is killed with its process group " +
				"(default 300). Puppet applies it on Windows only; here a stuck init script cannot hang the receiver.",
		},
	},
	Validate:  validate,
	Providers: []*applier.ProviderSpec{Systemd, Debian, Base},
}

func init() { applier.Register(Type) }

func validName(v any) error {
	s := v.(string)
	if s == "" || strings.ContainsAny(s, "\n\r\x00") {
		return fmt.Errorf("Invalid service name %q", s)
	}
	// Puppet joins the name to each search path as it is, so a name with
	// a slash runs a script outside /etc/init.d ("../../tmp/x"), and one
	// starting with '-' reaches systemctl and update-rc.d as an option.
	// No init script or unit is named so: refused.
	if strings.Contains(s, "/") || s == "." || s == ".." || strings.HasPrefix(s, "-") {
		return fmt.Errorf("Invalid service name %q: it must not contain '/' or start with '-'", s)
	}
	return nil
}

func absolutePath(v any) (any, error) {
	s := v.(string)
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("Paths must be fully qualified, not '%s'", s)
	}
	return s, nil
}

// validate checks enable values the chosen provider's features decide in
// the provider (mask needs maskable); here only what holds everywhere.
func validate(r *applier.Resource) error {
	if r.Given("logonpassword") && !r.Given("logonaccount") {
		return fmt.Errorf("The 'logonaccount' parameter is mandatory when setting 'logonpassword'.")
	}
	return nil
}

// enableInSync: systemd's static and indirect units cannot be enabled or
// disabled; the provider reports them as such and they are in sync with
// anything but mask.
func enableInSync(is, should any) bool {
	i, _ := is.(string)
	s, _ := should.(string)
	switch i {
	case "static":
		return s != "mask"
	case "indirect":
		return true
	}
	return i == s
}

// paths splits each element of path on colons.
func paths(r *applier.Resource, def []string) []string {
	if !r.Has("path") {
		return def
	}
	var out []string
	for _, p := range r.Strings("path") {
		for _, e := range strings.Split(p, ":") {
			if e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}
