// Package user is the `user` type: a local account in /etc/passwd and
// /etc/shadow, managed with Puppet 7's useradd provider (useradd, usermod,
// userdel, chage, chpasswd).
//
// The type is data: Puppet's attributes, munged and validated as Puppet
// does (a uid or gid of digits is a number, a gid may be a group name,
// ages must be numbers, expiry a YYYY-MM-DD date or `absent`, a password
// may not contain a colon). ensure defaults to `present` when the request
// gives any property, as Puppet's does.
//
// The provider reads /etc/passwd, /etc/shadow (only when a password,
// age or expiry is managed) and /etc/group (only for groups or a gid given
// by name) through the shared accounts package, which keeps each parsed
// file while it is unchanged; an unchanged user costs a stat of each file
// it needs. Resolve settles what depends on the system before Get reads
// the state: a gid given by name becomes its number (a group that does not
// exist stays a name: useradd refuses it on create, and a change fails
// with Puppet's "Could not find group(s) NAME"), groups with membership
// `minimum` become the union of the current and the given groups, and the
// files purge_ssh_keys names are expanded against the home directory.
//
// Creating runs one useradd with Puppet's flags in Puppet's order
// (`-c -e -g -G -d -s -u`, then `-o`, `-m` or `-M`, `-r`), then chage for
// the password ages and chpasswd -e for the password, as Puppet's provider
// does; each other property is changed by its own usermod, chage or
// chpasswd. A shell must be an existing executable absolute path. Home
// directories are left as the tools leave them: `managehome` makes useradd
// create the home from /etc/skel owned by the user (an existing directory
// is left as it is) and userdel -r remove it; a changed `home` is only
// recorded (usermod -d without -m), not moved.
package user

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/accounts"
)

// Secret is a password as the type holds it: it prints as [redacted]
// everywhere (answers, events, logs), as Puppet's sensitive property does.
type Secret string

// String hides the value.
func (Secret) String() string { return "[redacted]" }

// unsupported are Puppet's attributes for Solaris RBAC, AIX and macOS,
// whose provider features useradd lacks: accepted, not managed.
var unsupported = append(append(append(
	accounts.Unsupported("manages_solaris_rbac", "roles", "auths", "profiles", "keys", "project"),
	accounts.Unsupported("manages_aix_lam", "ia_load_module", "attributes")...),
	accounts.Unsupported("manages_password_salt", "salt", "iterations")...),
	accounts.Unsupported("manages_loginclass", "loginclass")...)

// unmanaged are the attributes accepted and not managed here.
var unmanaged = accounts.Names(unsupported, "forcelocal")

func membership(name, of string) *applier.Attr {
	return &applier.Attr{
		Name: name, Behaviour: applier.Parameter, Kind: applier.KindEnum,
		Values: []string{"inclusive", "minimum"}, Default: "minimum",
		Doc: "Whether " + of + " are the complete list (`inclusive`) or a minimum (`minimum`, the default). Accepted and unused here.",
	}
}

