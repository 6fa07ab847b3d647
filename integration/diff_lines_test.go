package integration

import (
	"bytes"
	"context"

	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// TestDiffLinesMatchPuppet: `receiver apply --show_diff` prints a content
// change's diff as `puppet apply --show_diff` does, run here on the same
// manifest over the same file: one notice `.../content: ` before the
// change line, then diff -u's lines unprefixed (the old side with the
// file's time, the new side with the time of the diff); in noop too,
// before the `(noop)` line, with the containers' lines naming
// Class[Main] as Puppet does. Only the times, the new side's name
// (Puppet's temporary file) and the compile time differ.
func TestDiffLinesMatchPuppet(t *testing.T) {
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet is not installed: no reference run")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "motd")
	manifest := fmt.Sprintf(`file { %q: content => "one\ntwo changed\nthree\nfour\n" }`, path)
	for _, noop := range []bool{false, true} {
		t.Run(fmt.Sprintf("noop=%v", noop), func(t *testing.T) {
			run := func(name string, argv ...string) string {
				require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\nfour\n"), 0o644))
				// --color=false: Puppet's lines without colour, as
				// pippet's always are (which takes the flag too).
				args := []string{"apply", "--show_diff", "--color=false"}
				if noop {
					args = append(args, "--noop")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, argv[0], append(append(argv[1:], args...), "-e", manifest)...)
				cmd.Dir = dir
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				require.NoError(t, cmd.Run(), "%s\n%s", name, out.String())
				return normalizeDiffRun(out.String())
			}
			want := run("puppet", "puppet")
			got := run("receiver", receiverBin)
			require.Contains(t, want, "\n@@ -1,4 +1,4 @@\n one\n-two\n+two changed\n three\n", "Puppet showed the diff")
			assert.Equal(t, want, got)
		})
	}
}

// normalizeDiffRun leaves out of an apply's output what differs between
// two runs: Facter's complaints about this machine, times and the
// compile time, and the name of the diff's new side.
func normalizeDiffRun(out string) string {
	seconds := regexp.MustCompile(`in [0-9.]+ seconds`)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Error: Facter:") || strings.HasPrefix(l, "Warning: Facter:") {
			continue
		}
		lines = append(lines, seconds.ReplaceAllString(testutil.DiffHeader(l), "in N seconds"))
	}
	return strings.Join(lines, "\n")
}

// TestPipeShowDiff: on the pipe, with --show_diff, a content change's
// answer carries the diff in its event's diff member (the message is
// Puppet's change line alone), and stderr has it as Puppet prints it;
// without --show_diff neither has it.
func TestPipeShowDiff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, show := range []bool{true, false} {
		require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))
		args := []string{"--log-level", "notice"}
		if show {
			args = append(args, "--show_diff")
		}
		out, stderr, code := run(t, dir, strings.NewReader(fileLine(path, `{content: "new\n"}`)), args...)
		require.Equal(t, 0, code, stderr)
		var answer struct {
			Events []struct{ Message, Diff string } `json:"events"`
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &answer), out)
		require.Len(t, answer.Events, 1, out)
		assert.Regexp(t, `^content changed '\{sha256\}[0-9a-f]{64}' to '\{sha256\}[0-9a-f]{64}'$`, answer.Events[0].Message)
		if !show {
			assert.Empty(t, answer.Events[0].Diff)
			assert.NotContains(t, stderr, "+new")
			continue
		}
		assert.Regexp(t, `^--- `+regexp.QuoteMeta(path)+`\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} [+-]\d{4}\n\+\+\+ `+regexp.QuoteMeta(path)+` \(new\)\t[^\n]+\n@@ -1 \+1 @@\n-old\n\+new$`, answer.Events[0].Diff)
		assert.Contains(t, stderr, "Notice: /File["+path+"]/content: \n--- "+path+"\t")
		assert.Contains(t, stderr, "\n@@ -1 +1 @@\n-old\n+new\nNotice: /File["+path+"]/content: content changed '{sha256}")
	}
}

// TestApplyColorFlag: receiver apply takes Puppet's --color values, so
// that a Puppet command line runs as it is, and refuses another value.
func TestApplyColorFlag(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.json")
	require.NoError(t, os.WriteFile(cat, []byte(`{"name":"n","version":1,"resources":[],"edges":[]}`), 0o644))
	for _, v := range []string{"true", "false", "ansi", "html"} {
		_, stderr, code := runApply(t, dir, "apply", "--state-dir", t.TempDir(), "--color="+v, cat)
		assert.Equal(t, 0, code, "--color=%s: %s", v, stderr)
		assert.NotContains(t, stderr, "\x1b[", "no colour")
	}
	_, stderr, code := runApply(t, dir, "apply", "--state-dir", t.TempDir(), "--color=pink", cat)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `receiver apply: invalid --color "pink" (true, false, ansi or html)`)
}
