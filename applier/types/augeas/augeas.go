// Package augeas is the `augeas` type of puppetlabs-augeas_core (the
// version Debian ships with Puppet 7): changes to configuration files
// made through Augeas's tree and its lenses.
//
// pippet does not reimplement Augeas: the provider drives the real one
// through augtool (Debian's augeas-tools), one process per step, fed its
// commands on standard input. What Puppet's provider does with the
// ruby-augeas binding, this one does with augtool's commands:
//
//   - Opening: with incl and lens, only that file through that lens
//     (augtool -A, then /augeas/load/Xfm/lens and incl set and load, as
//     Puppet sets them); without, every lens autoloaded and, when the
//     context is a plain /files path, only the transforms whose incl globs
//     can match it kept (Puppet's load optimisation). root, load_path and
//     type_check are augtool's -r, -I and -c.
//   - Parsing: changes and onlyif are read with augeas_core's grammar
//     (parse.go): one command a line, relative paths under the context,
//     quoted strings with their delimiter escaped, extra words ignored.
//   - Deciding (Get): onlyif first (get, values, match with their
//     comparators), in a process of its own; then, unless force, the
//     changes in a dry run, saved with /augeas/save set to newfile: the
//     files Augeas would write are listed in /augeas/events/saved, their
//     .augnew copies diffed with the originals (show_diff, logged as
//     Puppet logs them) and removed. returns reads `need_to_run` when a
//     file would change (or force), else 0: in sync.
//   - Changing (Set): the changes again, in a fresh process, saved with
//     /augeas/save overwrite: Augeas writes each file to a temporary file
//     beside it and renames it over the original, so no file is ever
//     half-written. The event says "executed successfully".
//
// Every argument is handed to augtool quoted so that its tokenizer gives
// back exactly the string Puppet would have passed to Augeas; a value
// augtool cannot carry (a NUL byte, a `]` with no `[` before it) is
// refused with the resource named. augtool runs with its output line
// buffered (stdbuf -oL), so its error lines come in order with its
// answers, and after every command a marker with a random nonce, so each
// command's answer (and error) is known; read answers are taken from
// dump-xml, so values with spaces, quotes or newlines read back exactly.
// Output is bounded, the process is killed with its group when the
// request's context ends or after a timeout.
package augeas

import (
	"errors"
	"strings"

	"github.com/pippet/pippet/applier"
)

// Type is the augeas type's declaration.
var Type = &applier.Type{
	Name: "augeas",
	// What Sensitive changes do to a file is as secret as they are.
	SensitiveWith: map[string][]string{"changes": {"onlyif"}, "onlyif": {"changes"}},
	Doc: "Applies a change or an array of changes to the filesystem using Augeas (through augtool): " +
		"the changes are run only when onlyif allows and a dry run shows a file would change.",
	Attrs: []*applier.Attr{
		{
			Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString,
			Doc: "The name of this task. Used for uniqueness.",
		},
		{
			Name: "context", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "",
			Doc: "Optional context path, put before every relative path of changes and onlyif. " +
				"With incl, defaults to `/files` followed by incl; otherwise to the empty string.",
		},
		{
			Name: "onlyif", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "",
			Doc: "Optional Augeas command and comparison deciding whether to run: " +
				"`get PATH COMPARATOR STRING`, `values PATH include|not_include STRING`, " +
				"`values PATH ==|!= ['a', 'b']`, `match PATH size COMPARATOR INT`, " +
				"`match PATH include|not_include STRING`, `match PATH ==|!= ['a', 'b']` " +
				"(comparators >, >=, !=, ==, <=, <, and =~ for get).",
		},
		{
			Name: "changes", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true,
			Doc: "The changes: a command or an array of commands (a string may hold several, one a line): " +
				"set, setm, rm/remove, clear, clearm, touch, ins/insert, mv/move, rename, defvar, defnode. " +
				"Relative paths are put under context.",
		},
		{
			Name: "root", Behaviour: applier.Parameter, Kind: applier.KindString, Default: "/",
			Doc: "A file system path; all files loaded by Augeas are loaded underneath root.",
		},
		{
			Name: "load_path", Behaviour: applier.Parameter, Kind: applier.KindString, Array: true,
			Doc: "Optional colon-separated list or array of directories searched for lenses, " +
				"before Augeas's own.",
		},
		{
			Name: "force", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: false,
			Doc: "Run the changes even when the dry run shows no file would change (onlyif still decides). " +
				"Every run then reports a change.",
		},
		{
			Name: "type_check", Behaviour: applier.Parameter, Kind: applier.KindEnum,
			Values: []string{"true", "false"}, Default: "false",
			Doc: "Whether Augeas should type-check its lenses (slow).",
		},
		{
			Name: "lens", Behaviour: applier.Parameter, Kind: applier.KindString,
			Validate: noNewline,
			Doc:      "The lens to load the file with, such as `Hosts.lns`; requires incl.",
		},
		{
			Name: "incl", Behaviour: applier.Parameter, Kind: applier.KindString,
			Validate: noNewline,
			Doc:      "Load only this file (or glob), such as `/etc/hosts`, which is much faster; requires lens.",
		},
		{
			Name: "show_diff", Behaviour: applier.Parameter, Kind: applier.KindBoolean, Default: true,
			Doc: "Whether to log the diff of a file the changes would rewrite (at the resource's loglevel), " +
				"when Puppet's show_diff setting is on (--show_diff, puppet.conf, the agent's -t); off by default. " +
				"Sensitive changes (sensitive_parameters) are never diffed: `returns: [diff redacted]`.",
		},
		{
			Name: "returns", Behaviour: applier.Property, Kind: applier.KindString, Default: "0",
			Doc: "The expected return code; should not be set. Reads `need_to_run` when the changes " +
				"would change a file, which syncing runs them (\"executed successfully\").",
		},
	},
	Validate: func(r *applier.Resource) error {
		if r.Given("lens") != r.Given("incl") {
			return errors.New("You must specify both the lens and incl parameters, or neither.")
		}
		return nil
	},
	Providers: []*applier.ProviderSpec{Provider},
}

func init() { applier.Register(Type) }

func noNewline(v any) error {
	if s, _ := v.(string); strings.ContainsAny(s, "\r\n\x00") {
		return errors.New("cannot include a newline")
	}
	return nil
}