// Type is the user type's declaration.
var Type = &applier.Type{
	Name: "user",
	// Puppet's autorequires: the primary group and the other groups, by name.
	Auto: []applier.AutoRel{
		{Type: "group", Attr: "gid", Titles: applier.Names},
		{Type: "group", Attr: "groups", Titles: applier.Names},
	},
	Doc: "Manage users: local accounts in /etc/passwd and /etc/shadow, created, changed and " +
		"removed with the system's own tools (useradd, usermod, userdel, chage, chpasswd).",
	Attrs: append([]*applier.Attr{
		{
			Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values: []string{"present", "absent"}, DefaultFunc: ensureDefault,
			Doc: "The basic state that the account should be in: `present` or `absent`. " +
				"Defaults to `present` when the request gives any property.",
		},
		{
			Name: "home", Behaviour: applier.Property, Kind: applier.KindString,
			Doc: "The home directory of the user. It is created only by `managehome` when the " +
				"account is created; changing it records the new path (`usermod -d`) and moves nothing.",
		},
		{
			Name: "uid", Behaviour: applier.Property, Kind: applier.KindAny, Munge: mungeID,
			Range: applier.IDRange,
			Doc: "The user ID; must be specified numerically. An account created without one " +
				"gets the next free id by useradd's rules. A negative id or one beyond 2^32-2 is " +
				"an error answer, before useradd runs.",
		},
		{
			Name: "gid", Behaviour: applier.Property, Kind: applier.KindAny, Munge: mungeID,
			Range: applier.IDRange,
			Doc: "The user's primary group, as a number or a group name (resolved through " +
				"/etc/group; compared as the number). An account created without one gets the " +
				"group named like it when that exists, else useradd's default (a new user group).",
		},
		{
			Name: "comment", Behaviour: applier.Property, Kind: applier.KindString,
			Doc: "A description of the user (the GECOS field), generally the full name.",
		},
		{
			Name: "shell", Behaviour: applier.Property, Kind: applier.KindString,
			Doc: "The user's login shell. It must be an absolute path to an existing executable; " +
				"otherwise the change fails (`Shell /bin/x must exist`).",
		},
		{
			Name: "password", Behaviour: applier.Property, Kind: applier.KindString,
			Munge: func(v any) (any, error) { return Secret(v.(string)), nil },
			Validate: func(v any) error {
				s := string(v.(Secret))
				if strings.Contains(s, ":") {
					return fmt.Errorf("Passwords cannot include ':'")
				}
				if strings.ContainsAny(s, "\n\r") {
					return fmt.Errorf("Passwords cannot include a newline")
				}
				return nil
			},
			InSync: func(is, should any) bool { i, ok := is.(Secret); return ok && i == should.(Secret) },
			Doc: "The user's password, in the encrypted form the system uses (a crypt(3) hash " +
				"such as `$6$salt$...`), stored as given with `chpasswd -e`: a plain text value is " +
				"stored as it is, as Puppet does. It may not contain a colon or a newline. Its " +
				"value never appears in answers or logs (`[redacted]`).",
		},
		age("password_min_age", "minimum", "The minimum number of days a password must be used before it may be changed (`chage -m`)."),
		age("password_max_age", "maximum", "The maximum number of days a password may be used before it must be changed (`chage -M`)."),
		age("password_warn_days", "warning", "The number of days before a password is going to expire (see the maximum password age) during which the user should be warned (`chage -W`)."),
		{
			Name: "groups", Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Unordered: true, Validate: validateGroup,
			Doc: "The groups to which the user belongs besides the primary group, by name, as " +
				"an array. With `membership: minimum` (the default) the user is added to them and " +
				"kept in others; with `inclusive` it is a member of only these. Read from the " +
				"member lists of /etc/group.",
		},
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Doc: "The user name (namevar). useradd decides which names are valid (no colon...).",
		},
		{
			Name: "membership", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"inclusive", "minimum"}, Default: "minimum",
			Doc: "Whether `groups` is the complete list of the user's groups (`inclusive`) or a " +
				"minimum (`minimum`, the default).",
		},
		{
			Name: "system", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Whether the user is a system user, with a lower UID (`useradd -r`). Used only " +
				"when the account is created.",
		},
		{
			Name: "allowdupe", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Whether to allow duplicate UIDs (`-o` on create and on a uid change).",
		},
		{
			Name: "managehome", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Whether to manage the home directory when the account is created or removed: " +
				"`useradd -m` creates it from /etc/skel owned by the user (an existing directory " +
				"is left as it is), `userdel -r` removes it. It has no effect on an account that " +
				"already exists; without it, useradd gets `-M` and makes no home.",
		},
		{
			Name: "expiry", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: func(v any) error {
				s := v.(string)
				if s == "absent" {
					return nil
				}
				if !dateRe.MatchString(s) {
					return fmt.Errorf("Expiry dates must be YYYY-MM-DD or the string \"absent\"")
				}
				// useradd would take 2020-13-45 as a day in 2021; a day
				// before 1970 is a negative day number, which shadow
				// reads as no expiry.
				if d, err := time.Parse(time.DateOnly, s); err != nil || d.Year() < 1970 {
					return fmt.Errorf("Expiry date %s is not a date from 1970-01-01 on", s)
				}
				return nil
			},
			Doc: "The expiry date for this user, as a zero-padded YYYY-MM-DD date, or `absent` " +
				"for an account that never expires.",
		},
		membership("role_membership", "`roles`"),
		membership("auth_membership", "`auths`"),
		membership("profile_membership", "`profiles`"),
		membership("key_membership", "`keys`"),
		membership("attribute_membership", "`attributes`"),
		{
			Name: "purge_ssh_keys", Behaviour: applier.Property, Kind: applier.KindAny,
			Default: false, Munge: mungePurge, InSync: purgeInSync, Format: formatPurge,
			Doc: "Whether to remove the SSH keys of this user that no ssh_authorized_key resource " +
				"manages: `false` (the default), `true` (the keys in ~/.ssh/authorized_keys), or " +
				"an array of files, absolute or starting with `~/` or `%h/` (the home directory). " +
				"The receiver sees one resource at a time, so every key line in those files is " +
				"removed; comments, blank lines and other lines are kept.",
		},
		{
			Name: "forcelocal", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Forces the management of local accounts when accounts also come from another " +
				"NSS source. It needs libuser's luseradd (the provider feature " +
				"`manages_local_users_and_groups`); without it, as here and with Puppet on Debian, " +
				"it is accepted and has no effect. The state is always read from the local files.",
		},
	}, unsupported...),
	Providers: []*applier.ProviderSpec{Useradd},
}

