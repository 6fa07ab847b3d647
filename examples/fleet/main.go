// Command fleet applies one NDJSON file of resources to several hosts at
// once, each through its own runner and receiver, and prints a summary per
// host. The transport is whatever command starts a receiver on the host;
// for a real fleet that is ssh:
//
//	go run ./examples/fleet -host web1='ssh web1 receiver' -host web2='ssh web2 receiver' site.ndjson
//
// Each host needs `receiver` on the PATH its ssh session gets (or the full
// path in the command); `make static` builds one to copy to a host that
// has no Go. A host that cannot be reached does not hold back the others. The exit
// status is 1 when any resource failed or any host could not be driven.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type hostFlags []Host

func (h *hostFlags) String() string { return fmt.Sprint(*h) }
func (h *hostFlags) Set(s string) error {
	host, err := ParseHost(s)
	if err != nil {
		return err
	}
	*h = append(*h, host)
	return nil
}

func main() {
	var hosts hostFlags
	flag.Var(&hosts, "host", "NAME=COMMAND starting a receiver on that host (repeat for each host)")
	timeout := flag.Duration("timeout", time.Minute, "deadline of each resource")
	verbose := flag.Bool("v", false, "log the receivers' stderr and lifecycle")
	noop := flag.Bool("noop", false, "change nothing: report what would change on each host")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s -host NAME=COMMAND [-host ...] [flags] RESOURCES.ndjson\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || len(hosts) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	resources, err := ReadResources(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleet: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bad := false
	for _, s := range Apply(ctx, hosts, resources, *timeout, *noop, log) {
		fmt.Println(s)
		for _, e := range s.Failures {
			fmt.Println("  failed: " + strings.ReplaceAll(e.Error(), "\n", "\n    "))
		}
		bad = bad || s.Err != nil || s.Failed > 0
	}
	if bad {
		os.Exit(1)
	}
}
