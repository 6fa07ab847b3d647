package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/assemble"
	"github.com/pippet/pippet/internal/dsl"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// resource is the command-line face of the read verbs, shaped after
// `puppet resource`.
const resourceUsage = `usage: receiver resource [--json | --yaml] [--noop] [--debug] [--state-dir DIR] TYPE [NAME [ATTR=VALUE ...]]

Shows resources as Puppet's DSL, as ` + "`puppet resource`" + ` does:
  receiver resource TYPE                 every instance (search)
  receiver resource TYPE PARAM=VALUE...  the instances whose properties match
  receiver resource TYPE NAME            one resource (find), changing nothing
  receiver resource TYPE NAME A=V...     applies the attributes, prints the
                                         changes, then the new state
file lists a directory's entries: receiver resource file path=/etc
A VALUE starting with [ or { is read as YAML (a list, a mapping); any other
is a string, munged by the attribute as a request's would be.

Flags:
`

// Resource runs `receiver resource`.
func Resource(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver resource", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the protocol's answer line (with \"state\" and \"params\", or \"instances\") instead of the DSL")
	asYAML := fs.Bool("yaml", false, "print the protocol's params (a YAML flow mapping; for a listing, one line each: the title, a colon, the params) instead of the DSL")
	noop := fs.Bool("noop", false, "with attributes: show what would change, change nothing")
	debug := fs.Bool("debug", false, "log everything to stderr")
	stateDir := fs.String("state-dir", applier.DefaultStateDir(), "`directory` for pippet's own state (the filebucket that keeps a replaced file's content), as the receiver's --state-dir")
	var fallback, modulePath string
	AddFallbackFlags(fs, &fallback, &modulePath)
	usage := func(w io.Writer) {
		fmt.Fprint(w, resourceUsage)
		PrintFlags(w, fs)
	}
	// Flags may come anywhere, as puppet resource takes them: those
	// before a "--" are moved to the front.
	// A flag that takes a value (--state-dir DIR) brings the next
	// argument with it.
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	args = append(flags, pos...)
	if code, done := ParseFlags(fs, args, "receiver resource", usage, stdout, stderr); done {
		return code
	}
	if fs.NArg() == 0 {
		usage(stderr)
		return ExitUsage
	}
	if *asJSON && *asYAML {
		fmt.Fprintln(stderr, "receiver resource: give --json or --yaml, not both")
		return ExitUsage
	}
	typ := fs.Arg(0)
	// A type pippet lacks is read (and applied) by Puppet's bridge, as
	// `puppet resource TYPE` reads it.
	level := slog.LevelWarn
	puppetLevel := "warning"
	if *debug {
		level, puppetLevel = slog.LevelDebug, "debug"
	}
	logger := slog.New(puppetlog.New(stderr, level))
	fb, err := delegate.New(delegate.Options{Fallback: fallback, ModulePath: modulePath, Noop: *noop, LogLevel: puppetLevel,
		Logger: slog.New(delegate.RelayHandler(logger.Handler(), applier.LevelNotice))})
	if err != nil {
		fmt.Fprintf(stderr, "receiver resource: %v\n", err)
		return ExitUsage
	}
	t, ok := applier.Default.Lookup(typ)
	typeName := strings.ToLower(typ)
	if ok {
		typeName = t.Name
	} else if fb == nil || !fb.Knows(typ) {
		fmt.Fprintf(stderr, "receiver resource: unknown resource type '%s' (known: %s)\n", typ, typeNames())
		return ExitUsage
	}
	rest := fs.Args()[1:]
	name := ""
	if len(rest) > 0 && !strings.Contains(rest[0], "=") {
		name, rest = rest[0], rest[1:]
	}
	params := map[string]any{}
	for _, kv := range rest {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(stderr, "receiver resource: %q is not ATTR=VALUE\n", kv)
			return ExitUsage
		}
		val, err := cliValue(v)
		if err != nil {
			fmt.Fprintf(stderr, "receiver resource: %s: %v\n", k, err)
			return ExitUsage
		}
		params[k] = val
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var eng protocol.Applier = assemble.New(assemble.Config{
		Options: applier.Options{Noop: *noop, StateDir: *stateDir},
		Log:     logger.Handler(),
	}).Engine
	if !ok {
		defer fb.Close(context.WithoutCancel(ctx))
		eng = &delegate.Applier{Native: eng, Fallback: fb, NativeKnow: func(name string) bool {
			_, ok := applier.Default.Lookup(name)
			return ok
		}}
	}
	print := func(res protocol.Result) int {
		failed := res.Error || res.Failed
		switch {
		case failed && !*asJSON:
			// Nothing was read: an empty manifest on stdout would read
			// as a resource with no properties.
		case *asJSON:
			out.Write(protocol.AppendResult(nil, &res, false))
		case *asYAML && res.Instances != nil:
			for _, in := range res.Instances {
				b := protocol.AppendYAML(nil, in.Title)
				out.WriteString(string(b) + ": " + paramsYAML(t, in.State) + "\n")
			}
		case *asYAML:
			out.WriteString(res.Params + "\n")
		case res.Instances != nil:
			for _, in := range res.Instances {
				out.WriteString(Manifest(typeName, in.Title, in.State))
			}
		default:
			out.WriteString(Manifest(typeName, name, res.State))
		}
		if failed {
			fmt.Fprintf(stderr, "Error: %s\n", res.Exception)
			return ExitFailed
		}
		return ExitOK
	}
	if name == "" {
		res := eng.Apply(ctx, &protocol.Request{Op: protocol.OpSearch, Type: typeName, Params: params})
		return print(res)
	}
	code := ExitOK
	if len(params) > 0 {
		res := eng.Apply(ctx, &protocol.Request{Type: typeName, Title: name, Params: params})
		if *asJSON {
			out.Write(protocol.AppendResult(nil, &res, false))
		} else {
			for _, ev := range res.Events {
				level := "Notice"
				if ev.Status == protocol.StatusFailure {
					level = "Error"
				}
				fmt.Fprintf(out, "%s: /%s/%s: %s\n", level, res.Resource, ev.Property, ev.Message)
			}
		}
		if res.Error || res.Failed {
			out.Flush()
			fmt.Fprintf(stderr, "Error: %s\n", res.Exception)
			code = ExitFailed
			if res.Error {
				return code
			}
		}
	}
	// The title alone finds the resource: the params of an apply (a
	// provider, a target) narrow where to look.
	find := map[string]any{}
	for _, k := range []string{"provider", "target", "user"} {
		if v, ok := params[k]; ok && (t == nil || t.Attr(k) != nil) {
			find[k] = v
		}
	}
	res := eng.Apply(ctx, &protocol.Request{Op: protocol.OpFind, Type: typeName, Title: name, Params: find})
	if c := print(res); c != ExitOK {
		return c
	}
	return code
}

