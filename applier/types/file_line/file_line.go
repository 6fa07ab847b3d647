// Package file_line is stdlib's file_line type, native: one line that a
// file must contain (or not), the rest of the file left as it is.
//
// # Schema
//
// The attributes, defaults and validation are those of
// puppetlabs-stdlib 8.5 (the version Debian ships): `ensure` and `line`
// are properties, everything else parameters. `line` is in sync by
// definition (the module's retrieve answers the desired line): the whole
// decision is ensure's, made by the provider's Get.
//
// # The rules
//
// Get reads the file once and counts the lines equal to `line` (compared
// without their line terminator, as Ruby's chomp drops it) and the lines
// `match` matches, then answers present or absent by the module's
// exists? table (provider.go). Set rewrites the file as the module's
// create or destroy would: a match replaced in place (refused when
// several match, unless multiple), a line inserted after the first line
// matching `after` when nothing matches `match` (after every such line
// when there is no `match`), else appended; every equal line removed, or
// with match_for_absence every matching one. Like Ruby's puts, a rewrite
// that goes line by line ends every line with a newline; a removal joins
// what is left as it was.
//
// # Writing
//
// The new content goes through package linefile: a temp file beside the
// target (through a symlink, as the module writes through it), fsynced
// and renamed over the target, keeping its owner and mode. A failure
// leaves the old file whole; the module's File.open(path, 'w') would
// leave it truncated.
//
// Regular expressions are Go's (RE2), not Ruby's: the common syntax is
// the same, but look-around and back-references are refused with an
// error naming the parameter.
package file_line

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/linefile"
)

var trueFalse = []string{"true", "false"}

// Type is the file_line type's declaration.
var Type = &applier.Type{
	Name: "file_line",
	// The module's autorequire: the file that holds the line.
	Auto: []applier.AutoRel{{Type: "file", Attr: "path"}},
	Doc: "Ensures that a given line is contained within a file (stdlib's file_line). " +
		"The whole line is compared, whitespace included; a missing line is appended, " +
		"or inserted after the line matching `after`, or replaces the line matching `match`.",
	Attrs: []*applier.Attr{
		{
			Name:      "ensure",
			Behaviour: applier.Property,
			Kind:      applier.KindEnum,
			Values:    []string{"present", "absent"},
			Default:   "present",
			Doc:       "Whether the line should be in the file: `present` (the default) or `absent`.",
		},
		{
			Name:      "name",
			Behaviour: applier.Namevar,
			Kind:      applier.KindString,
			Doc:       "An arbitrary name used as the identity of the resource.",
		},
		{
			Name:      "match",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Validate:  validRegexp,
			Doc: "A regular expression run against the file's lines: a matching line is " +
				"replaced by `line` instead of a new one being added. Go's RE2 syntax " +
				"(Ruby's common syntax; no look-around or back-references).",
		},
		{
			Name:      "match_for_absence",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    trueFalse,
			Default:   "false",
			Doc: "With ensure => absent and `match`, remove the lines `match` matches " +
				"instead of those equal to `line`. Ignored when ensure is present.",
		},
		{
			Name:      "multiple",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    trueFalse,
			Doc: "Whether `match` (or `after`) may match more than one line; without it " +
				"several matches fail the resource.",
		},
		{
			Name:      "after",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Validate:  validRegexp,
			Doc: "A regular expression: a new line is inserted after the line it matches " +
				"(existing lines are replaced in place).",
		},
		{
			Name:      "line",
			Behaviour: applier.Property,
			Kind:      applier.KindString,
			InSync:    func(is, should any) bool { return true },
			Doc: "The line to be appended to the file or used to replace matches found by " +
				"`match`. Required unless ensure => absent with match_for_absence and `match`.",
		},
		{
			Name:      "path",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Validate: func(v any) error {
				if s, _ := v.(string); !filepath.IsAbs(s) {
					return fmt.Errorf("File paths must be fully qualified, not '%s'", s)
				}
				return nil
			},
			Doc: "The file that should contain the line. Required; fully qualified.",
		},
		{
			Name:      "replace",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    trueFalse,
			Default:   "true",
			Doc:       "If false, a line that `match` matches is left as it is instead of being replaced.",
		},
		{
			Name:      "replace_all_matches_not_matching_line",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    trueFalse,
			Default:   "false",
			Doc: "Replace every line `match` matches, even when `line` is already in the " +
				"file. Needs multiple => true and replace => true.",
		},
		{
			Name:      "encoding",
			Behaviour: applier.Parameter,
			Kind:      applier.KindString,
			Default:   "UTF-8",
			Validate:  validEncoding,
			Doc: "The file's character encoding, for files that are not UTF-8 (such as " +
				"iso-8859-1). Single-byte encodings (ISO-8859-*, Windows-125*, ASCII, " +
				"binary) and UTF-8 are supported.",
		},
		{
			Name:      "append_on_no_match",
			Behaviour: applier.Parameter,
			Kind:      applier.KindEnum,
			Values:    trueFalse,
			Default:   "true",
			Doc:       "If false, nothing is appended when `match` matches no line.",
		},
	},
	Validate: validate,
	Providers: []*applier.ProviderSpec{{
		Name: "ruby",
		Doc:  "Reads the file, decides by stdlib's rules and rewrites it atomically.",
		New:  newProvider,
	}},
}

func init() { applier.Register(Type) }

func validRegexp(v any) error {
	s, _ := v.(string)
	if _, err := linefile.Regexp(s); err != nil {
		return fmt.Errorf("invalid regular expression '%s': %w", s, err)
	}
	return nil
}

// validate holds the module's rules across attributes, worded as its.
func validate(r *applier.Resource) error {
	if r.String("replace_all_matches_not_matching_line") == "true" && r.String("multiple") == "false" {
		return errors.New("multiple must be true when replace_all_matches_not_matching_line is true")
	}
	if r.String("replace_all_matches_not_matching_line") == "true" && r.String("replace") == "false" {
		return errors.New("replace must be true when replace_all_matches_not_matching_line is true")
	}
	if !r.Has("line") {
		if !(r.String("ensure") == "absent" && r.String("match_for_absence") == "true" && r.Has("match")) {
			return errors.New("line is a required attribute")
		}
	}
	if !r.Has("path") {
		return errors.New("path is a required attribute")
	}
	return nil
}

// encodingKind classifies an encoding name: utf8, a single-byte one, or
// unsupported.
type encodingKind int

const (
	encUTF8 encodingKind = iota
	encSingleByte
	encUnknown
)

func classify(name string) encodingKind {
	n := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
	switch {
	case n == "utf-8" || n == "utf8":
		return encUTF8
	case strings.HasPrefix(n, "iso-8859-"), strings.HasPrefix(n, "iso8859-"), strings.HasPrefix(n, "windows-125"),
		strings.HasPrefix(n, "cp125"), strings.HasPrefix(n, "latin"), n == "us-ascii", n == "ascii",
		n == "ascii-8bit", n == "binary":
		return encSingleByte
	}
	return encUnknown
}

func validEncoding(v any) error {
	s, _ := v.(string)
	if classify(s) == encUnknown {
		return fmt.Errorf("unsupported encoding '%s': UTF-8 and single-byte encodings (ISO-8859-*, Windows-125*, ASCII, binary) are", s)
	}
	return nil
}
