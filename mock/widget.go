package mock

import (
	"errors"

	"github.com/pippet/pippet/applier"
)

// Widget is a test type exercising every declaration feature, with p as
// its one provider, "mem": a path namevar, an ensure with an alias, an
// integer, an enum with a default, an unordered list, a boolean
// parameter, a computed default, a read-only value and a Validate that
// fails both ways (a plain error, a ParamError).
func Widget(p *Provider) *applier.Type {
	return &applier.Type{
		Name: "widget",
		Doc:  "A test type.",
		Attrs: []*applier.Attr{
			{Name: "path", Behaviour: applier.Namevar, Kind: applier.KindPath, Doc: "The path."},
			{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum,
				Values: []string{"present", "absent"}, Aliases: map[string]string{"installed": "present"}, Doc: "Presence."},
			{Name: "size", Behaviour: applier.Property, Kind: applier.KindInteger, Doc: "Size."},
			{Name: "colour", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"red", "blue"}, Default: "red", Doc: "Colour."},
			{Name: "tags", Behaviour: applier.Property, Kind: applier.KindString, Array: true, Unordered: true, Doc: "Tags."},
			{Name: "force", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false, Doc: "Force."},
			{Name: "label", Behaviour: applier.Parameter, Kind: applier.KindString,
				DefaultFunc: func(r *applier.Resource) any { return "label of " + r.String("path") }, Doc: "Label."},
			{Name: "serial", Behaviour: applier.ReadOnly, Kind: applier.KindString, Doc: "Read-only."},
		},
		Validate: func(r *applier.Resource) error {
			if r.Bool("force") && r.String("ensure") == "absent" {
				return errors.New("force and ensure absent conflict")
			}
			if s, ok := r.Int("size"); ok && s > 1000 {
				return applier.ParamErrorf("size", "must be at most 1000, got %d", s)
			}
			return nil
		},
		Providers: []*applier.ProviderSpec{p.Spec("mem")},
	}
}
