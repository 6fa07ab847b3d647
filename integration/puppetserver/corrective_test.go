package puppetserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentCorrectiveLineAsPuppets: a file tampered between two runs is
// set back by the second; `puppet agent -t` says so on the console with
// " (corrective)" at the end of the change line (its transaction store
// knew the content the run before left), and `receiver agent -t` prints
// the same lines.
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
		return withoutDiff(consoleLines(out, vardir, confd))
	}
	want := tampered(func(conf string) (int, string) { return runPuppetAgent(t, n, conf) }, "puppet")
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

// withoutDiff leaves out the diff -t prints (show_diff) around the change
// line: Puppet prints it as one notice before the line (`.../content: `,
// then the diff's lines unprefixed, twice for a sourced file), pippet
// each line as a notice after it; the comparison here is of the other
// lines.
func withoutDiff(lines []string) []string {
	var out []string
	for _, l := range lines {
		switch {
		case strings.HasSuffix(l, "/content: "),
			strings.HasPrefix(l, "Notice: --- "), strings.HasPrefix(l, "Notice: +++ "), strings.HasPrefix(l, "Notice: @@ "),
			strings.HasPrefix(l, "Notice: -"), strings.HasPrefix(l, "Notice: +"):
			continue
		}
		out = append(out, l)
	}
	return out
}
