// Package concat is puppetlabs-concat's two types, native: concat_file,
// a file assembled from fragments, and concat_fragment, one piece of it.
// Both live here because neither means anything without the other: the
// fragments are data that the concat_file's provider gathers.
//
// # Where the fragments come from
//
// A concat_file reads its fragments from the run it is applied in
// (applier.RunFrom): the catalog's resources under `receiver apply`, or
// the set a controller declared for its run over the pipe. A fragment
// belongs to the file when its target is the file's title or path, or
// when both have the same tag (the tag metaparameter, which the module's
// types read as theirs), as in the module. The fragments' raw
// parameters are validated here as the fragment type validates them.
// Applied alone (no run), a concat_file has no fragments and its file is
// empty, as Puppet's would be in a catalog of one resource. A
// concat_fragment does nothing itself: applied, it answers unchanged (in
// a run without its target, with the module's warning).
//
// # Assembly
//
// Fragments are sorted by "ORDER___NAME" as the module sorts them: with
// order => numeric (the default) both halves compare as numbers when
// they are digits (a number and a word refuse to compare, failing the
// file as Ruby's sort fails), with alpha as strings. ensure_newline adds
// a newline to a fragment that lacks one. format plain joins them;
// json, json-pretty and yaml merge them as maps (nested maps merged, lists
// joined without duplicates, a key with two different values an error
// unless force => true, the first fragment's value kept); json-array and
// json-array-pretty list them. Keys keep the order they first appear in.
//
// # The target
//
// Like the module, which generates a File resource for the target, the
// provider hands the target to the file type: Get applies a File request
// (path, ensure, the assembled content, owner, group, mode, replace,
// backup, validate_cmd, show_diff) in noop to learn whether it is in
// sync, and Set applies it for real, so the target is written, backed up
// and validated exactly as a file resource's would be (atomically:
// temp file, fsync, rename; never through a symlink). The File's events
// become the concat_file's, with File's property names and messages
// (ensure "defined content as ...", content, mode, owner, group), so a
// caller can report them as Puppet reports its generated File[path]. In
// noop mode too the events are the File's (NoopParts): `content:
// current_value '{sha256}...', should be '{sha256}...' (noop)`, as Puppet
// reports them.
package concat

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/pippet/pippet/applier"
)

var booleans = []string{"true", "false", "yes", "no"}

func mungeBool(v any) (any, error) {
	s, _ := v.(string)
	return s == "true" || s == "yes", nil
}

func boolParam(name string, def any, doc string) *applier.Attr {
	return &applier.Attr{Name: name, Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: booleans,
		Munge: mungeBool, Default: def, Doc: doc}
}

func stringParam(name, doc string) *applier.Attr {
	return &applier.Attr{Name: name, Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString, Doc: doc}
}

