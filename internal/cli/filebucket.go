package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/filebucket"
	"github.com/pippet/pippet/internal/puppetlog"
)

const filebucketUsage = `usage: receiver filebucket [--state-dir DIR] list
       receiver filebucket [--state-dir DIR] get CHECKSUM
       receiver filebucket [--state-dir DIR] restore PATH CHECKSUM

The local filebucket holds the content file resources replaced or removed
with a backup that names a bucket (backup: main). Each content is stored
once under DIR/bucket, keyed by its sha256.

  list      one line per backup, newest first: sha256, time (UTC), original path
  get       write the stored content to stdout
  restore   put the stored content back at PATH (atomically; an existing
            file keeps its owner and mode)

CHECKSUM is the sha256 (or a unique prefix of at least 6 hex digits).

Flags:
`

// Filebucket lists, prints and restores backups in the local filebucket.
func Filebucket(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("receiver filebucket", flag.ContinueOnError)
	stateDir := fs.String("state-dir", applier.DefaultStateDir(), "pippet's state `directory` (the bucket is its bucket/ subdirectory)")
	usage := func(w io.Writer) {
		fmt.Fprint(w, filebucketUsage)
		PrintFlags(w, fs)
	}
	// Flags may come before, between or after the positional arguments.
	var pos []string
	for {
		if code, done := ParseFlags(fs, args, "receiver filebucket", usage, stdout, stderr); done {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "receiver filebucket: missing action (list, get or restore)")
		usage(stderr)
		return ExitUsage
	}
	action, rest := pos[0], pos[1:]
	b := &filebucket.Bucket{Dir: filebucket.Dir(*stateDir)}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "receiver filebucket %s: %v\n", action, err)
		return ExitFailed
	}
	switch {
	case action == "list" && len(rest) == 0:
		entries, err := b.List()
		if err != nil {
			return fail(err)
		}
		for _, e := range entries {
			if _, err := fmt.Fprintf(stdout, "%s %s %s\n", e.Checksum, e.Time.UTC().Format("2006-01-02 15:04:05"), puppetlog.EscapeControls(e.Path)); err != nil {
				return ExitOutput
			}
		}
		return ExitOK
	case action == "get" && len(rest) == 1:
		f, err := b.Open(rest[0])
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		if _, err := io.Copy(stdout, f); err != nil {
			return ExitOutput
		}
		return ExitOK
	case action == "restore" && len(rest) == 2:
		path := rest[0]
		if !filepath.IsAbs(path) {
			return fail(fmt.Errorf("path %q must be absolute", path))
		}
		if err := b.Restore(ctx, rest[1], path); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "restored %s from %s\n", path, rest[1])
		return ExitOK
	}
	switch action {
	case "list", "get", "restore":
		fmt.Fprintf(stderr, "receiver filebucket %s: wrong number of arguments\n", action)
	default:
		fmt.Fprintf(stderr, "receiver filebucket: unknown action %q (known: list, get, restore)\n", action)
	}
	usage(stderr)
	return ExitUsage
}
