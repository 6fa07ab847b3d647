package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/pippet/pippet/delegate"
)

// Exit statuses every subcommand shares with the receiver's stream.
const (
	ExitOK     = 0 // done
	ExitFailed = 1 // a resource could not be read or applied
	ExitUsage  = 2 // bad flags or arguments
	ExitOutput = 3 // stdout closed or failing
)

// PrintFlags lists every flag of fs, spelled with two dashes as the
// README and Puppet spell them (a one-letter flag with one: -e CODE):
//
//	--max-line N
//	      longest request line in bytes ... (default 16777216)
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, doc := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if len(f.Name) == 1 {
			// -e CODE, as the usage line and Puppet spell it.
			line = "  -" + f.Name
		}
		if name != "" {
			line += " " + strings.ToUpper(name)
		}
		switch f.DefValue {
		case "", "false", "0", "0s":
		default:
			doc += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, doc)
	})
}

// singleDash finds a flag named with one dash in the flag package's
// messages ("flag provided but not defined: -frobnicate").
var singleDash = regexp.MustCompile(`(^|[ :])-([[:alnum:]])`)

// ParseFlags parses args with fs, which belongs to the command cmd
// ("receiver describe"). Help (-h, --help) prints usage (a text, then
// every flag) once, on stdout; a bad flag prints the error, with the flag
// spelled with two dashes, and a hint on stderr. done says the command
// should end now with status code.
func ParseFlags(fs *flag.FlagSet, args []string, cmd string, usage func(io.Writer), stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return ExitOK, false
	case errors.Is(err, flag.ErrHelp):
		usage(stdout)
		return ExitOK, true
	}
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", cmd, singleDash.ReplaceAllString(err.Error(), "$1--$2"), cmd)
	return ExitUsage, true
}

// AddFallbackFlags declares --fallback and --modulepath (the receiver's
// and describe's).
func AddFallbackFlags(fs *flag.FlagSet, fallback, modulePath *string) {
	fs.StringVar(fallback, "fallback", delegate.ModeAuto, "where requests of types pippet does not implement go: `puppet` (Puppet's resource layer through pippet's bridge), none (an error answer), auto (puppet when an installation is found, else none), or a receiver command line such as 'puppet yamlresource receive --color=no'")
	fs.StringVar(modulePath, "modulepath", "", "colon-separated `directories` of Puppet modules whose custom types and providers the fallback loads (default Puppet's: CODEDIR/environments/production/modules, CODEDIR/modules, /usr/share/puppet/modules)")
}

// AddDelegateFlag declares --delegate.
func AddDelegateFlag(fs *flag.FlagSet, types *string) {
	fs.StringVar(types, "delegate", "", "comma-separated `types` sent to the fallback even though pippet has them natively "+
		"(file_line,ini_setting,...: when the module on the modulepath is a version whose rules differ from the one pippet follows)")
}

// SplitList splits a flag's comma-separated list (--delegate, --tags), blanks trimmed and empty items dropped.
func SplitList(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
