// Package mailalias is the `mailalias` type: one alias of the local mail
// alias database, a line `NAME: RECIPIENT,...` (or `NAME: :include:
// FILE`) of /etc/aliases or another file named by target.
//
// The declaration carries the rules of puppetlabs-mailalias_core (the
// version Debian ships): recipient is a list compared in order, file must
// be an absolute path, and recipient and file are refused together.
// ensure defaults to present as soon as any property is given, as Puppet's
// ensurable types do.
//
// The one provider, aliases, reads and writes the file through the shared
// parsedfile helper, as the module's ParsedFile provider does: comments
// and blank lines are kept byte for byte, every alias line is rendered
// again from its fields when the file is written (`NAME: a,b`, a
// recipient holding anything but letters, digits and `-+_@.` written in
// double quotes), Puppet's header is put on top, and the file is replaced
// atomically. Reading follows the module: the name is what precedes the
// first colon; recipients are split at commas outside double quotes, and
// one quote at either end of each is dropped. A resource is bound to the
// last line of its name in its own target. A line without a colon (a
// continuation line) makes the file unreadable: the module fails its
// prefetch with a Ruby error there, pippet fails the resource naming the
// line.
package mailalias

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// DefaultTarget is the aliases file managed when the request names none.
const DefaultTarget = "/etc/aliases"

// Type is the mailalias type's declaration.
var Type = &applier.Type{
	Name: "mailalias",
	Doc: "Creates an email alias in the local alias database: one line of an aliases file " +
		"(by default /etc/aliases) sending mail for a name to recipients or to the addresses " +
		"listed in a file.",
	Attrs: []*applier.Attr{
		parsedfile.Ensure("Whether the alias should be in the file. Defaults to `present` when any " +
			"other property is given (Puppet's rule for ensurable types)."),
		{
			Name: "recipient", Behaviour: applier.Property, Kind: applier.KindString, Array: true,
			Validate: parsedfile.Refuse("\r\n", "Recipient cannot include a newline"),
			Doc: "Where email should be sent: one address (or command, file, `:include:`) per element, " +
				"compared in order. A recipient holding anything but letters, digits and `-+_@.` is " +
				"written in double quotes. recipient and file are mutually exclusive.",
		},
		{
			Name: "file", Behaviour: applier.Property, Kind: applier.KindString,
			Validate: validateFile,
			Doc: "A file containing the alias's recipients, written `NAME: :include: FILE`; an " +
				"absolute path. recipient and file are mutually exclusive.",
		},
		parsedfile.TargetAttr(DefaultTarget, "The file in which to store the alias. Defaults to `/etc/aliases`."),
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: validateName,
			Doc:      "The alias name (namevar).",
		},
	},
	Validate: func(r *applier.Resource) error {
		if r.Given("recipient") && r.Given("file") {
			return errors.New("You cannot specify both a recipient and a file")
		}
		return nil
	},
	Providers: []*applier.ProviderSpec{Aliases},
}

func init() { applier.Register(Type) }

func validateFile(v any) error {
	s, _ := v.(string)
	if !filepath.IsAbs(s) {
		return fmt.Errorf("File paths must be fully qualified, not '%s'", s)
	}
	return parsedfile.Refuse("\r\n", "File cannot include a newline")(v)
}

func validateName(v any) error {
	s, _ := v.(string)
	if s == "" {
		return errors.New("Alias name cannot be empty")
	}
	return parsedfile.Refuse("\r\n:", "Alias name cannot include a newline or a colon")(v)
}