func init() { applier.Register(Type) }

var (
	digits     = regexp.MustCompile(`^[-0-9]+$`)
	ageRe      = regexp.MustCompile(`^-?\d+$`)
	dateRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	onlyDigits = regexp.MustCompile(`^\d+$`)
)

// ensureDefault is Puppet's: present when the request manages anything.
func ensureDefault(r *applier.Resource) any {
	for _, a := range r.Type.Attrs {
		if a.Behaviour == applier.Property && a.Name != "purge_ssh_keys" && r.Given(a.Name) {
			return "present"
		}
	}
	return nil
}

// mungeID is Puppet's munge of uid and gid: a string of digits (and
// signs) is a number; anything else is kept as written (a group name; for
// a uid, useradd refuses it). A number beyond 64 bits stays its digits.
func mungeID(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case *big.Int:
		return x.String(), nil
	case string:
		if digits.MatchString(x) {
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, nil
			}
		}
		return x, nil
	}
	return applier.FormatValue(v), nil
}

func age(name, what, doc string) *applier.Attr {
	return &applier.Attr{
		Name: name, Behaviour: applier.Property, Kind: applier.KindAny,
		// chage takes -1 (no limit) and up; below, it refuses the value.
		Range: &applier.Range{Min: -1, Max: math.MaxInt64, What: "days"},
		Munge: func(v any) (any, error) {
			s := applier.FormatValue(v)
			if _, isList := v.([]any); isList || !ageRe.MatchString(s) {
				if what == "warning" {
					return nil, fmt.Errorf("Password warning days must be provided as a number.")
				}
				return nil, fmt.Errorf("Password %s age must be provided as a number.", what)
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("Password %s: %s is out of range", what, s)
			}
			return n, nil
		},
		Doc: doc,
	}
}

func validateGroup(v any) error {
	s := v.(string)
	switch {
	case onlyDigits.MatchString(s):
		return fmt.Errorf("Group names must be provided, not GID numbers.")
	case strings.Contains(s, ","):
		return fmt.Errorf("Group names must be provided as an array, not a comma-separated list.")
	case s == "":
		return fmt.Errorf("Group names must not be empty. If you want to specify \"no groups\" pass an empty array")
	case strings.ContainsAny(s, " \t\n"):
		return fmt.Errorf("Invalid value %q: Groups must be comma-separated", s)
	}
	return nil
}

// Useradd is the useradd provider.
var Useradd = &applier.ProviderSpec{
	Name: "useradd",
	Doc: "User management via `useradd` and its ilk (usermod, userdel, chage, chpasswd). " +
		"The state is read from /etc/passwd, /etc/shadow and /etc/group directly.",
	Confine:  applier.Confine{Func: accounts.ToolsFound("useradd", "usermod", "userdel")},
	Defaults: map[string][]string{"kernel": {"Linux"}},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		accounts.LogUnsupported(r, env, "useradd", unmanaged)
		return &provider{r: r, env: env}, nil
	},
	Instances: instances,
}

