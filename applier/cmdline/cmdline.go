// Package cmdline turns a command written as one string into the program
// and arguments to run, by the rule Ruby's Kernel.exec applies and so every
// Puppet command string follows (exec's posix provider, file's
// validate_cmd): a string with a shell metacharacter, a variable assignment
// in its first word, or a shell keyword or special built-in as its first
// word is run by /bin/sh -c; any other string is split on blanks and run
// directly, without a shell.
package cmdline

import "strings"

// Argv is the argument vector Ruby would execute for cmd.
func Argv(cmd string) []string {
	if NeedsShell(cmd) {
		return []string{"/bin/sh", "-c", cmd}
	}
	return Fields(cmd)
}

// NeedsShell reports whether Ruby's Kernel.exec would hand the string to
// /bin/sh: a metacharacter anywhere, an assignment in the first word, or a
// first word that is a shell keyword or special built-in.
func NeedsShell(cmd string) bool {
	firstStart, firstEnd := -1, -1
	slashInFirst := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if c == ' ' || c == '\t' {
			if firstStart >= 0 && firstEnd < 0 {
				firstEnd = i
			}
		} else if firstStart < 0 {
			firstStart = i
		}
		if strings.IndexByte("*?{}[]<>()~&|\\$;'`\"\n#", c) >= 0 {
			return true
		}
		if firstEnd < 0 && firstStart >= 0 {
			if c == '=' && !slashInFirst {
				return true
			}
			if c == '/' {
				slashInFirst = true
			}
		}
	}
	if firstStart < 0 || slashInFirst {
		return false
	}
	if firstEnd < 0 {
		firstEnd = len(cmd)
	}
	return shellWords[cmd[firstStart:firstEnd]]
}

// shellWords are the POSIX reserved words and special built-ins Ruby
// sends to the shell.
var shellWords = map[string]bool{
	"!": true, ".": true, ":": true, "break": true, "case": true, "continue": true, "do": true,
	"done": true, "elif": true, "else": true, "esac": true, "eval": true, "exec": true, "exit": true,
	"export": true, "fi": true, "for": true, "if": true, "in": true, "readonly": true, "return": true,
	"set": true, "shift": true, "then": true, "times": true, "trap": true, "unset": true,
	"until": true, "while": true,
}

// Fields splits on spaces and tabs, as Ruby does for a string run
// without a shell.
func Fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}
