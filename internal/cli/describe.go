package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	agentfacts "github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/assemble"
)

// describe and facts read the declarations and this machine's facts; they
// change nothing.
// Describe prints types' documentation like `puppet describe`:
// `describe TYPE...` the named types, `describe` every type, `describe
// --list` one line per type.
func Describe(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver describe", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the types with a one-line summary each")
	meta := fs.Bool("meta", false, "also document the metaparameters every type accepts")
	asJSON := fs.Bool("json", false, "print each type's declaration as one line of JSON, as the protocol's describe verb answers it (with the provider chosen here and why)")
	var fallback, modulePath string
	AddFallbackFlags(fs, &fallback, &modulePath)
	usage := func(w io.Writer) {
		fmt.Fprint(w, "usage: receiver describe [--list] [--meta] [--json] [TYPE...]\n\nPrints each type's attributes (kind, valid values, default, doc) and\nproviders from the declarations; every type when none is named.\n\nFlags:\n")
		PrintFlags(w, fs)
	}
	if code, done := ParseFlags(fs, args, "receiver describe", usage, stdout, stderr); done {
		return code
	}
	fb, err := delegate.New(delegate.Options{Fallback: fallback, ModulePath: modulePath})
	if err != nil {
		fmt.Fprintf(stderr, "receiver describe: %v\n", err)
		return ExitUsage
	}
	if *list {
		if err := applier.DescribeList(stdout, applier.Default); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return ExitOutput
		}
		if err := describeDelegated(stdout, fb); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return ExitOutput
		}
		return ExitOK
	}
	var types []*applier.Type
	if fs.NArg() == 0 {
		types = applier.Default.Types()
	}
	for _, name := range fs.Args() {
		t, ok := applier.Default.Lookup(name)
		if !ok && fb != nil && fb.Knows(name) {
			fmt.Fprintf(stdout, "\n%s\n%s\n\nDelegated to %s: `puppet describe%s %s` documents it.\n\n",
				name, strings.Repeat("=", len(name)), fb, modulePathFlag(fb), name)
			continue
		}
		if !ok {
			fmt.Fprintf(stderr, "receiver describe: unknown resource type '%s' (%s)\n", name, knownTypes(fb))
			return ExitUsage
		}
		types = append(types, t)
	}
	if *asJSON {
		eng := assemble.New(assemble.Config{}).Engine
		for _, t := range types {
			b, err := eng.DescribeJSON(t)
			if err == nil {
				_, err = stdout.Write(append(b, '\n'))
			}
			if err != nil {
				fmt.Fprintf(stderr, "receiver describe: %v\n", err)
				return ExitOutput
			}
		}
		return ExitOK
	}
	for _, t := range types {
		if err := applier.Describe(stdout, t); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return ExitOutput
		}
	}
	if *meta {
		if err := applier.DescribeMeta(stdout); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return ExitOutput
		}
	}
	return ExitOK
}

