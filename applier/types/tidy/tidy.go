// Package tidy is the `tidy` type: remove the files under a path that
// match criteria of age, size and name, as Puppet's tidy does.
//
// Selection follows Puppet 7. Every entry found (the path itself, and with
// recurse its tree, to recurse levels deep) is a candidate; `matches`
// restricts candidates to basenames matching one of its globs; a candidate
// is tidied when it is at least `age` old (by `type`: atime, mtime or
// ctime) or at least `size` big, either one sufficing, and always when
// neither is given. Directories are candidates only with `rmdirs`. Nothing
// is ever followed: a symbolic link is judged and removed as itself.
//
// A file the run manages (applier.RunFrom: the catalog's, or a
// controller's declared run) is never a candidate, and so the directory
// holding it is never emptied: Puppet's tidy makes no file resource for
// a path its catalog holds.
//
// Puppet makes a file resource per path and answers the tidy itself as
// unchanged. A catalog's walk asks for that (applier.WithGenerated): each
// removal is then reported as the event of File[PATH] (`ensure: removed`),
// the tidy unchanged. A request alone answers changed, with one event per
// removed path. Puppet removes a selected directory with everything still in it
// (its generated file resources use force); here a directory is removed
// only once empty, which is what its documentation promises.
//
// The walk is made through directory descriptors (openat, fstatat and
// unlinkat with no symlink followed), so a directory swapped for a
// symbolic link during the walk can never lead a removal outside the tree.
package tidy

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Type is the tidy type's declaration.
var Type = &applier.Type{
	Name: "tidy",
	Doc: "Remove unwanted files based on specific criteria: files at least `age` old or " +
		"at least `size` big (either one sufficing; everything when neither is given), " +
		"restricted to basenames matching `matches`, under `path` to `recurse` levels deep. " +
		"Directories are removed only with `rmdirs`, and only once empty. Symbolic links " +
		"are never followed. A file the run manages (a catalog's, or a declared run's) is " +
		"never removed, nor the directory holding it.",
	Attrs: []*applier.Attr{
		{
			Name: "path", Behaviour: applier.Namevar, Kind: applier.KindPath,
			Doc: "The path to the file or directory to tidy. Must be fully qualified.",
		},
		{
			Name: "recurse", Behaviour: applier.Parameter, Kind: applier.KindString,
			Patterns: []*regexp.Regexp{regexp.MustCompile(`^(true|false|inf|[0-9]+)$`)},
			Munge:    mungeRecurse,
			Format:   formatRecurse,
			Doc: "If path is a directory, descend into it looking for files to tidy: `true` or `inf` " +
				"for the whole tree, a number for that many levels, `false` (the default) for the path alone.",
		},
		{
			Name: "max_files", Behaviour: applier.Parameter, Kind: applier.KindInteger, Default: int64(0),
			Validate: func(v any) error {
				if v.(int64) < 0 {
					return errors.New("must be 0 or more")
				}
				return nil
			},
			Doc: "With recurse, refuse to tidy a tree with more entries than this. 0 (the default) " +
				"disables the check, with a warning above 1000 entries.",
		},
		{
			Name: "matches", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true,
			Validate: validGlob,
			Doc: "One or more shell globs; only entries whose basename matches one are tidied " +
				"(a leading dot matches too, a slash never). Requires recurse.",
		},
		{
			Name: "backup", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "false",
			Accepts: applier.AcceptString | applier.AcceptBoolean, Munge: mungeBackup,
			Doc: "Keep the content of each regular file before it is removed, as the file type's " +
				"backup does: false (the default) for none; a string starting with '.' for a copy " +
				"beside the file with that suffix (true means .puppet-bak); any other name for the " +
				"local filebucket under the state directory (`receiver filebucket list`). A file " +
				"that cannot be backed up is not removed. Directories and links are not backed up.",
		},
		{
			Name: "age", Behaviour: applier.Parameter, Kind: applier.KindString,
			Munge: mungeAge, Format: formatSeconds,
			Doc: "Tidy entries at least this old: a number followed by s, m, h, d or w (only the first " +
				"letter counts: `2days`), or a plain number of days. 0 matches everything.",
		},
		{
			Name: "size", Behaviour: applier.Parameter, Kind: applier.KindString,
			Munge: mungeSize,
			Doc: "Tidy files at least this big: a number followed by b, k, m, g or t (bytes to " +
				"terabytes; only the first letter counts), or a plain number of kilobytes.",
		},
		{
			Name: "type", Behaviour: applier.Parameter, Kind: applier.KindEnum, Default: "atime",
			Values: []string{"atime", "mtime", "ctime"},
			Doc:    "Which time `age` is measured from: atime (the default), mtime or ctime.",
		},
		{
			Name: "rmdirs", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Tidy directories too: a selected directory is removed once everything in it was " +
				"tidied (a directory still holding anything is kept).",
		},
		{
			Name: "tidied", Behaviour: applier.Property, Kind: applier.KindAny,
			DefaultFunc: func(*applier.Resource) any { return []any{} },
			InSync:      nothingLeft,
			Format:      formatPaths,
			Doc: "Set by the receiver, never by a request: the entries the criteria select " +
				"(read) and none (desired). Each removal is one event of this property.",
		},
	},
	Validate:  validate,
	Providers: []*applier.ProviderSpec{Provider},
}

