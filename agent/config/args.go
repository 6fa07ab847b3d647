package config

import (
	"fmt"
	"strings"
)

// Args is `puppet agent`'s command line, read by ParseArgs.
type Args struct {
	// Settings are the settings the command line sets (name -> value,
	// booleans "true"/"false"), for Load's overrides. --test's settings
	// are among them.
	Settings map[string]string

	// Test is --test/-t: onetime, no-daemonize, verbose,
	// detailed-exitcodes, show_diff, no usecacheonfailure, no splay (set
	// in Settings and below, as Puppet's --test does, whatever else the
	// command line says).
	Test bool
	// DetailedExitcodes: 2 when changes were made, 4 on failures, 6 both.
	DetailedExitcodes bool
	// Verbose (-v) logs info, Debug (-d) debug.
	Verbose, Debug bool
	// Disable is --disable [MESSAGE]: DisableMessage is the message, or
	// Puppet's "reason not specified". Enable is --enable.
	Disable, Enable bool
	DisableMessage  string
	// Logdest is --logdest/-l (comma-separated destinations: console,
	// syslog, a file); also in Settings["logdest"].
	Logdest []string
	// Fingerprint is --fingerprint (print the certificate request's
	// fingerprint), with --digest's algorithm.
	Fingerprint bool
	Digest      string
	// JobID is --job-id (recorded in the report).
	JobID string
	// Help is --help/-h, Version --version/-V.
	Help, Version bool
	// Rest are the arguments that are not options (puppet agent takes
	// none: the caller refuses them).
	Rest []string
}

// DefaultDisableMessage is the message `puppet agent --disable` records
// without one.
const DefaultDisableMessage = "reason not specified"

// shortSettings are the one-letter flags of settings.
var shortSettings = map[byte]string{'D': "daemonize", 'E': "environment", 'o': "onetime"}

// ParseArgs reads `puppet agent`'s command line: every Puppet setting as
// --name value or --name=value (dashes may stand for underscores), boolean
// settings as --name/--no-name (or --name=true/false), the settings' short
// flags (-o onetime, -D daemonize, -E environment), and the agent's own
// options: --test/-t, --detailed-exitcodes, --verbose/-v, --debug/-d,
// --disable [MESSAGE], --enable, --logdest/-l DEST, --waitforcert/-w
// DURATION (the setting), --fqdn/-f NAME (certname), --fingerprint,
// --digest ALG, --job-id ID, --help/-h, --version/-V. Short flags without
// a value bundle (-tv). "--" ends the options. A value is not checked here:
// Load checks it by the setting's type.
func ParseArgs(args []string) (*Args, error) {
	a := &Args{Settings: map[string]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		// next takes an option's value: the rest of --name=value, else the
		// next argument.
		next := func(flag string, inline *string) (string, error) {
			if inline != nil {
				return *inline, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", flag)
			}
			i++
			return args[i], nil
		}
		switch {
		case arg == "--":
			a.Rest = append(a.Rest, args[i+1:]...)
			i = len(args)
			continue
		case strings.HasPrefix(arg, "--"):
			name, val, hasVal := strings.Cut(arg[2:], "=")
			var inline *string
			if hasVal {
				inline = &val
			}
			noVal := func() error {
				if hasVal {
					return fmt.Errorf("--%s takes no value", name)
				}
				return nil
			}
			var err error
			switch name {
			case "test":
				a.Test, err = true, noVal()
			case "detailed-exitcodes", "detailed_exitcodes":
				a.DetailedExitcodes, err = true, noVal()
			case "verbose":
				a.Verbose, err = true, noVal()
			case "debug":
				a.Debug, err = true, noVal()
			case "enable":
				a.Enable, err = true, noVal()
			case "fingerprint":
				a.Fingerprint, err = true, noVal()
			case "help":
				a.Help, err = true, noVal()
			case "version":
				a.Version, err = true, noVal()
			case "disable":
				a.Disable = true
				switch {
				case hasVal:
					a.DisableMessage = val
				case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
					i++
					a.DisableMessage = args[i]
				}
			case "logdest":
				var v string
				if v, err = next("--logdest", inline); err == nil {
					a.addLogdest(v)
				}
			case "digest":
				a.Digest, err = next("--digest", inline)
			case "job-id", "job_id":
				a.JobID, err = next("--job-id", inline)
			case "fqdn":
				var v string
				if v, err = next("--fqdn", inline); err == nil {
					a.Settings["certname"] = v
				}
			default:
				err = a.setting(name, inline, next)
			}
			if err != nil {
				return nil, err
			}
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			if err := a.shorts(arg, &i, args); err != nil {
				return nil, err
			}
		default:
			a.Rest = append(a.Rest, arg)
		}
	}
	if a.Test {
		// Puppet's setup_test, after the command line: it wins.
		for k, v := range map[string]string{"onetime": "true", "daemonize": "false", "usecacheonfailure": "false", "splay": "false", "show_diff": "true"} {
			a.Settings[k] = v
		}
		a.Verbose, a.DetailedExitcodes = true, true
	}
	if a.Disable && a.DisableMessage == "" {
		a.DisableMessage = DefaultDisableMessage
	}
	if a.Disable && a.Enable {
		return nil, fmt.Errorf("--enable and --disable contradict each other")
	}
	return a, nil
}