// describeDelegated lists, after pippet's own types, those a fallback
// applies: Puppet's that pippet does not implement and the modulepath's.
func describeDelegated(w io.Writer, fb *delegate.Fallback) error {
	if fb == nil {
		return nil
	}
	types := fb.Types()
	if types == nil {
		_, err := fmt.Fprintf(w, "\nAny other type is delegated to %s.\n", fb)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThese types are delegated to %s:\n", fb)
	for _, t := range types {
		if _, native := applier.Default.Lookup(t.Name); native {
			continue
		}
		src := "Puppet's own type"
		if t.Source != "puppet" {
			src = "module " + t.Source
		}
		fmt.Fprintf(&b, "%-15s - (delegated) %s\n", t.Name, src)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// modulePathFlag is " --modulepath X" for the fallback's modulepath.
func modulePathFlag(fb *delegate.Fallback) string {
	if mp := fb.ModulePath(); len(mp) > 0 {
		return " --modulepath " + strings.Join(mp, ":")
	}
	return ""
}

func typeNames() string {
	var s string
	for i, t := range applier.Default.Types() {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	return s
}

// knownTypes names the types describe knows: pippet's own, then those
// the fallback delegates, or why there are none.
func knownTypes(fb *delegate.Fallback) string {
	s := "pippet's own: " + typeNames()
	switch {
	case fb == nil:
		return s + "; no type is delegated: Puppet is not installed or --fallback is none"
	case fb.Types() == nil:
		return s + "; any other type is delegated to " + fb.String()
	}
	var names []string
	for _, t := range fb.Types() {
		if _, native := applier.Default.Lookup(t.Name); !native {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return s
	}
	return s + "; delegated to " + fb.String() + ": " + strings.Join(names, ", ")
}

// Facts prints facts. Without names and --json: the flat facts
// providers are confined by, `name => value`. With names (dotted paths,
// as `facter os.release.major` takes) or --json: the agent's
// Facter-compatible facts (agent/facts), external facts included;
// --json alone prints what `facter --json` prints.
func Facts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver facts", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print a JSON object: the agent's Facter-compatible facts (the named ones, or all as facter --json does)")
	legacy := fs.Bool("show-legacy", false, "with --json and no names: include Facter's legacy facts (osfamily, ipaddress, ...), as Puppet's agent sends them")
	noExternal := fs.Bool("no-external-facts", false, "do not read facts.d directories")
	config := fs.String("config", "", "the facter.conf whose facts.ttls caches facts, as facter --config (default: Facter's, /etc/facter/facter.conf)")
	noCache := fs.Bool("no-cache", false, "neither read nor write Facter's fact cache, as facter --no-cache")
	usage := func(w io.Writer) {
		fmt.Fprint(w, "usage: receiver facts [--json] [--show-legacy] [--no-external-facts] [--config FILE] [--no-cache] [NAME...]\n\n"+
			"Without flags or names: the flat facts providers are confined by (read once per process).\n"+
			"With names (dotted paths: os.release.major) or --json: the agent's Facter-compatible facts,\n"+
			"external facts from facts.d included (docs/agent.md).\n\nFlags:\n")
		PrintFlags(w, fs)
	}
	if code, done := ParseFlags(fs, args, "receiver facts", usage, stdout, stderr); done {
		return code
	}
	if fs.NArg() == 0 && !*asJSON {
		facts := applier.LoadFacts()
		names := make([]string, 0, len(facts))
		for n := range facts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if _, err := fmt.Fprintf(stdout, "%s => %s\n", n, facts[n]); err != nil {
				return ExitOutput
			}
		}
		return ExitOK
	}
	opts := agentfacts.Options{HideLegacy: fs.NArg() == 0 && !*legacy, FacterConf: *config, NoCache: *noCache}
	if *noExternal {
		opts.ExternalDirs = []string{}
	}
	all, errs := agentfacts.Gather(ctx, opts)
	for _, err := range errs {
		fmt.Fprintf(stderr, "receiver facts: %v\n", err)
	}
	var out any = map[string]any(all)
	if fs.NArg() > 0 {
		sel := map[string]any{}
		for _, n := range fs.Args() {
			v, ok := all.Get(n)
			if !ok {
				v = nil // facter prints nothing (null) for an unknown fact
			}
			sel[n] = v
		}
		if fs.NArg() == 1 && !*asJSON {
			v := sel[fs.Arg(0)]
			switch t := v.(type) {
			case nil:
				fmt.Fprintln(stdout)
			case string:
				fmt.Fprintln(stdout, t)
			case map[string]any, []any:
				b, _ := json.MarshalIndent(t, "", "  ")
				fmt.Fprintln(stdout, string(b))
			default:
				fmt.Fprintln(stdout, t)
			}
			return ExitOK
		}
		out = sel
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "receiver facts: %v\n", err)
		return ExitOutput
	}
	return ExitOK
}
