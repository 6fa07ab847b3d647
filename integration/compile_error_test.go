package integration

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// puppetLines are the lines of Puppet's output a test compares: Facter's
// complaints about this machine (/proc/1/environ unreadable in a
// container) left out, the colour codes off.
func puppetLines(out string) []string {
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" || strings.HasPrefix(l, "Error: Facter: ") {
			continue
		}
		keep = append(keep, l)
	}
	return keep
}

// TestApplyCompileErrorIsPuppets: a manifest that does not compile (a
// syntax error, a misspelt attribute) prints Puppet's error line, as
// `puppet apply` prints it, and exits as it exits (1); no Ruby backtrace
// unless --debug asks. It printed some 35 lines of Ruby stack, then
// "Puppet could not compile the catalog: exit status 1: ...".
func TestApplyCompileErrorIsPuppets(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs Puppet")
	}
	needPuppet(t)
	dir := t.TempDir()
	for _, tc := range []struct{ name, code, want string }{
		{"syntax error", `file { "` + dir + `/x": content => "x" `, "Error: Could not parse for environment production: Syntax error at end of input"},
		{"misspelt attribute", `file { "` + dir + `/x": contnet => "x" }`, "Error: no parameter named 'contnet'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
			var pout bytes.Buffer
			puppet := exec.Command("puppet", "apply", "--color=false", "-e", tc.code)
			puppet.Env, puppet.Stdout, puppet.Stderr = env, &pout, &pout
			pcode := exitCode(t, puppet.Run())

			var rout, rerr bytes.Buffer
			rec := exec.Command(receiverBin, "apply", "--state-dir", t.TempDir(), "-e", tc.code)
			rec.Env, rec.Stdout, rec.Stderr = env, &rout, &rerr
			code := exitCode(t, rec.Run())

			assert.Equal(t, 1, pcode, "Puppet's exit code")
			assert.Equal(t, pcode, code)
			assert.Empty(t, rout.String())
			want := puppetLines(pout.String())
			assert.Len(t, want, 1, "Puppet prints one line: %q", want)
			assert.Contains(t, strings.Join(want, "\n"), tc.want)
			assert.Equal(t, want, puppetLines(rerr.String()))
			assert.NoFileExists(t, dir+"/x")

			// --debug shows where, as Puppet's --trace does.
			rerr.Reset()
			rec = exec.Command(receiverBin, "apply", "--debug", "--state-dir", t.TempDir(), "-e", tc.code)
			rec.Env, rec.Stderr = env, &rerr
			assert.Equal(t, 1, exitCode(t, rec.Run()))
			assert.Contains(t, rerr.String(), "/puppet/", "a backtrace with --debug")
		})
	}
}