// paramsYAML is a found state as apply params: the type's own rules for a
// native type, else (a delegated type, whose declaration Puppet has) the
// state as it is, in a YAML flow mapping.
func paramsYAML(t *applier.Type, st protocol.State) string {
	if t != nil {
		return engine.ParamsYAML(t, st)
	}
	return string(protocol.AppendYAML(nil, st))
}

// isBoolFlag reports whether f is given without a value (--json).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// cliValue reads ATTR=VALUE's value: YAML for a list or a mapping, else
// the string as written.
func cliValue(v string) (any, error) {
	if !strings.HasPrefix(v, "[") && !strings.HasPrefix(v, "{") {
		return v, nil
	}
	m, err := yamlparams.Parse([]byte("v: " + v))
	if err != nil {
		return nil, err
	}
	return m["v"], nil
}

// Manifest renders one resource's state in Puppet's DSL as `puppet
// resource` prints it: the title and string values in single quotes
// (backslashes and quotes escaped), numbers and booleans bare, lists in
// brackets, the arrows aligned after the longest attribute name.
func Manifest(typ, title string, st protocol.State) string {
	var b strings.Builder
	b.WriteString(typ + " { " + dsl.String(title) + ":\n")
	width := 0
	for _, p := range st {
		width = max(width, len(p.Name))
	}
	for _, p := range st {
		b.WriteString("  " + p.Name + strings.Repeat(" ", width-len(p.Name)) + " => " + dsl.Value(p.Value) + ",\n")
	}
	b.WriteString("}\n")
	return b.String()
}
