// Command graph is a small graph engine on top of the runner package: it
// reads a YAML list of resources with `require` edges and applies them
// through one receiver process, each resource from its own goroutine as soon
// as what it requires is done (independent resources concurrently; the
// runner serializes them on the pipe), printing one progress line per
// resource and a summary.
//
//	go run ./examples/graph [-receiver 'CMD ARGS'] [-timeout 30s] examples/graph/site.yaml
//
// The receiver is `receiver` beside this program or on PATH, or the
// command line in $PIPPET_RECEIVER, or -receiver; any receiver speaking the
// protocol works, `puppet yamlresource receive --color=no` included. The
// exit status is 1 when a resource failed or was skipped.
//
// ${NAME} in the file is the environment variable NAME; ${TMPDIR} is /tmp
// when unset and ${USER} the name of the account running the command, so
// site.yaml writes under a directory of the user's own.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"time"

	"github.com/pippet/pippet/runner"
)

func main() {
	receiver := flag.String("receiver", "", "receiver command line (default: $PIPPET_RECEIVER, or `receiver` beside this program or on PATH)")
	timeout := flag.Duration("timeout", 30*time.Second, "deadline of each resource")
	verbose := flag.Bool("v", false, "log the receiver's stderr and lifecycle")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [flags] RESOURCES.yaml\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *receiver, *timeout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "graph:", err)
		os.Exit(1)
	}
}

// siteEnv looks up the ${NAME}s of a graph file: the environment, with
// TMPDIR and USER never left empty.
func siteEnv(name string) (string, bool) {
	if v := os.Getenv(name); v != "" {
		return v, true
	}
	switch name {
	case "TMPDIR":
		return os.TempDir(), true
	case "USER":
		if u, err := user.Current(); err == nil {
			return u.Username, true
		}
	}
	return os.LookupEnv(name)
}

func run(file, receiver string, timeout time.Duration, verbose bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if data, err = Expand(data, siteEnv); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	g, err := Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}

	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	opts := runner.Options{
		Command: strings.Fields(receiver),
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
	if err := runner.Configure(opts); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rec := runner.Get()
	// An engine's resources register as they are set up and unregister as
	// they are torn down; the child lives from the first to the last.
	registered := 0
	defer func() {
		for range registered {
			if err := rec.Unregister(); err != nil {
				fmt.Fprintln(os.Stderr, "graph:", err)
			}
		}
	}()
	for range g.Len() {
		if err := rec.RegisterContext(ctx); err != nil {
			return err
		}
		registered++
	}

	start := time.Now()
	p := &printer{w: os.Stdout, total: g.Len()}
	outs := g.Run(ctx, rec, timeout, p.print)
	s := Summary(outs)
	fmt.Printf("%d resources in %s: %d changed, %d unchanged, %d failed, %d skipped\n",
		len(outs), time.Since(start).Round(time.Millisecond), s[Changed], s[Unchanged], s[Failed], s[Skipped])
	if s[Failed]+s[Skipped] > 0 {
		return fmt.Errorf("%d failed, %d skipped", s[Failed], s[Skipped])
	}
	return nil
}