func init() { applier.Register(Type) }

func validate(r *applier.Resource) error {
	if r.Given("tidied") {
		return applier.ParamErrorf("tidied", "is the receiver's to compute, not a request's")
	}
	if r.Given("matches") {
		if d, _ := r.Int("recurse"); d == 0 {
			return applier.ParamErrorf("matches", "Tidy can't use matches with recurse 0, false, or undef")
		}
	}
	return nil
}

// mungeRecurse: 0 for none, -1 for the whole tree, else the depth.
func mungeRecurse(v any) (any, error) {
	switch s := v.(string); s {
	case "false":
		return int64(0), nil
	case "true", "inf":
		return int64(-1), nil
	default:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Invalid recurse value %q", s)
		}
		return n, nil
	}
}

func formatRecurse(v any) string {
	switch n, _ := v.(int64); n {
	case -1:
		return "true"
	case 0:
		return "false"
	default:
		return strconv.FormatInt(n, 10)
	}
}

var amountRe = regexp.MustCompile(`^([0-9]+)([A-Za-z_0-9]\w*)?$`)

// amount splits "2days" into 2 and 'd'; a plain number gets unit def.
func amount(s string, def byte) (int64, byte, bool) {
	m := amountRe.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if m[2] == "" {
		return n, def, true
	}
	return n, strings.ToLower(m[2])[0], true
}

func mungeAge(v any) (any, error) {
	s := v.(string)
	n, unit, ok := amount(s, 'd')
	if !ok {
		return nil, fmt.Errorf("Invalid tidy age %s", s)
	}
	mult := map[byte]int64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 7 * 86400}[unit]
	if mult == 0 {
		return nil, fmt.Errorf("Invalid age unit '%c'", unit)
	}
	if n > math.MaxInt64/mult {
		return nil, fmt.Errorf("Invalid tidy age %s: too large", s)
	}
	return n * mult, nil
}

func formatSeconds(v any) string {
	n, _ := v.(int64)
	return strconv.FormatInt(n, 10) + "s"
}

func mungeSize(v any) (any, error) {
	s := v.(string)
	n, unit, ok := amount(s, 'k')
	if !ok {
		return nil, fmt.Errorf("Invalid tidy size %s", s)
	}
	shift, ok := map[byte]uint{'b': 0, 'k': 10, 'm': 20, 'g': 30, 't': 40}[unit]
	if !ok {
		return nil, fmt.Errorf("Invalid size unit '%c'", unit)
	}
	if n > math.MaxInt64>>shift {
		return nil, fmt.Errorf("Invalid tidy size %s: too large", s)
	}
	return n << shift, nil
}

func validGlob(v any) error {
	s := v.(string)
	if strings.Contains(s, "/") {
		return fmt.Errorf("matches patterns apply to basenames and cannot contain '/': %q", s)
	}
	if _, err := matchGlob(s, "x"); err != nil {
		return fmt.Errorf("invalid glob %q: %w", s, err)
	}
	return nil
}

// nothingLeft: in sync when no entry is selected.
func nothingLeft(is, should any) bool {
	l, _ := is.([]any)
	return len(l) == 0
}

// formatPaths renders a selection for messages, the first 20 paths and a
// count of the rest.
func formatPaths(v any) string {
	l, _ := v.([]any)
	const shown = 20
	var b strings.Builder
	b.WriteString("[")
	for i, e := range l {
		if i == shown {
			fmt.Fprintf(&b, ", ... %d more", len(l)-shown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + applier.FormatValue(e) + "'")
	}
	b.WriteString("]")
	return b.String()
}
