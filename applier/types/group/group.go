// Package group is the `group` type: a local group in /etc/group, managed
// with Puppet 7's groupadd provider (groupadd, groupmod, groupdel).
//
// The type is data: ensure (present by default, as in Puppet: a request
// naming only a gid creates the group), gid, and the parameters that tune
// creation (system, allowdupe). The current state is read from /etc/group
// parsed directly and kept while the file is unchanged (see the shared
// accounts package), so an unchanged group costs one stat of /etc/group.
//
// members, auth_membership and forcelocal are accepted and not managed, as
// Puppet's groupadd provider does on a host without libuser (Debian's
// default): members needs the provider feature manages_members and
// forcelocal manages_local_users_and_groups, which groupadd has only when
// lgroupadd and luseradd are installed and /etc/libuser.conf exists.
// Group membership is managed on the user (its groups attribute).
//
// A gid is a number: a string of digits (and signs) is read as one, any
// other string is refused as Puppet refuses it (Invalid GID abc). A
// negative gid or one beyond 2^32-2 is passed to groupadd, which refuses
// it: the answer is a failure naming the command and its message, exactly
// as Puppet's.
package group

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strconv"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/accounts"
)

// unsupported are Puppet's AIX attributes: accepted, not managed.
var unsupported = accounts.Unsupported("manages_aix_lam", "ia_load_module", "attributes")

// unmanaged are the attributes accepted and not managed here.
var unmanaged = accounts.Names(unsupported, "members", "forcelocal")

// Type is the group type's declaration.
var Type = &applier.Type{
	Name: "group",
	Doc: "Manage groups. On most platforms this can only create groups: group membership " +
		"must be managed on individual users (their `groups` attribute).",
	Attrs: append([]*applier.Attr{
		{
			Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values: []string{"present", "absent"}, Default: "present",
			Doc: "Create or remove the group. Defaults to `present`.",
		},
		{
			Name: "gid", Behaviour: applier.Property, Kind: applier.KindAny,
			Munge: mungeGID,
			Doc: "The group ID; must be specified numerically. A group created without one " +
				"gets the next free id by the system's rules (groupadd).",
		},
		{
			Name: "members", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true,
			Doc: "The members of the group, for directories where membership is stored in the " +
				"group. It needs the provider feature `manages_members`, which groupadd has " +
				"only with libuser: here, as with Puppet on a host without libuser, it is " +
				"accepted and not managed.",
		},
		{
			Name: "auth_membership", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: false,
			Doc:     "Whether `members` is the complete list (true) or a minimum (false, the default). Only meaningful with `members`.",
		},
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Doc: "The group name (namevar). groupadd decides which names are valid (no colon, " +
				"no leading dash...).",
		},
		{
			Name: "allowdupe", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: false,
			Doc:     "Whether to allow duplicate GIDs (`groupadd -o`, `groupmod -o`). Defaults to false.",
		},
		{
			Name: "attribute_membership", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"inclusive", "minimum"}, Default: "minimum",
			Doc: "AIX only: whether `attributes` is complete or a minimum. Accepted and unused.",
		},
		{
			Name: "system", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: false,
			Doc:     "Whether the group is a system group with a lower GID (`groupadd -r`); used only when the group is created.",
		},
		{
			Name: "forcelocal", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: false,
			Doc: "Forces the management of local groups when groups also come from another " +
				"NSS source. It needs libuser's lgroupadd (the provider feature " +
				"`manages_local_users_and_groups`); without it, as here and with Puppet on " +
				"Debian, it is accepted and has no effect. The state is always read from " +
				"/etc/group itself.",
		},
	}, unsupported...),
	Providers: []*applier.ProviderSpec{Groupadd},
}

func init() { applier.Register(Type) }

var digits = regexp.MustCompile(`^[-0-9]+$`)

// mungeGID is Puppet's munge: a number, or a string of digits read as one.
// A number too large for 64 bits is kept as its digits (groupadd refuses it).
func mungeGID(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case *big.Int:
		return x.String(), nil
	case string:
		if !digits.MatchString(x) {
			return nil, fmt.Errorf("Invalid GID %s", x)
		}
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return x, nil
			}
			return nil, fmt.Errorf("invalid value for Integer(): %q", x)
		}
		return n, nil
	}
	return nil, fmt.Errorf("Invalid GID %s", applier.FormatValue(v))
}

// Groupadd is the groupadd provider.
var Groupadd = &applier.ProviderSpec{
	Name: "groupadd",
	Doc: "Group management via `groupadd` and its ilk (groupmod, groupdel). The default " +
		"on Linux. The state is read from /etc/group directly.",
	Confine:  applier.Confine{Func: accounts.ToolsFound("groupadd", "groupmod", "groupdel")},
	Defaults: map[string][]string{"kernel": {"Linux"}},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		accounts.LogUnsupported(r, env, "groupadd", unmanaged)
		return &provider{r: r}, nil
	},
	Instances: instances,
}

// instances lists every group of /etc/group in file order (the first
// entry of a name), each reported as Get reports it.
func instances(_ context.Context, _ *applier.Env, _ *applier.Resource, add func(string) *applier.State) error {
	groups, err := accounts.LoadGroups()
	if err != nil {
		return err
	}
	for _, g := range groups.All() {
		report(add(g.Name), g)
	}
	return nil
}

// report is a present group's state.
func report(cur *applier.State, g *accounts.Group) {
	cur.Set("ensure", "present")
	cur.Set("gid", g.BoxedGID())
}

type provider struct {
	r *applier.Resource
}

func (p *provider) Get(_ context.Context, cur *applier.State) error {
	groups, err := accounts.LoadGroups()
	if err != nil {
		return err
	}
	g := groups.Lookup(p.r.Name())
	if g == nil {
		cur.Set("ensure", "absent")
		return nil
	}
	report(cur, g)
	return nil
}

func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	name := p.r.Name()
	switch c.Property {
	case "ensure":
		if c.Should == "absent" {
			if _, err := accounts.Run(ctx, nil, append([]string{"groupdel"}, accounts.NameArgs(name)...)...); err != nil {
				return fmt.Errorf("Could not delete group %s: %w", name, err)
			}
			return nil
		}
		argv := []string{"groupadd"}
		if gid, ok := p.r.Get("gid"); ok {
			argv = append(argv, "-g", applier.FormatValue(gid))
		}
		if p.r.Bool("allowdupe") {
			argv = append(argv, "-o")
		}
		if p.r.Bool("system") {
			argv = append(argv, "-r")
		}
		argv = append(argv, accounts.NameArgs(name)...)
		if _, err := accounts.Run(ctx, nil, argv...); err != nil {
			return fmt.Errorf("Could not create group %s: %w", name, err)
		}
		return nil
	case "gid":
		argv := []string{"groupmod", "-g", applier.FormatValue(c.Should)}
		if p.r.Bool("allowdupe") {
			argv = append(argv, "-o")
		}
		argv = append(argv, accounts.NameArgs(name)...)
		if _, err := accounts.Run(ctx, nil, argv...); err != nil {
			return fmt.Errorf("Could not set gid on group[%s]: %w", name, err)
		}
		return nil
	}
	return fmt.Errorf("group: cannot manage %s", c.Property)
}
