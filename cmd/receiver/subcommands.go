package main

import (
	"context"
	"io"

	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/internal/stream"
)

// subcommands maps a first argument such as "describe" to its handler;
// main dispatches os.Args[1] through it when it matches, and runs the
// request stream otherwise. A handler returns the process' exit status.
// Every subcommand is registered here, and nowhere else.
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"agent":      agentMain,
	"apply":      applyMain,
	"resource":   cli.Resource,
	"describe":   cli.Describe,
	"facts":      cli.Facts,
	"filebucket": cli.Filebucket,
}

// Exit statuses, the stream's (internal/stream) for every subcommand.
const (
	exitOK     = stream.ExitOK
	exitInput  = stream.ExitInput
	exitUsage  = stream.ExitUsage
	exitOutput = stream.ExitOutput
	exitFailed = cli.ExitFailed
)