type provider struct {
	r   *applier.Resource
	env *applier.Env
}

// shadowed are the properties read from /etc/shadow.
var shadowed = []string{"password", "password_min_age", "password_max_age", "password_warn_days", "expiry"}

// Resolve settles the desired values that depend on the system.
func (p *provider) Resolve(context.Context) error {
	r := p.r
	if name, ok := r.Value("gid").(string); ok {
		groups, err := accounts.LoadGroups()
		if err != nil {
			return err
		}
		if g := groups.Lookup(name); g != nil {
			r.Set("gid", g.GID)
		}
	}
	if r.Given("groups") {
		want := r.Strings("groups")
		if r.String("membership") != "inclusive" {
			users, err := accounts.LoadUsers()
			if err != nil {
				return err
			}
			if users.Lookup(r.Name()) != nil {
				groups, err := accounts.LoadGroups()
				if err != nil {
					return err
				}
				want = append(append([]string(nil), want...), groups.MemberOf(r.Name())...)
			}
		}
		r.Set("groups", sortedSet(want))
	}
	if files := r.Strings("purge_ssh_keys"); len(files) > 0 {
		return p.resolvePurge(files)
	}
	return nil
}

// sortedSet returns the distinct strings of l, sorted, as []any.
func sortedSet(l []string) []any {
	s := append([]string(nil), l...)
	sort.Strings(s)
	out := make([]any, 0, len(s))
	for i, e := range s {
		if i > 0 && e == s[i-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	r := p.r
	name := r.Name()
	users, err := accounts.LoadUsers()
	if err != nil {
		return err
	}
	u := users.Lookup(name)
	if u == nil {
		cur.Set("ensure", "absent")
		return nil
	}
	// For find, everything; for apply, what the request manages.
	all := r.ReadAll()
	var shadows *accounts.Shadows
	for _, n := range shadowed {
		if !all && !r.Has(n) {
			continue
		}
		if shadows, err = accounts.LoadShadows(); err != nil {
			if all && errors.Is(err, fs.ErrPermission) {
				// A find by a user who may not read /etc/shadow
				// shows the account without its password fields,
				// as puppet resource does.
				shadows = nil
				break
			}
			return err
		}
		break
	}
	var groups *accounts.Groups
	if all || r.Has("groups") {
		if groups, err = accounts.LoadGroups(); err != nil {
			return err
		}
	}
	report(cur, u, shadows, groups, all)
	if files := r.Strings("purge_ssh_keys"); len(files) > 0 {
		pp, err := newPerms(u)
		if err != nil {
			return err
		}
		found, err := unmanagedKeys(files, pp, managedKeys(ctx), func(why string) {
			p.env.Logger().Warn(r.Ref() + ": purge_ssh_keys: " + why)
		})
		if err != nil {
			return err
		}
		cur.Set("purge_ssh_keys", found)
	}
	return nil
}

// report is a present user's state: its passwd entry, its shadow entry
// when shadows is not nil, its groups when groups is not nil. plain
// reports the password hash itself, as `puppet resource` prints it (find
// and search, run by root, who can read /etc/shadow), rather than a Secret.
func report(cur *applier.State, u *accounts.User, shadows *accounts.Shadows, groups *accounts.Groups, plain bool) {
	cur.Set("ensure", "present")
	uid, gid, home, shell, gecos := u.Boxed()
	cur.Set("uid", uid)
	cur.Set("gid", gid)
	cur.Set("home", home)
	cur.Set("shell", shell)
	cur.Set("comment", gecos)
	if shadows != nil {
		if s := shadows.Lookup(u.Name); s != nil {
			pw, min, max, warn := s.Boxed()
			if plain {
				cur.Set("password", pw)
			} else {
				cur.Set("password", Secret(s.Password))
			}
			cur.Set("password_min_age", min)
			cur.Set("password_max_age", max)
			cur.Set("password_warn_days", warn)
			cur.Set("expiry", expiryDate(s.Expire))
		}
	}
	if groups != nil {
		cur.Set("groups", sortedSet(groups.MemberOf(u.Name)))
	}
}

// instances lists every account of /etc/passwd in file order (the first
// entry of a name), with its shadow entry and its groups, as find reads
// one: each of the three files is read and parsed once.
func instances(_ context.Context, _ *applier.Env, _ *applier.Resource, add func(string) *applier.State) error {
	users, err := accounts.LoadUsers()
	if err != nil {
		return err
	}
	shadows, err := accounts.LoadShadows()
	if errors.Is(err, fs.ErrPermission) {
		shadows, err = nil, nil // listed without the password fields
	}
	if err != nil {
		return err
	}
	groups, err := accounts.LoadGroups()
	if err != nil {
		return err
	}
	for _, u := range users.All() {
		report(add(u.Name), u, shadows, groups, true)
	}
	return nil
}

// expiryDate renders shadow's expiry day as Puppet does.
func expiryDate(days int64) string {
	if days < 0 {
		return "absent"
	}
	return time.Unix(0, 0).UTC().AddDate(0, 0, int(days)).Format("2006-01-02")
}

func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	r := p.r
	name := r.Name()
	switch c.Property {
	case "ensure":
		if c.Should == "absent" {
			return p.delete(ctx)
		}
		return p.create(ctx)
	case "password":
		if err := p.setPassword(ctx); err != nil {
			return err
		}
		c.Message = "changed [redacted] to [redacted]"
		return nil
	case "password_min_age", "password_max_age", "password_warn_days":
		return p.modify(ctx, c.Property, "chage", ageFlag[c.Property], applier.FormatValue(c.Should))
	case "shell":
		if err := checkShell(r.String("shell")); err != nil {
			return err
		}
		return p.modify(ctx, "shell", "usermod", "-s", r.String("shell"))
	case "gid":
		gid, ok := c.Should.(int64)
		if !ok {
			return fmt.Errorf("Could not find group(s) %s", applier.FormatValue(c.Should))
		}
		return p.modify(ctx, "gid", "usermod", "-g", strconv.FormatInt(gid, 10))
	case "uid":
		argv := []string{"usermod", "-u", applier.FormatValue(c.Should)}
		if r.Bool("allowdupe") {
			argv = append(argv, "-o")
		}
		return p.run(ctx, "uid", argv...)
	case "home":
		return p.modify(ctx, "home", "usermod", "-d", r.String("home"))
	case "comment":
		return p.modify(ctx, "comment", "usermod", "-c", r.String("comment"))
	case "groups":
		return p.modify(ctx, "groups", "usermod", "-G", joinGroups(c.Should))
	case "expiry":
		return p.modify(ctx, "expiry", "usermod", "-e", expiryArg(r.String("expiry")))
	case "purge_ssh_keys":
		users, err := accounts.LoadUsers()
		if err != nil {
			return err
		}
		u := users.Lookup(name)
		if u == nil {
			return fmt.Errorf("Could not purge SSH keys of user %s: the user does not exist", name)
		}
		pp, err := newPerms(u)
		if err != nil {
			return err
		}
		msg, err := purge(ctx, r.Strings("purge_ssh_keys"), pp, managedKeys(ctx), c.Is)
		if err != nil {
			return fmt.Errorf("Could not purge SSH keys of user %s: %w", name, err)
		}
		c.Message = msg
		return nil
	}
	return fmt.Errorf("user: cannot manage %s", c.Property)
}

var ageFlag = map[string]string{"password_min_age": "-m", "password_max_age": "-M", "password_warn_days": "-W"}

func expiryArg(s string) string {
	if s == "absent" {
		return ""
	}
	return s
}

func joinGroups(v any) string {
	l, _ := v.([]any)
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = applier.FormatValue(e)
	}
	return strings.Join(parts, ",")
}

