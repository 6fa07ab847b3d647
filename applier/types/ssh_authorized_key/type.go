// Package sshauthkey is the `ssh_authorized_key` type: one key line of a
// user's authorized_keys file (by default ~USER/.ssh/authorized_keys),
// with its options, type, key and comment (the resource's name).
//
// The type is data, with Puppet's validation (puppetlabs-sshkeys_core):
// key types and their aliases (`rsa` is `ssh-rsa`), a key without
// whitespace, options each `word` or `word="value"`, and either `user` or
// `target`. `options` not given means none: a key whose line carries
// options loses them, as in Puppet.
//
// The one provider, parsed, is the shared parsedfile record provider with
// this type's record format and the user's rules for reading and writing
// the file. It reads the file once and keeps it, with an index of its keys
// by name, in the Env's cache while it is unchanged;
// the user's home comes from /etc/passwd, kept the same way, so an
// unchanged key costs two stats. A change re-reads the file, edits it and
// writes it as Puppet does (its header, other lines kept, records
// re-rendered), but atomically: a temporary file in the same directory,
// owned by the user, mode 0600, fsynced and renamed over the target, the
// old file saved in the filebucket first. A missing parent directory
// (`.ssh`) is created 0700, owned by the user.
//
// Puppet writes the file as the user (drop_privileges, default true), so
// that a user who controls the directory cannot turn root's write against
// another file. The receiver stays root and gets the same guarantee from
// the kernel's view of the directory it holds open: the directory (and
// the parent of a `.ssh` it creates) must be writable by the user, an
// existing file must be writable by the user and is never written through
// (a symbolic link there is refused unless the user is root), and every
// step is relative to the directory's descriptor, so swapping a path
// component under it changes nothing. With drop_privileges false, as in
// Puppet, every directory from the target's up must be owned by root and
// writable by nobody else.
package sshauthkey

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

var (
	keyTypes = []string{"ssh-dss", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
		"ssh-ed25519", "sk-ecdsa-sha2-nistp256@openssh.com", "sk-ssh-ed25519@openssh.com",
		"ssh-rsa-cert-v01@openssh.com", "ssh-ed25519-cert-v01@openssh.com", "ssh-dss-cert-v01@openssh.com",
		"ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384-cert-v01@openssh.com",
		"ecdsa-sha2-nistp521-cert-v01@openssh.com"}
	typeAliases = map[string]string{
		"dsa": "ssh-dss", "ed25519": "ssh-ed25519", "rsa": "ssh-rsa",
		"ecdsa-sk": "sk-ecdsa-sha2-nistp256@openssh.com", "ed25519-sk": "sk-ssh-ed25519@openssh.com",
	}
)

// Type is the ssh_authorized_key type's declaration.
var Type = &applier.Type{
	Name: "ssh_authorized_key",
	// Puppet's autorequires: the user whose key it is, and the key file.
	Auto: []applier.AutoRel{
		{Type: "user", Attr: "user", Titles: applier.Names},
		{Type: "file", Attr: "target"},
	},
	Doc: "Manages SSH authorized keys: one line of an authorized_keys file (by default " +
		"~USER/.ssh/authorized_keys) giving a key's options, type, key and name (its comment). " +
		"Keys the file holds that no request names are kept.",
	Attrs: []*applier.Attr{
		{
			Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values:  []string{"present", "absent"},
			Default: "present",
			Doc: "Whether the key should be in the file. Defaults to `present` (as in Puppet, where " +
				"`user` or `target`, one of which is required, makes the resource managed).",
		},
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: validateName,
			Doc: "The key's comment, which identifies it (namevar): the last key of that comment " +
				"in the file is the resource's.",
		},
		{
			Name: "type", Behaviour: applier.Property, Kind: applier.KindEnum,
			Values: keyTypes, Aliases: typeAliases,
			Doc: "The key's type: " + strings.Join(keyTypes, ", ") + "; `dsa`, `ed25519`, `rsa`, " +
				"`ecdsa-sk` and `ed25519-sk` are aliases. Required to create the key.",
		},
		{
			Name: "key", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: validateKey,
			Doc:      "The public key itself, without its type or comment; no whitespace. Required to create the key.",
		},
		{
			Name: "user", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: validateUser,
			Doc: "The account the key lets in. It must exist: the file (and a missing `.ssh`) is " +
				"written owned by it, and its home gives the default target.",
		},
		{
			Name: "target", Behaviour: applier.Property, Kind: applier.KindPath,
			Doc: "The file the key lives in; default `~USER/.ssh/authorized_keys`.",
		},
		{
			Name: "options", Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Default:  "absent",
			Validate: validateOption,
			InSync:   optionsInSync,
			Doc: "Key options (sshd(8)), each `option` or `option=\"value\"` (quotes kept as given), in " +
				"order. Not given, or `absent`: the key has none.",
		},
		{
			Name: "drop_privileges", Behaviour: applier.Parameter, Kind: applier.KindBoolean,
			Default: true,
			Doc: "Write the file with the user's rights (true, the default): the directory and an " +
				"existing file must be writable by the user. false: write as root, only where every " +
				"directory from the target's up is owned by root and writable by nobody else.",
		},
	},
	Validate:  validate,
	Providers: []*applier.ProviderSpec{Parsed},
}

func init() {
	Parsed.Instances = instances
	applier.Register(Type)
}

func validate(r *applier.Resource) error {
	if !r.Given("target") && !r.Given("user") {
		return errors.New("Attribute 'user' or 'target' is mandatory")
	}
	return nil
}

// validateName refuses line breaks, which would write lines of the
// caller's choosing (Puppet writes them).
var validateName = parsedfile.Refuse("\r\n", "Name must not contain a line break")

func validateKey(v any) error {
	if s, _ := v.(string); strings.ContainsAny(s, " \t\r\n\f\v") {
		return fmt.Errorf("Key must not contain whitespace: %s", s)
	}
	return nil
}

func validateUser(v any) error {
	if s, _ := v.(string); s == "" || strings.ContainsAny(s, ":/\r\n") {
		return fmt.Errorf("Invalid user name %q", s)
	}
	return nil
}

// optionRe is Puppet's pattern for one option, anchored at the ends of
// the value (Ruby's ^ and $ also match at line breaks, which let a line
// break through).
var optionRe = regexp.MustCompile(`^[-a-z0-9A-Z_]+(?:=".*?")?$`)

func validateOption(v any) error {
	s, _ := v.(string)
	if s == "absent" || optionRe.MatchString(s) && !strings.ContainsAny(s, "\r\n") {
		return nil
	}
	return fmt.Errorf("Option %s is not valid. A single option must either be of the form 'option' or 'option=\"value\"'. Multiple options must be provided as an array", s)
}

// optionList is an options value as the list written: absent (alone,
// nil or in a list) is none.
func optionList(v any) []string {
	var out []string
	for _, s := range applier.StringList(v) {
		if s != "absent" {
			out = append(out, s)
		}
	}
	return out
}

func optionsInSync(is, should any) bool { return slices.Equal(optionList(is), optionList(should)) }
