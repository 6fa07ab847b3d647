package parsedfile

import (
	"errors"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Ensure is a record type's ensure attribute: present or absent, present
// by default once any other property is given (Puppet's rule for
// ensurable types).
func Ensure(doc string) *applier.Attr {
	return &applier.Attr{
		Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
		Values: []string{"present", "absent"}, DefaultFunc: applier.WhenManaged("present"), Doc: doc,
	}
}

// TargetAttr is a record type's target attribute: the file, def by default.
func TargetAttr(def, doc string) *applier.Attr {
	return &applier.Attr{Name: "target", Behaviour: applier.Property, Kind: applier.KindPath, Default: def, Doc: doc}
}

// Refuse is a Validate that refuses a string holding any of chars with
// msg: a line break in a field would write lines of the caller's choosing.
func Refuse(chars, msg string) func(v any) error {
	return func(v any) error {
		if s, _ := v.(string); strings.ContainsAny(s, chars) {
			return errors.New(msg)
		}
		return nil
	}
}