// modify runs one tool with one flag and value, then the name.
func (p *provider) modify(ctx context.Context, prop, tool, flag, value string) error {
	return p.run(ctx, prop, tool, flag, value)
}

// run runs argv with the user's name appended, worded as Puppet's set.
func (p *provider) run(ctx context.Context, prop string, argv ...string) error {
	argv = append(argv, accounts.NameArgs(p.r.Name())...)
	if _, err := accounts.Run(ctx, nil, argv...); err != nil {
		return fmt.Errorf("Could not set %s on user[%s]: %w", prop, p.r.Name(), err)
	}
	return nil
}

// checkShell is Puppet's check, with a relative path refused outright
// (useradd refuses one anyway; Puppet looks for it in its working directory).
func checkShell(shell string) error {
	if !strings.HasPrefix(shell, "/") {
		return fmt.Errorf("Shell %s must exist", shell)
	}
	return shellUsable(shell)
}

func (p *provider) create(ctx context.Context) error {
	r := p.r
	name := r.Name()
	if r.Has("shell") {
		if err := checkShell(r.String("shell")); err != nil {
			return err
		}
	}
	argv := []string{"useradd"}
	if !r.Has("gid") {
		groups, err := accounts.LoadGroups()
		if err != nil {
			return err
		}
		if groups.Lookup(name) != nil {
			argv = append(argv, "-g", name)
		}
	}
	// Puppet's add_properties: every property with a value, sorted by name.
	add := func(prop, flag, value string) {
		if r.Has(prop) && value != "" {
			argv = append(argv, flag, value)
		}
	}
	add("comment", "-c", r.String("comment"))
	if r.Has("expiry") {
		argv = append(argv, "-e", expiryArg(r.String("expiry")))
	}
	add("gid", "-g", applier.FormatValue(r.Value("gid")))
	add("groups", "-G", joinGroups(r.Value("groups")))
	add("home", "-d", r.String("home"))
	add("shell", "-s", r.String("shell"))
	add("uid", "-u", applier.FormatValue(r.Value("uid")))
	if r.Bool("allowdupe") {
		argv = append(argv, "-o")
	}
	if r.Bool("managehome") {
		argv = append(argv, "-m")
	} else {
		argv = append(argv, "-M")
	}
	if r.Bool("system") {
		argv = append(argv, "-r")
	}
	argv = append(argv, accounts.NameArgs(name)...)
	if _, err := accounts.Run(ctx, nil, argv...); err != nil {
		return fmt.Errorf("Could not create user %s: %w", name, err)
	}
	// Puppet's passcmd: the ages in one chage.
	chage := []string{"chage"}
	for _, n := range []string{"password_min_age", "password_max_age", "password_warn_days"} {
		if v, ok := r.Get(n); ok {
			chage = append(chage, ageFlag[n], applier.FormatValue(v))
		}
	}
	if len(chage) > 1 {
		chage = append(chage, accounts.NameArgs(name)...)
		if _, err := accounts.Run(ctx, nil, chage...); err != nil {
			return fmt.Errorf("Could not create user %s: %w", name, err)
		}
	}
	if r.Has("password") {
		return p.setPassword(ctx)
	}
	return nil
}

func (p *provider) delete(ctx context.Context) error {
	argv := []string{"userdel"}
	if p.r.Bool("managehome") {
		argv = append(argv, "-r")
	}
	argv = append(argv, accounts.NameArgs(p.r.Name())...)
	if _, err := accounts.Run(ctx, nil, argv...); err != nil {
		return fmt.Errorf("Could not delete user %s: %w", p.r.Name(), err)
	}
	return nil
}

// setPassword stores the password as given with chpasswd -e, fed on
// standard input (never on a command line), as Puppet's provider does;
// any output from chpasswd is a failure.
func (p *provider) setPassword(ctx context.Context) error {
	name := p.r.Name()
	pw, _ := p.r.Value("password").(Secret)
	out, err := accounts.Run(ctx, []byte(name+":"+string(pw)+"\n"), "chpasswd", "-e")
	if err != nil {
		return fmt.Errorf("Could not set password on user[%s]: %w", name, err)
	}
	if out = strings.TrimSpace(out); out != "" {
		return fmt.Errorf("chpasswd said %s", out)
	}
	return nil
}
