// Package ini_subsetting is puppetlabs-inifile's ini_subsetting type,
// native: one item of a setting whose value is a list (JAVA_ARGS="-Xmx1g
// -Xms512m"), in an INI file.
//
// The file model is package internal/inifile, shared with ini_setting
// (with the module's syntax for ini_subsetting: `[` `]` headers, the
// key_val_separator given); the value is split into items here
// (setting_value.go) as the module's Puppet::Util::SettingValue splits
// it: a value in double or single quotes is unquoted and written back in
// the same quotes (quote_char quotes a value that had none), items are
// the runs of characters that are not in subsetting_separator, each
// stripped of blanks, and an item is the subsetting's when it starts
// with the subsetting's name and subsetting_key_val_separator (or equals
// the name, with use_exact_match).
//
// The provider reads the file in Get, and Set rewrites the setting's
// whole value and the file through package linefile (temp file, fsync,
// rename). Values show redacted, as ini_setting's.
//
// One departure from the module: when the last item is removed, the
// setting is removed only with delete_if_empty => true. The module
// tests `resource[:delete_if_empty]`, a symbol that Ruby takes as true
// even when it is :false, and so removes the setting either way.
package ini_subsetting

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/inifile"
	"github.com/pippet/pippet/applier/types/internal/linefile"
)

var quoteChar = regexp.MustCompile(`^["']?$`)

// Type is the ini_subsetting type's declaration.
var Type = &applier.Type{
	Name: "ini_subsetting",
	Doc:  "Manages one of the values of a setting in an INI file (puppetlabs-inifile's ini_subsetting).",
	Attrs: []*applier.Attr{
		{
			Name:      "ensure",
			Behaviour: applier.Property,
			Kind:      applier.KindEnum,
			Values:    []string{"present", "absent"},
			Default:   "present",
			Doc:       "Whether the subsetting should be in the setting: `present` (the default) or `absent`.",
		},
		{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Doc: "An arbitrary name used as the identity of the resource."},
		{Name: "section", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "",
			Doc: "The section of the setting; '' (the default) is before any section header."},
		{Name: "setting", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The name of the setting whose value holds the subsetting."},
		{Name: "subsetting", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The name of the subsetting: an item starting with it (and " +
				"subsetting_key_val_separator) is the subsetting's."},
		{Name: "subsetting_separator", Behaviour: applier.Parameter, Kind: applier.KindString, Default: " ",
			Doc: "The separator between subsettings (default one space); every character of it separates items."},
		{Name: "subsetting_key_val_separator", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "",
			Doc: "The separator between a subsetting's name and its value (default none: -Xmx1g)."},
		{Name: "path", Behaviour: applier.Parameter, Kind: applier.KindString, Validate: inifile.AbsolutePath,
			Doc: "The INI file; fully qualified."},
		inifile.ShowDiff,
		{Name: "key_val_separator", Behaviour: applier.Parameter, Kind: applier.KindString, Default: " = ",
			Doc: "The separator between the setting's name and its value."},
		{Name: "quote_char", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "",
			Validate: func(v any) error {
				if s, _ := v.(string); !quoteChar.MatchString(s) {
					return errors.New(`:quote_char valid values are '', '"' and "'"`)
				}
				return nil
			},
			Doc: "The character quoting the whole value: '', '\"' or \"'\". A value already quoted keeps its quotes."},
		{Name: "use_exact_match", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"true", "false"}, Default: "false",
			Doc: "Set to true if your subsettings don't have values and you want to use exact matches to determine if the subsetting exists."},
		{
			Name:      "value",
			Behaviour: applier.Property,
			Kind:      applier.KindString,
			Munge:     func(v any) (any, error) { return inifile.Value(v.(string)), nil },
			Format:    func(any) string { return inifile.Redacted },
			Doc:       "The value of the subsetting (what follows its name and separator). Shown redacted.",
		},
		{Name: "insert_type", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"start", "end", "before", "after", "index"}, Default: "end",
			Doc: "Where a new subsetting goes: start, end (the default), before or after the " +
				"subsetting insert_value names (at the end when it is missing), or at the index insert_value gives."},
		{Name: "insert_value", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The subsetting (before, after) or the index (index) insert_type needs."},
		{Name: "delete_if_empty", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"true", "false"}, Default: "false",
			Doc: "Remove the setting when its last subsetting is removed, instead of leaving it empty."},
	},
	Providers: []*applier.ProviderSpec{{
		Name: "ruby",
		Doc:  "Parses the file and the setting's value as the module does and rewrites the file atomically.",
		New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
			return &provider{r: r, env: env}, nil
		},
	}},
}

func init() { applier.Register(Type) }

type provider struct {
	r     *applier.Resource
	env   *applier.Env
	path  string
	file  *inifile.File
	value *settingValue
	exact bool
}

// Get reads the file and the setting, and reports the subsetting.
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	p.path = p.r.String("path")
	if p.path == "" {
		return errors.New("path is a required attribute")
	}
	b, err := inifile.ReadFile(p.path)
	if err != nil {
		return err
	}
	p.file, err = inifile.Parse(b, inifile.Options{KeyValSeparator: p.r.String("key_val_separator"), IndentWidth: -1})
	if err != nil {
		return fmt.Errorf("parsing %s: %w", p.path, err)
	}
	v, ok := p.file.Get(p.r.String("section"), p.r.String("setting"))
	p.value = parseValue(v, ok, p.r.String("subsetting_separator"), p.r.String("quote_char"), p.r.String("subsetting_key_val_separator"))
	p.exact = p.r.String("use_exact_match") == "true"
	sub := p.r.String("subsetting")
	if p.value.find(sub, p.exact) < 0 {
		cur.Set("ensure", "absent")
		return nil
	}
	cur.Set("ensure", "present")
	if v, ok := p.value.subValue(sub); ok {
		cur.Set("value", inifile.Value(v))
	}
	return nil
}

// Set adds, updates or removes the subsetting and rewrites the file.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	sect, setting, sub := p.r.String("section"), p.r.String("setting"), p.r.String("subsetting")
	if c.Property == "ensure" && c.Should == "absent" {
		p.value.remove(sub, p.exact)
		if v := p.value.String(); v == "" && p.r.String("delete_if_empty") == "true" {
			p.file.Remove(sect, setting)
		} else {
			p.file.Set(sect, setting, p.r.String("key_val_separator"), v)
		}
		return linefile.Write(ctx, p.env, p.path, p.file.Bytes())
	}
	if c.Property == "value" {
		c.Message = "value changed " + inifile.Redacted + " to " + inifile.Redacted
	}
	v, _ := p.r.Value("value").(inifile.Value)
	if err := p.value.add(sub, string(v), p.exact, p.r.String("insert_type"), p.r.String("insert_value")); err != nil {
		return err
	}
	p.file.Set(sect, setting, p.r.String("key_val_separator"), p.value.String())
	return linefile.Write(ctx, p.env, p.path, p.file.Bytes())
}
