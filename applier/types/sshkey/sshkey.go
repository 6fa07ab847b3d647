// Package sshkey is the `sshkey` type: one host key line of a known_hosts
// file (by default /etc/ssh/ssh_known_hosts): the host name with its
// aliases, the key's type and the key.
//
// The type is data. As in Puppet, a key is identified by its host name
// and its type together: the title `h1@ssh-rsa` sets both (a title without
// `@` is the name alone), and the resource answers to `Sshkey[h1@ssh-rsa]`
// whichever way the request spelled them, the type's aliases (`rsa`,
// `dsa`, `ed25519`, ...) resolved first. ensure defaults to present as soon
// as a property is given.
//
// The one provider, parsed, is the shared parsedfile record provider with
// this type's record format: it reads the target once and keeps it, with
// an index of its records by name and type, in the Env's cache while the
// file is unchanged, so an unchanged key costs a stat. A change re-reads
// the file, edits it and writes it back: Puppet's header, each record rendered `NAME[,ALIAS...] TYPE
// KEY`, comments, blank lines and other lines as they were, the old file
// in the filebucket, a new file 0644 (Puppet's mode for known_hosts), the
// write atomic. The resource is bound to the last line of its name and
// type, as Puppet binds it.
package sshkey

import (
	"regexp"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// DefaultTarget is the known_hosts file managed when the request names none.
const DefaultTarget = "/etc/ssh/ssh_known_hosts"

// keyTypes are the key types Puppet's sshkey accepts, and typeAliases the
// short names it accepts for some of them.
var (
	keyTypes = []string{"ssh-dss", "ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
		"ecdsa-sha2-nistp521", "sk-ecdsa-sha2-nistp256@openssh.com", "sk-ssh-ed25519@openssh.com"}
	typeAliases = map[string]string{
		"dsa": "ssh-dss", "ed25519": "ssh-ed25519", "rsa": "ssh-rsa",
		"ecdsa-sk": "sk-ecdsa-sha2-nistp256@openssh.com", "ed25519-sk": "sk-ssh-ed25519@openssh.com",
	}
)

// Type is the sshkey type's declaration.
var Type = &applier.Type{
	Name: "sshkey",
	Doc: "Installs and manages ssh host keys: one line of a known_hosts file (by default " +
		DefaultTarget + "). A key is identified by its host name and type together: the title " +
		"`host@type` sets both, and the resource is named `Sshkey[host@type]`.",
	Attrs: []*applier.Attr{
		parsedfile.Ensure("Whether the key should be in the file. Defaults to `present` when any other " +
			"property is given."),
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: validateName,
			Doc: "The host name the key is associated with (namevar, with `type`). No whitespace, " +
				"no comma (aliases go in `host_aliases`).",
		},
		{
			Name: "type", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: keyTypes, Aliases: typeAliases,
			Doc: "The key's type (part of the key's identity): " + strings.Join(keyTypes, ", ") +
				"; `dsa`, `ed25519`, `rsa`, `ecdsa-sk` and `ed25519-sk` are aliases. Required to create the key.",
		},
		{
			Name: "key", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: validateKey,
			Doc:      "The key itself, without its type or comment. Required to create the key.",
		},
		{
			Name: "host_aliases", Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Validate: validateAlias,
			Doc: "Other names of the host, written after the name, comma-separated, in order. An " +
				"empty list removes them.",
		},
		parsedfile.TargetAttr(DefaultTarget, "The known_hosts file the key lives in. Defaults to `"+DefaultTarget+"`."),
	},
	TitlePatterns: []applier.TitlePattern{
		{Re: regexp.MustCompile(`^(?P<name>[^@]*)@(?P<type>.*)$`)},
		{Re: regexp.MustCompile(`^(?P<name>[^@]+)$`)},
	},
	RefTitle:  func(r *applier.Resource) string { return r.Name() + "@" + r.String("type") },
	Providers: []*applier.ProviderSpec{Parsed},
}

func init() {
	Parsed.Instances = instances
	applier.Register(Type)
}

// Puppet's checks of a name and an alias: no whitespace (which would
// split the field), no comma (which separates aliases).
var (
	validateName = noSpaceNoComma("Resourcename cannot include whitespaces",
		"No comma in resourcename allowed. If you want to specify aliases use the host_aliases property")
	validateAlias = noSpaceNoComma("Aliases cannot include whitespace",
		"Aliases must be provided as an array, not a comma-separated list")
)

func noSpaceNoComma(space, comma string) func(v any) error {
	spaces, commas := parsedfile.Refuse(" \t\r\n\f\v", space), parsedfile.Refuse(",", comma)
	return func(v any) error {
		if err := spaces(v); err != nil {
			return err
		}
		return commas(v)
	}
}

// validateKey refuses line breaks, which would write a line of the
// caller's choosing into the file (Puppet writes them).
var validateKey = parsedfile.Refuse("\r\n", "Key must not contain a line break")