// FileType is concat_file's declaration.
var FileType = &applier.Type{
	Name: "concat_file",
	// Puppet reports the target's changes on the File the module generates.
	ReportAs: func(title string, params map[string]any) string {
		if p, ok := params["path"].(string); ok && p != "" {
			return "File[" + p + "]"
		}
		return "File[" + title + "]"
	},
	// The module's autorequire (a file of its path), and those of the File
	// it generates for its target: the nearest managed ancestor directory,
	// the owner and the group.
	Auto: []applier.AutoRel{
		{Type: "file", Attr: "path"},
		{Type: "file", Attr: "path", Titles: applier.Ancestors, First: true},
		{Type: "user", Attr: "owner", Titles: applier.Names},
		{Type: "group", Attr: "group", Titles: applier.Names},
	},
	Doc: "Generates a file with content from fragments (concat_fragment resources) whose " +
		"target is its title or path, or that share its tag (puppetlabs-concat's concat_file).",
	Attrs: []*applier.Attr{
		{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"present", "absent"}, Default: "present",
			Format: formatState,
			Doc:    "Whether the destination file should exist; absent removes it and negates every other attribute."},
		{Name: "path", Behaviour: applier.Namevar, Kind: applier.KindString,
			Validate: func(v any) error {
				if s, _ := v.(string); !filepath.IsAbs(s) {
					return fmt.Errorf("File paths must be fully qualified, not '%s'", s)
				}
				return nil
			},
			Doc: "The destination file; fully qualified. Defaults to the title."},
		{Name: "owner", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The destination file's owner: a user name or a uid."},
		{Name: "group", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The destination file's group: a group name or a gid."},
		{Name: "mode", Behaviour: applier.Parameter, Kind: applier.KindString,
			Doc: "The destination file's permissions, as the file type takes them (octal or symbolic)."},
		{Name: "order", Behaviour: applier.Parameter, Kind: applier.KindEnum, Values: []string{"alpha", "numeric"}, Default: "numeric",
			Doc: "How fragments are sorted by their order (then name): numeric (the default) or alpha."},
		{Name: "backup", Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString | applier.AcceptBoolean,
			Doc: "How the file type backs up the old file: false, a suffix starting with '.', or a bucket name (the local filebucket)."},
		boolParam("replace", "true", "Whether to overwrite the destination file if it already exists."),
		stringParam("validate_cmd", "A command checking the new content before it replaces the file, as the file type's (% stands for the temp file)."),
		boolParam("ensure_newline", "false", "Whether to add a newline at the end of each fragment that doesn't already end in one."),
		{Name: "format", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"plain", "yaml", "json", "json-array", "json-pretty", "json-array-pretty"}, Default: "plain",
			Doc: "How fragments are merged: plain (joined), yaml, json, json-pretty (merged maps), json-array, json-array-pretty (a list)."},
		boolParam("force", "false", "Whether merging data (yaml, json) may meet a key twice with different values (the first is kept)."),
		boolParam("selinux_ignore_defaults", nil, "The file type's selinux_ignore_defaults; accepted and ignored (as Puppet ignores it without SELinux)."),
		stringParam("selrange", "The file type's selrange; accepted and ignored."),
		stringParam("selrole", "The file type's selrole; accepted and ignored."),
		stringParam("seltype", "The file type's seltype; accepted and ignored."),
		stringParam("seluser", "The file type's seluser; accepted and ignored."),
		boolParam("show_diff", nil, "The file type's show_diff for the destination file."),
	},
	Providers: []*applier.ProviderSpec{{
		Doc: "Assembles the fragments of the run and applies the destination file through the file type.",
		New: newFileProvider,
	}},
}

var badOrder = regexp.MustCompile(`[:\n/]`)

// FragmentType is concat_fragment's declaration.
var FragmentType = &applier.Type{
	Name: "concat_fragment",
	// puppetlabs-concat's autobefore: a fragment before its concat_file.
	Auto: []applier.AutoRel{{Type: "concat_file", Attr: "target", Before: true}},
	Doc: "One fragment of a concat_file: applied, it does nothing; the concat_file it targets " +
		"reads it from the run (puppetlabs-concat's concat_fragment).",
	Attrs: []*applier.Attr{
		{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString, Doc: "Name of resource."},
		{Name: "target", Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString,
			Doc: "The path or title of the concat_file the fragment belongs to."},
		{Name: "content", Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString,
			Doc: "The fragment's content. Either content or source."},
		{Name: "source", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true, Accepts: applier.AcceptString,
			Doc: "Files to read the content from, the first that exists: local paths or file: URLs. Either content or source."},
		{Name: "order", Behaviour: applier.Parameter, Kind: applier.KindString, Accepts: applier.AcceptString | applier.AcceptInteger,
			Default: "10", Validate: validOrder,
			Doc: "Sorts the fragment within the file (fragments of the same order by name). Default 10."},
	},
	Validate: func(r *applier.Resource) error {
		if !r.Has("target") && !slices.Contains(r.Ignored, "tag") {
			return errors.New("No 'target' or 'tag' set")
		}
		if !r.Has("source") && !r.Has("content") {
			return errors.New("Set either 'source' or 'content'")
		}
		if r.Has("source") && r.Has("content") {
			return errors.New("Can't use 'source' and 'content' at the same time")
		}
		return nil
	},
	Providers: []*applier.ProviderSpec{{
		Doc: "Does nothing: the concat_file reads the fragment.",
		New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
			return &fragment{r: r, env: env}, nil
		},
	}},
}

func validOrder(v any) error {
	if s, _ := v.(string); badOrder.MatchString(s) {
		return errors.New(`Order cannot contain '/', ':', or '\n'.`)
	}
	return nil
}

func init() {
	applier.Register(FileType)
	applier.Register(FragmentType)
}
