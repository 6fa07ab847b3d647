// Package pkg is the `package` type: software installed through the
// Debian package tools, with Puppet 7's two Debian providers.
//
// # Providers
//
// `apt` (the default on Debian) installs with apt-get, so it can fetch
// packages from the configured sources, install a given version or a
// version range (`>=1.0 <2.0`, the best one `apt-cache madison` offers),
// and follow `latest` (the candidate `apt-cache policy` names). `dpkg`
// installs only from a `.deb` file named by `source`; it cannot choose
// versions, so a version as `ensure` is refused up front, exactly as
// Puppet refuses it, and its `latest` is the version in the source file:
// an older file downgrades. `installed` never upgrades with either.
// `provider:` selects one explicitly.
//
// # State
//
// The current state of every package comes from the dpkg database,
// /var/lib/dpkg/status, read and parsed once into a sysfile.Cache and
// reused while the file's identity (device, inode, size, mtime, ctime)
// holds; any change of ours drops it (dpkg rewrites the file anyway). An
// unchanged package therefore costs one stat of the status file and a map
// lookup. The current ensure value is Puppet's: the installed version,
// `absent` for a package whose configuration files remain (or that is
// half installed), `purged` for one dpkg does not know; `mark` is `hold`
// when the package's selection is hold. Only `latest` asks apt, and only
// for a package that is installed: the provider's Resolve replaces the
// desired `latest` by the candidate version (a Latest value), which is
// also what Puppet's messages name (`ensure changed '1.0' to '2.0'`).
//
// # Changes
//
// Every change runs apt-get, dpkg or debconf-set-selections through
// applier/command with DEBIAN_FRONTEND=noninteractive (and apt-listbugs
// and apt-listchanges silenced, as Puppet does), with Puppet's arguments:
// `apt-get -q -y -o DPkg::Options::=--force-confold install NAME[=VERSION]`
// (`--force-confnew` with `configfiles: replace`), `apt-get -y -q remove
// [--purge] NAME`, `dpkg --force-confold -i SOURCE`, `dpkg -r` and `dpkg
// --purge`, `dpkg --set-selections` for holds. apt-get also gets
// `-o DPkg::Lock::Timeout=N` (LockTimeout): when another process holds
// the dpkg lock it waits that long and then fails with apt's message,
// never hanging; dpkg, which fails at once on a held lock, is tried again
// for as long.
package pkg

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Latest is the desired ensure of a `latest` package once its latest
// version is known: the version itself, which the installed one must
// equal.
type Latest string

// String renders the version, as Puppet's messages name it.
func (l Latest) String() string { return string(l) }

// Type is the package type's declaration.
var Type = &applier.Type{
	Name: "package",
	Doc: "Manages packages through the Debian package tools: `apt` (the default on Debian) " +
		"fetches them from the configured apt sources; `dpkg` installs a `.deb` file named by " +
		"`source`. The title is the package name unless `name` is given.",
	Attrs: []*applier.Attr{
		{
			Name: "ensure", Behaviour: applier.Property, Kind: applier.KindString,
			Aliases:  map[string]string{"installed": "present"},
			Default:  "present",
			Validate: validateEnsure,
			InSync:   ensureInSync,
			Doc: "What state the package should be in: `present` (also `installed`: any version, " +
				"never upgraded), `absent` (removed, configuration files kept), `purged` (removed " +
				"with its configuration files), `latest` (upgraded to the newest version available: " +
				"apt's candidate, or for dpkg the version in `source`, which may downgrade), or a " +
				"version (apt only; also a range such as `>=1.0 <2.0`). Defaults to `installed`.",
		},
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindAny,
			Munge: mungeName,
			Doc: "The package name the packaging system uses (namevar; defaults to the title). " +
				"The resource is still referred to by its title.",
		},
		{
			Name: "mark", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values: []string{"hold", "none"},
			Doc: "`hold` keeps the package at its version (dpkg's hold selection); `none` releases " +
				"it. Cannot be combined with `ensure: absent` or `purged`.",
		},
		{
			Name: "source", Behaviour: applier.Parameter, Kind: applier.KindString,
			Validate: validateNotOption("source"),
			Doc: "A .deb file to install from: required by `dpkg`; `apt` installs it (with its " +
				"dependencies from the apt sources) instead of fetching the package.",
		},
		{
			Name: "install_options", Behaviour: applier.Parameter, Kind: applier.KindAny, Array: true,
			Munge: mungeOption,
			Doc: "Extra arguments for `apt-get install` (apt only; ignored by dpkg, as Puppet ignores " +
				"it): strings, or hashes whose pairs become `KEY=VALUE`.",
		},
		{
			Name: "uninstall_options", Behaviour: applier.Parameter, Kind: applier.KindAny, Array: true,
			Munge: mungeOption,
			Doc: "Accepted and ignored: neither apt nor dpkg takes uninstall options (Puppet " +
				"ignores them for both).",
		},
		{
			Name: "responsefile", Behaviour: applier.Parameter, Kind: applier.KindString,
			Validate: validateNotOption("responsefile"),
			Doc: "A debconf preseed file fed to `debconf-set-selections` before apt installs, " +
				"removes or purges the package (apt only; a missing file is skipped with a note, " +
				"as Puppet skips it).",
		},
		{
			Name: "configfiles", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"keep", "replace"}, Default: "keep",
			Doc: "Whether an install or upgrade keeps locally modified configuration files " +
				"(`keep`, dpkg's --force-confold; the default) or replaces them with the " +
				"package's (`replace`, --force-confnew).",
		},
		{
			Name: "allow_virtual", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: false,
			Doc: "Whether a virtual package name may stand for the installed package that provides " +
				"it: with `true` the package whose Provides lists the name is the one managed. " +
				"Default false.",
		},
		{
			Name: "allowcdrom", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"true", "false"},
			Doc: "Let apt install while /etc/apt/sources.list has a cdrom: source (refused " +
				"otherwise, as Puppet refuses it).",
		},
		ignored("adminfile", "Solaris only: accepted and ignored."),
		ignored("reinstall_on_refresh", "Accepted and ignored: apt and dpkg cannot reinstall on refresh."),
		ignored("install_only", "Accepted and ignored: apt and dpkg have no install-only mode."),
		ignored("enable_only", "dnf modules only: accepted and ignored."),
		ignored("flavor", "Accepted and ignored: apt and dpkg have no flavors."),
		ignored("package_settings", "Accepted and ignored: apt and dpkg have no package settings."),
		ignored("command", "Accepted and ignored: apt and dpkg are not targetable."),
		ignored("category", "A read-only parameter set by the package: accepted and ignored."),
		ignored("description", "A read-only parameter set by the package: accepted and ignored."),
		ignored("instance", "A read-only parameter set by the package: accepted and ignored."),
		ignored("platform", "A read-only parameter set by the package: accepted and ignored."),
		ignored("root", "A read-only parameter set by the package: accepted and ignored."),
		ignored("status", "A read-only parameter set by the package: accepted and ignored."),
		ignored("vendor", "A read-only parameter set by the package: accepted and ignored."),
	},
	Validate:  validate,
	Providers: []*applier.ProviderSpec{Apt, Dpkg},
}

