package main

import (
	"context"
	"io"
)

// subcommands maps a first argument such as "describe" to its handler.
// Other files add theirs from init(); main dispatches os.Args[1] through it
// when it matches, and runs the apply loop otherwise. A handler returns the
// process' exit status.
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{}
