// Package ini_setting is puppetlabs-inifile's ini_setting type, native:
// one setting (or one section) of an INI file.
//
// The attributes, defaults and validation are those of inifile 5.4, the
// version Debian ships. The file model (how a file is split into
// sections and settings, where a new setting goes, how the file is
// written back) is package internal/inifile, shared with ini_subsetting:
// the two types are two packages over one parser, each type's whole story
// (schema, provider, recorded cases) in its own.
//
// # Provider
//
// Resolve reads and parses the file once per request (a missing file is
// an empty one). With force_new_section_creation => false and no such
// section, ensure becomes absent, as the module's exists? makes it: the
// resource is then in sync. With refreshonly, ensure and value are left
// unmanaged and kept for Refresh, which applies them when the request
// carries a refresh (removing the setting when ensure is absent). Get
// reports ensure and the value from the parsed file. Set changes the
// model and writes the whole file through package linefile: temp file,
// fsync, rename, through a symlink, owner and mode kept.
//
// Values are never shown: like Puppet with its default show_diff setting
// (false), messages and answers say "[redacted sensitive information]"
// for both the old and the new value; show_diff is accepted and changes
// nothing.
package ini_setting

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/inifile"
	"github.com/pippet/pippet/applier/types/internal/linefile"
)

// Type is the ini_setting type's declaration.
var Type = &applier.Type{
	Name: "ini_setting",
	// The module's autorequire: the directory holding the file.
	Auto: []applier.AutoRel{{Type: "file", Attr: "path", Titles: func(v any) []string {
		if s, ok := v.(string); ok && filepath.IsAbs(s) {
			return []string{filepath.Dir(filepath.Clean(s))}
		}
		return nil
	}}},
	// The module's type has a refresh (refreshonly acts on it): a catalog
	// delivers events to it.
	Refreshes: true,
	Doc:       "Manages a single setting in an INI file (puppetlabs-inifile's ini_setting).",
	Attrs: []*applier.Attr{
		{
			Name:      "ensure",
			Behaviour: applier.Property,
			Kind:      applier.KindEnum,
			Values:    []string{"present", "absent"},
			Default:   "present",
			Doc:       "Whether the setting should be in the file: `present` (the default) or `absent`.",
		},
		{
			Name:      "name",
			Behaviour: applier.Namevar,
			Kind:      applier.KindString,
			Doc:       "An arbitrary name used as the identity of the resource.",
		},
		{
			Name:      "section",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   "",
			Doc: "The name of the section in which the setting should be defined; '' (the " +
				"default) is the settings before any section header.",
		},
		{
			Name:      "setting",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Munge:     func(v any) (any, error) { return strings.TrimSpace(v.(string)), nil },
			Doc: "The name of the setting to be defined; surrounding whitespace is stripped. " +
				"Without it, the resource manages the section's existence.",
		},
		{
			Name:      "force_new_section_creation",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    inifile.Booleans,
			Munge:     inifile.MungeBoolean,
			Default:   "true",
			Doc: "Whether a missing section is created; when false and the section is " +
				"missing, the setting is left absent.",
		},
		{
			Name:      "path",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Validate:  inifile.AbsolutePath,
			Doc:       "The INI file that should contain the setting; fully qualified.",
		},
		inifile.ShowDiff,
		{
			Name:      "key_val_separator",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   " = ",
			Doc: "The separator written between a new setting's name and value. Existing " +
				"lines are recognised by it stripped of blanks (one blank when it is all blanks).",
		},
		{
			Name:      "value",
			Behaviour: applier.Property,
			Kind:      applier.KindString,
			Munge:     func(v any) (any, error) { return inifile.Value(strings.TrimSpace(v.(string))), nil },
			Format:    func(any) string { return inifile.Redacted },
			Doc:       "The value of the setting; surrounding whitespace is stripped. Shown redacted.",
		},
		{
			Name:      "section_prefix",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   "[",
			Doc:       "The prefix of a section's header.",
		},
		{
			Name:      "section_suffix",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   "]",
			Doc:       "The suffix of a section's header.",
		},
		{
			Name:      "indent_char",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   " ",
			Doc:       "The character a new setting's line is indented with.",
		},
		{
			Name:      "indent_width",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Doc: "How many indent_chars indent a new setting; without it, the least " +
				"indentation of the section's settings (none in a new section).",
		},
		{
			Name:      "refreshonly",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    inifile.Booleans,
			Munge:     inifile.MungeBoolean,
			Default:   "false",
			Doc: "Change the setting only when the resource is refreshed (the request " +
				"carries a refresh); otherwise it is in sync whatever the file holds.",
		},
	},
	Providers: []*applier.ProviderSpec{{
		Name: "ruby",
		Doc:  "Parses the file as the module does and rewrites it atomically.",
		New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
			return &provider{r: r, env: env}, nil
		},
	}},
}

