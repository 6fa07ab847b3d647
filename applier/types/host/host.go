// Package host is the `host` type: one line of /etc/hosts (or another
// hosts file named by target) mapping an IP address to a host name, its
// aliases and a comment.
//
// The type is data: the attribute declarations below carry Puppet's
// validation (an IPv4 or IPv6 address, host names made of word characters
// and inner hyphens, aliases without whitespace, comments without
// newlines). ensure defaults to present as soon as any property is given,
// as Puppet's ensurable types do, so `{ip: 10.0.0.5}` adds the entry.
//
// The one provider, parsed, reads the target with the shared parsedfile
// helper and writes it back with Puppet's header, every record rendered as
// `IP<TAB>NAME[<TAB>ALIASES][<TAB># COMMENT]` (the format of
// puppetlabs-host_core), comments, blank lines and lines it can't parse
// kept as they were. Changes are collected by Set and written once by
// Flush. The resource is bound to the last line of its name, as Puppet
// binds it.
package host

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// DefaultTarget is the hosts file managed when the request names none.
const DefaultTarget = "/etc/hosts"

// Type is the host type's declaration.
var Type = &applier.Type{
	Name: "host",
	Doc: "Installs and manages host entries: one line of a hosts file (by default " +
		"/etc/hosts) giving an IP address, the host name, its aliases and a comment.",
	Attrs: []*applier.Attr{
		parsedfile.Ensure("Whether the entry should be in the file. Defaults to `present` when any " +
			"other property is given (Puppet's rule for ensurable types)."),
		{
			Name: "ip", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: validateIP,
			Doc:      "The host's IP address, IPv4 or IPv6. Required to create the entry.",
		},
		{
			Name: "host_aliases", Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Validate: validateAlias,
			InSync:   aliasesInSync,
			Format:   formatAliases,
			Doc: "Any aliases the host might have, in order (the order matters). An empty " +
				"array removes them all.",
		},
		{
			Name: "comment", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: parsedfile.Refuse("\r\n", "Comment cannot include newline"),
			Doc:      "A comment written after the entry, following a `#`.",
		},
		parsedfile.TargetAttr(DefaultTarget, "The hosts file the entry lives in. Defaults to `/etc/hosts`."),
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: validateName,
			Doc:      "The host name (namevar).",
		},
	},
	Providers: []*applier.ProviderSpec{Parsed},
}

func init() { applier.Register(Type) }

var (
	ipv4Re = regexp.MustCompile(`^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$`)
	// ipv6Re is Puppet's expression (puppetlabs-host_core), without the
	// surrounding whitespace it allows and with no whitespace in a zone
	// index (either would write a line that can't be read back).
	// Compiled on first use: it costs milliseconds, which every receiver
	// start would pay for a type most runs never use.
	ipv6Re     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(ipv6Pattern()) })
	hostPartRe = regexp.MustCompile(`^(\w+|\w[\w-]+\w)$`)
)

// ipv6Pattern builds Puppet's IPv6 expression from its parts: eight
// groups of hex digits, a run of them written `::`, the last two groups
// possibly an IPv4 address, then an optional zone index. It is one
// alternative for each number of groups written before the `::` (or the
// end), 7 down to 0.
func ipv6Pattern() string {
	const (
		hex  = `[0-9A-Fa-f]{1,4}`
		byte = `(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`
		ipv4 = `(` + byte + `(\.` + byte + `){3})`
	)
	alts := []string{
		// Seven groups, then the eighth or `::`.
		fmt.Sprintf(`((%s:){7}(%s|:))`, hex, hex),
		// Six groups, then one more after `::`, an IPv4 address, or `::`.
		fmt.Sprintf(`((%s:){6}(:%s|%s|:))`, hex, hex, ipv4),
	}
	// k groups, then `::` followed by 1 to 7-k groups, or by 0 to 5-k
	// groups and an IPv4 address; or `::` alone.
	for k := 5; k >= 1; k-- {
		alts = append(alts, fmt.Sprintf(`((%s:){%d}(((:%s){1,%d})|((:%s){0,%d}:%s)|:))`, hex, k, hex, 7-k, hex, 5-k, ipv4))
	}
	// No group before `::`.
	alts = append(alts, fmt.Sprintf(`(:(((:%s){1,7})|((:%s){0,5}:%s)|:))`, hex, hex, ipv4))
	return `^(` + strings.Join(alts, "|") + `)(%\S+)?$`
}

func validIPv4(s string) bool {
	m := ipv4Re.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	for _, part := range m[1:] {
		n := 0
		for _, c := range part {
			n = n*10 + int(c-'0')
		}
		if n > 255 {
			return false
		}
	}
	return true
}

func validateIP(v any) error {
	s, _ := v.(string)
	if !strings.ContainsAny(s, "\r\n") && (validIPv4(s) || ipv6Re().MatchString(s)) {
		return nil
	}
	return fmt.Errorf("Invalid IP address %q", s)
}

func validateAlias(v any) error {
	s, _ := v.(string)
	if strings.TrimSpace(s) == "" {
		return errors.New("Host aliases cannot be an empty string. Use an empty array to delete all host_aliases")
	}
	if strings.ContainsAny(s, " \t\r\n\f\v") {
		return errors.New("Host aliases cannot include whitespace")
	}
	return nil
}

func validateName(v any) error {
	s, _ := v.(string)
	if strings.ContainsAny(s, "\r\n") {
		return errors.New("Hostname cannot include newline")
	}
	// Ruby's split('.') drops trailing empty parts: "a.b." is valid.
	for _, part := range strings.Split(strings.TrimRight(s, "."), ".") {
		if s != "" && !hostPartRe.MatchString(part) {
			return errors.New("Invalid host name")
		}
	}
	return nil
}

// aliasList renders an aliases value (nil, string, []string, []any) as
// the list Puppet compares: whitespace-separated words.
func aliasList(v any) []string {
	if s, ok := v.(string); ok {
		if s == "absent" {
			return nil
		}
		return strings.Fields(s)
	}
	return applier.StringList(v)
}

// aliasesInSync compares in order, absent being no aliases: Puppet joins
// both sides with spaces and compares the strings.
func aliasesInSync(is, should any) bool {
	return strings.Join(aliasList(is), " ") == strings.Join(aliasList(should), " ")
}

func formatAliases(v any) string { return "'" + strings.Join(aliasList(v), " ") + "'" }
