package puppetserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// TestAgentCorrectiveLineAsPuppets: a file tampered between two runs is
// set back by the second; `puppet agent -t` says so on the console with
// " (corrective)" at the end of the change line (its transaction store
// knew the content the run before left), and `receiver agent -t` prints
// the same lines, the content's diff among them (-t sets show_diff) as
// Puppet prints it: one notice before the change line, diff -u's lines
// unprefixed.
func TestAgentCorrectiveLineAsPuppets(t *testing.T) {
	s := need(t)
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet is not installed: no reference run")
	}
	n := newNode(t, s, "acore-corrective")
	confd := filepath.Join(n.root, "conf.d")
	motd := filepath.Join(n.root, "motd")

	// tampered runs the agent twice, motd tampered between, and returns
	// the second run's console lines.
	tampered := func(run func(conf string) (int, string), name string) []string {
		require.NoError(t, os.RemoveAll(n.root))
		vardir := filepath.Join(n.dir, name+"-var")
		conf := n.puppetConf(t, s, name, vardir)
		code, out := run(conf)
		require.Equal(t, 2, code, "%s: the first run changes the node\n%s", name, out)
		require.NoError(t, os.WriteFile(motd, []byte("tampered\n"), 0o644))
		code, out = run(conf)
		require.Equal(t, 2, code, "%s: the second run sets motd back\n%s", name, out)
		assert.Equal(t, "Welcome to an acore node\n", read(t, motd), name)
		return diffTimes(consoleLinesOf(out, vardir, confd, true))
	}
	want := withoutEmptyDiff(tampered(func(conf string) (int, string) { return runPuppetAgent(t, n, conf) }, "puppet"))
	got := tampered(func(conf string) (int, string) {
		code, out, errs := runReceiverAgent(t, n, conf, "-t")
		assert.Empty(t, errs, "nothing on stderr")
		return code, out
	}, "pippet")

	corrective := func(lines []string) (n int) {
		for _, l := range lines {
			if strings.Contains(l, "/content: content changed '{sha256}") && strings.HasSuffix(l, " (corrective)") {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, corrective(want), "Puppet's line of the content set back ends with (corrective)\n%s", strings.Join(want, "\n"))
	assert.Equal(t, 1, corrective(got), "ours too\n%s", strings.Join(got, "\n"))
	assert.Equal(t, want, got, "the tampered run's console (want Puppet's)")
}

// withoutEmptyDiff leaves out of Puppet's lines the second diff notice
// it prints for a file from a puppet:// source, whose diff is empty
// (`.../content: ` and nothing after it); pippet prints the diff once
// (docs/compatibility.md).
func withoutEmptyDiff(lines []string) []string {
	var out []string
	for i, l := range lines {
		if strings.HasSuffix(l, "/content: ") && (i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "--- ")) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// diffTimes leaves out of a diff's header lines what differs from run to
// run: the times (diff -u's, after a tab) and the new side's name
// (Puppet's temporary file, pippet's "PATH (new)").
func diffTimes(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = testutil.DiffHeader(l)
	}
	return out
}
