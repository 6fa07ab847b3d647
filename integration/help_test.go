package integration

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Help goes to stdout once, with every flag spelled with two dashes; a
// mistake goes to stderr, names what is unknown and exits 2.
func TestHelpAndUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a regexp the whole stdout matches
		stderr string // a regexp the whole stderr matches
	}{
		{"help", []string{"--help"}, 0, `(?s)^receiver: apply Puppet resources.*\nFlags:\n  --ca-file .*  --verbose\n.*\n$`, `^$`},
		{"-h", []string{"-h"}, 0, `(?s)^receiver: apply Puppet resources.*Flags:\n`, `^$`},
		{"describe -h", []string{"describe", "-h"}, 0, `(?s)^usage: receiver describe .*\n  --list\n.*  --meta\n.*\n$`, `^$`},
		{"facts --help", []string{"facts", "--help"}, 0, `(?s)^usage: receiver facts .*\n  --json\n.*\n$`, `^$`},
		{"filebucket -h", []string{"filebucket", "-h"}, 0, `(?s)^usage: receiver filebucket .*\n  --state-dir DIRECTORY\n.*\n$`, `^$`},
		{"filebucket list -h", []string{"filebucket", "list", "-h"}, 0, `(?s)^usage: receiver filebucket .*\n  --state-dir DIRECTORY\n.*\n$`, `^$`},
		{"agent --help", []string{"agent", "--help"}, 0, `(?s)^usage: receiver agent .*\n  --state-dir DIRECTORY\n.*\n$`, `^$`},
		{"unknown agent flag", []string{"agent", "--tset"}, 2, `^$`, `^receiver agent: unknown option --tset \(not a puppet agent option or Puppet setting\)\nRun 'receiver agent --help' for usage.\n$`},
		{"unknown subcommand", []string{"descrbe", "file"}, 2, `^$`, `^receiver: unknown subcommand "descrbe" \(known: agent, apply, describe, facts, filebucket, resource\); requests are read from stdin\n$`},
		{"unknown flag", []string{"--nop"}, 2, `^$`, `^receiver: flag provided but not defined: --nop\nRun 'receiver --help' for usage.\n$`},
		{"unknown describe flag", []string{"describe", "--lst"}, 2, `^$`, `^receiver describe: flag provided but not defined: --lst\nRun 'receiver describe --help' for usage.\n$`},
		{"unknown filebucket action", []string{"filebucket", "lsit"}, 2, `^$`, `(?s)^receiver filebucket: unknown action "lsit" \(known: list, get, restore\)\nusage: receiver filebucket `},
		{"filebucket without action", []string{"filebucket"}, 2, `^$`, `(?s)^receiver filebucket: missing action \(list, get or restore\)\nusage: receiver filebucket `},
		{"filebucket get without checksum", []string{"filebucket", "get"}, 2, `^$`, `(?s)^receiver filebucket get: wrong number of arguments\nusage: receiver filebucket `},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(receiverBin, tt.args...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			code := exitCode(t, cmd.Run())
			assert.Equal(t, tt.code, code)
			assert.Regexp(t, regexp.MustCompile(tt.stdout), out.String())
			assert.Regexp(t, regexp.MustCompile(tt.stderr), errb.String())
			assert.LessOrEqual(t, strings.Count(out.String()+errb.String(), "usage: "), 1, "usage printed once")
			assert.NotRegexp(t, `(?m)^\s+-[a-z]`, out.String()+errb.String(), "flags are spelled with two dashes")
		})
	}
}

// receiver apply --help spells -e CODE as its usage line and Puppet do
// (it listed --e CODE), the other flags with two dashes.
func TestApplyHelpExecute(t *testing.T) {
	out, err := exec.Command(receiverBin, "apply", "--help").Output()
	assert.NoError(t, err)
	assert.Contains(t, string(out), "       receiver apply [flags] -e CODE\n")
	assert.Contains(t, string(out), "\n  -e CODE\n      compile this manifest code with Puppet, then apply it\n")
	assert.NotContains(t, string(out), "--e ")
	assert.Contains(t, string(out), "\n  --noop\n")
}
