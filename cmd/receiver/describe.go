package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/pippet/pippet/applier"
)

// describe and facts read the declarations and this machine's facts; they
// change nothing.
func init() {
	subcommands["describe"] = describeMain
	subcommands["facts"] = factsMain
}

// describeMain prints types' documentation like `puppet describe`:
// `describe TYPE...` the named types, `describe` every type, `describe
// --list` one line per type.
func describeMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver describe", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the types with a one-line summary each")
	meta := fs.Bool("meta", false, "also document the metaparameters every type accepts")
	asJSON := fs.Bool("json", false, "print each type's declaration as one line of JSON, as the protocol's describe verb answers it (with the provider chosen here and why)")
	usage := func(w io.Writer) {
		fmt.Fprint(w, "usage: receiver describe [--list] [--meta] [--json] [TYPE...]\n\nPrints each type's attributes (kind, valid values, default, doc) and\nproviders from the declarations; every type when none is named.\n\nFlags:\n")
		printFlags(w, fs)
	}
	if code, done := parseFlags(fs, args, "receiver describe", usage, stdout, stderr); done {
		return code
	}
	if *list {
		if err := applier.DescribeList(stdout, applier.Default); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return exitOutput
		}
		return exitOK
	}
	var types []*applier.Type
	if fs.NArg() == 0 {
		types = applier.Default.Types()
	}
	for _, name := range fs.Args() {
		t, ok := applier.Default.Lookup(name)
		if !ok {
			fmt.Fprintf(stderr, "receiver describe: unknown resource type '%s' (known: %s)\n", name, typeNames())
			return exitUsage
		}
		types = append(types, t)
	}
	if *asJSON {
		engine := applier.NewEngine(applier.Default, nil)
		for _, t := range types {
			b, err := engine.DescribeJSON(t)
			if err == nil {
				_, err = stdout.Write(append(b, '\n'))
			}
			if err != nil {
				fmt.Fprintf(stderr, "receiver describe: %v\n", err)
				return exitOutput
			}
		}
		return exitOK
	}
	for _, t := range types {
		if err := applier.Describe(stdout, t); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return exitOutput
		}
	}
	if *meta {
		if err := applier.DescribeMeta(stdout); err != nil {
			fmt.Fprintf(stderr, "receiver describe: %v\n", err)
			return exitOutput
		}
	}
	return exitOK
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

// factsMain prints the facts providers are chosen by: every fact as
// `name => value`, one named fact's bare value, or JSON with --json.
func factsMain(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver facts", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print a JSON object")
	usage := func(w io.Writer) {
		fmt.Fprint(w, "usage: receiver facts [--json] [NAME...]\n\nPrints what pippet knows about this machine (read once per process).\n\nFlags:\n")
		printFlags(w, fs)
	}
	if code, done := parseFlags(fs, args, "receiver facts", usage, stdout, stderr); done {
		return code
	}
	facts := applier.LoadFacts()
	if fs.NArg() > 0 {
		sel := applier.Facts{}
		for _, n := range fs.Args() {
			sel[n] = facts[n]
		}
		if fs.NArg() == 1 && !*asJSON {
			fmt.Fprintln(stdout, sel[fs.Arg(0)])
			return exitOK
		}
		facts = sel
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(facts); err != nil {
			fmt.Fprintf(stderr, "receiver facts: %v\n", err)
			return exitOutput
		}
		return exitOK
	}
	names := make([]string, 0, len(facts))
	for n := range facts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := fmt.Fprintf(stdout, "%s => %s\n", n, facts[n]); err != nil {
			return exitOutput
		}
	}
	return exitOK
}