func init() { applier.Register(Type) }

func ignored(name, doc string) *applier.Attr {
	return &applier.Attr{Name: name, Behaviour: applier.Parameter, Kind: applier.KindAny, Doc: doc}
}

// reserved are the ensure values that are not versions.
var reserved = map[string]bool{"present": true, "absent": true, "purged": true, "latest": true}

// anyChar is Puppet's pattern for a version: any character but a newline.
var anyChar = regexp.MustCompile(`.`)

func validateEnsure(v any) error {
	s, _ := v.(string)
	if reserved[s] {
		return nil
	}
	if !anyChar.MatchString(s) {
		return fmt.Errorf("Invalid value %q. Valid values are present, absent, purged, disabled, latest. Valid values match /./.", s)
	}
	if strings.ContainsAny(s, "\n\r\x00") {
		return fmt.Errorf("Invalid version %q: a version cannot contain a line break", s)
	}
	return nil
}

// isVersion: ensure names a version (or range) rather than a state.
func isVersion(s string) bool { return s != "" && !reserved[s] }

// mungeName keeps a name that is a string and can be handed to the tools
// as one argument that is not an option.
func mungeName(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("Name must be a String not %s", applier.RubyClass(v))
	}
	if s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t\r\n\x00") {
		return nil, fmt.Errorf("Invalid package name %q: it must not be empty, start with '-' or contain whitespace", s)
	}
	return v, nil // already boxed: no allocation
}

func validateNotOption(attr string) func(v any) error {
	return func(v any) error {
		s, _ := v.(string)
		if s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, "\r\n\x00") {
			return fmt.Errorf("Invalid %s %q: a file path must not be empty, start with '-' or contain a line break", attr, s)
		}
		return nil
	}
}

// mungeOption keeps a string option, and turns a hash into its
// `KEY=VALUE` strings in key order, as Puppet's join_options does.
// Puppet also wraps a value holding a space in double quotes, which then
// reach the command literally; here each option is one argument as given.
func mungeOption(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64, float64, bool:
		return nil, errors.New("Expected either a string or hash of options")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, 0, len(keys))
		for _, k := range keys {
			out = append(out, k+"="+applier.FormatValue(x[k]))
		}
		return out, nil
	}
	return nil, errors.New("Expected either a string or hash of options")
}

func validate(r *applier.Resource) error {
	if r.Given("mark") {
		if e := r.String("ensure"); e == "absent" || e == "purged" {
			return errors.New(`You cannot use "mark" property while "ensure" is one of ["absent", "purged"]`)
		}
	}
	return nil
}

// options flattens install_options (hashes munge to lists of strings).
func options(r *applier.Resource, name string) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case []string:
			out = append(out, x...)
		}
	}
	walk(r.Value(name))
	return out
}

// ensureInSync is Puppet's package ensure insync?: present is any
// installed version; absent is absent or purged; purged only purged;
// latest (resolved to a Latest version) the same version; a version the
// same string, or one the version range includes (apt's own test).
func ensureInSync(is, should any) bool {
	i, _ := is.(string)
	gone := i == "" || i == "absent" || i == "purged"
	switch s := should.(type) {
	case Latest:
		return !gone && i == string(s)
	case string:
		switch s {
		case "present":
			return !gone
		case "latest":
			return false // not installed, or its latest version unknown
		case "absent":
			return gone
		case "purged":
			return i == "purged" || i == ""
		}
		if gone {
			return false
		}
		return i == s || versionSatisfies(i, s)
	}
	return false
}