func init() { applier.Register(Type) }

// IndentWidth is an indent_width's number (Ruby's to_i: leading digits,
// 0 without), or -1 when unset.
func IndentWidth(r *applier.Resource) int {
	s, ok := r.Value("indent_width").(string)
	if !ok {
		return -1
	}
	s = strings.TrimSpace(s)
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	w, _ := strconv.Atoi(s[:n])
	return w
}

type provider struct {
	r   *applier.Resource
	env *applier.Env
	// content is the file as read; file its model, made for a change
	content []byte
	file    *inifile.File
	path    string
	// what the read found: the setting's value, and the section
	value             string
	found, hasSection bool
	// with refreshonly, the desired values Refresh applies
	refreshEnsure string
	refreshValue  any
}

func (p *provider) options() inifile.Options {
	return inifile.Options{
		KeyValSeparator: p.r.String("key_val_separator"),
		SectionPrefix:   p.r.String("section_prefix"),
		SectionSuffix:   p.r.String("section_suffix"),
		IndentChar:      p.r.String("indent_char"),
		IndentWidth:     IndentWidth(p.r),
	}
}

// parse makes the file's model, for a change, from the content read.
func (p *provider) parse() error {
	if p.file != nil {
		return nil
	}
	f, err := inifile.Parse(p.content, p.options())
	if err != nil {
		return fmt.Errorf("parsing %s: %w", p.path, err)
	}
	p.file = f
	return nil
}

// Resolve reads the file and settles ensure (force_new_section_creation)
// and refreshonly.
func (p *provider) Resolve(ctx context.Context) error {
	p.path = p.r.String("path")
	if p.path == "" {
		return errors.New("path is a required attribute")
	}
	var err error
	if p.content, err = inifile.ReadFile(p.path); err != nil {
		return err
	}
	setting, _ := p.r.Value("setting").(string)
	p.value, p.found, p.hasSection, err = inifile.Lookup(p.content, p.options(), p.r.String("section"), setting)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", p.path, err)
	}
	if p.r.Has("setting") && !p.hasSection && !p.r.Bool("force_new_section_creation") {
		p.r.Set("ensure", "absent")
	}
	if p.r.Bool("refreshonly") {
		p.refreshEnsure = p.r.String("ensure")
		p.refreshValue = p.r.Value("value")
		p.r.Unset("ensure")
		p.r.Unset("value")
	}
	return nil
}

// Get reports whether the setting (or the section) exists, and its value.
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	exists := false
	if !p.r.Has("setting") {
		exists = p.hasSection
	} else if p.found {
		exists = true
		cur.Set("value", inifile.Value(p.value))
	}
	if exists {
		cur.Set("ensure", "present")
	} else {
		cur.Set("ensure", "absent")
	}
	return nil
}

// set is the module's create and value=: the setting given its value (or
// the section made), the file written.
func (p *provider) set(ctx context.Context, value any) error {
	if err := p.parse(); err != nil {
		return err
	}
	setting, hasSetting := p.r.Value("setting").(string)
	v, hasValue := value.(inifile.Value)
	if !hasSetting && !hasValue {
		p.file.EnsureSection(p.r.String("section"))
	} else {
		p.file.Set(p.r.String("section"), setting, p.r.String("key_val_separator"), string(v))
	}
	return linefile.Write(ctx, p.env, p.path, p.file.Bytes())
}

func (p *provider) destroy(ctx context.Context) error {
	if err := p.parse(); err != nil {
		return err
	}
	setting, _ := p.r.Value("setting").(string)
	p.file.Remove(p.r.String("section"), setting)
	return linefile.Write(ctx, p.env, p.path, p.file.Bytes())
}

// Set syncs ensure or value.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	switch c.Property {
	case "ensure":
		if c.Should == "absent" {
			return p.destroy(ctx)
		}
		return p.set(ctx, p.r.Value("value"))
	case "value":
		c.Message = "value changed " + inifile.Redacted + " to " + inifile.Redacted
		return p.set(ctx, c.Should)
	}
	return fmt.Errorf("no such property %s", c.Property)
}

// Refresh applies a refreshonly resource's ensure and value.
func (p *provider) Refresh(ctx context.Context) (string, error) {
	if !p.r.Bool("refreshonly") {
		return "nothing to do without refreshonly", nil
	}
	if p.refreshEnsure == "absent" {
		return "removed", p.destroy(ctx)
	}
	return "value set", p.set(ctx, p.refreshValue)
}
