package main

import (
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/pippet/pippet/internal/cli"
	"github.com/pippet/pippet/protocol"
)

func sortStrings(s []string) { sort.Strings(s) }

// helpText documents the protocol for `receiver --help`.
const helpText = `receiver: apply Puppet resources read from stdin, one per line
(a drop-in replacement for ` + "`puppet yamlresource receive`" + `).

Usage:
  receiver [flags] < requests          apply requests until end of input
  receiver SUBCOMMAND [args]           %s

Requests, one per line:
  {"type":"file","title":"/tmp/x","params":"{ensure: file, mode: '0644'}","id":7}
      params: a YAML mapping in a string (read as Puppet reads YAML: yes/no/
      on/off are booleans, 0644 is octal) or a JSON object; "id" (any JSON
      value) is echoed in the answer. No other members are accepted.
  file /tmp/x {ensure: file}
      legacy form TYPE TITLE YAML, split on the first two spaces (a title
      with spaces needs the JSON form).
  {"op":"find","type":"user","title":"root"}
      "op": apply (the default), find, search, describe (read, change
      nothing), or declare.
  {"op":"declare","resources":[{"type":"file","title":"/etc/x"},...]}
      the resources the run manages, for the requests that follow (a
      purge leaves them alone, a concat_file gathers its fragments);
      replaces the last declaration, an empty list clears it.
  Type names are case-insensitive. Blank lines and lines starting with #
  get no answer.

Answers, one JSON line per request, written as soon as it is known:
  {"resource":"File[/tmp/x]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"id":7,"events":[...]}
  error: the request could not be evaluated (bad line, unknown type or
  attribute); failed: it was evaluated and did not converge; exception: the
  message (null when none). id and events (property, previous, desired,
  message, status) come after the six fields and only when present;
  --compat drops them. An undecodable line is answered
  {"failed":true,"changed":false,"error":true,"exception":"..."}.

Before the first answer the receiver writes one ready line (under 80 bytes):
  %s
Limits: a line longer than --max-line is skipped and answered with an
error; YAML alias expansion and nesting are bounded.

Exit status: 0 at end of input or after SIGTERM/SIGINT (the resource in
progress is finished and answered first; a second signal cancels it);
1 reading stdin failed; 2 bad flags; 3 stdout was closed. With
--detailed-exitcodes, instead of 0: 2 something changed, 4 something
failed, 6 both.

Logs go to stderr only, Puppet style (Notice: /File[/tmp/x]/ensure:
created). The default level is notice when stderr is a terminal (with a
summary line at the end of input), warning otherwise (a controller's pipe).

Flags:
`

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, helpText, subcommandNames(), trimNL(bannerLine()))
	cli.PrintFlags(w, fs)
}

func trimNL(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\n' {
		return s[:len(s)-1]
	}
	return s
}

func bannerLine() string { return protocol.Banner }