func (a *Args) addLogdest(v string) {
	a.Settings["logdest"] = v
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			a.Logdest = append(a.Logdest, d)
		}
	}
}

// setting reads --name[=value] / --no-name for a Puppet setting.
func (a *Args) setting(name string, inline *string, next func(string, *string) (string, error)) error {
	key := strings.ReplaceAll(name, "-", "_")
	if d := byName[key]; d != nil {
		if isBool(d) {
			v := "true"
			if inline != nil {
				v = strings.ToLower(*inline)
			}
			a.Settings[key] = v
			return nil
		}
		v, err := next("--"+name, inline)
		if err != nil {
			return err
		}
		a.Settings[key] = v
		return nil
	}
	if strings.HasPrefix(key, "no_") {
		if d := byName[key[3:]]; d != nil && isBool(d) {
			if inline != nil {
				return fmt.Errorf("--%s takes no value", name)
			}
			a.Settings[key[3:]] = "false"
			return nil
		}
	}
	return fmt.Errorf("unknown option --%s (not a puppet agent option or Puppet setting)", name)
}

func isBool(d *def) bool {
	if d.kind == kAlias {
		d = byName[d.alias]
	}
	return d.kind == kBool
}

// shorts reads a group of one-letter flags (-t, -tv, -E prod, -Eprod).
func (a *Args) shorts(arg string, i *int, args []string) error {
	for j := 1; j < len(arg); j++ {
		c := arg[j]
		// value: the rest of this argument, else the next one.
		value := func() (string, error) {
			if j+1 < len(arg) {
				v := arg[j+1:]
				j = len(arg)
				return v, nil
			}
			if *i+1 >= len(args) {
				return "", fmt.Errorf("-%c needs a value", c)
			}
			*i++
			return args[*i], nil
		}
		switch c {
		case 't':
			a.Test = true
		case 'v':
			a.Verbose = true
		case 'd':
			a.Debug = true
		case 'h':
			a.Help = true
		case 'V':
			a.Version = true
		case 'o', 'D':
			a.Settings[shortSettings[c]] = "true"
		case 'E', 'l', 'w', 'f':
			v, err := value()
			if err != nil {
				return err
			}
			switch c {
			case 'E':
				a.Settings["environment"] = v
			case 'l':
				a.addLogdest(v)
			case 'w':
				a.Settings["waitforcert"] = v
			case 'f':
				a.Settings["certname"] = v
			}
		default:
			return fmt.Errorf("unknown option -%c in %s", c, arg)
		}
	}
	return nil
}
