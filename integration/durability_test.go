package integration

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// flushRe matches the receiver's debug line for one round of directory fsyncs.
var flushRe = regexp.MustCompile(`(?m)^Debug: fsynced (\d+) director(?:y|ies) for (\d+) changes?$`)

// flushes returns each round's directory and change counts from stderr.
func flushes(t *testing.T, stderr string) (dirs, changes []int) {
	t.Helper()
	for _, m := range flushRe.FindAllStringSubmatch(stderr, -1) {
		d, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		c, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		dirs, changes = append(dirs, d), append(changes, c)
	}
	return dirs, changes
}

// A burst of creates in two directories: by default the directories are
// fsynced in groups, each change covered once before exit; with --sync
// once per change.
func TestDirectoryFsyncGroups(t *testing.T) {
	const n = 150
	cases := []struct {
		name string
		args []string
		sync bool
	}{
		{"deferred", nil, false},
		{"sync", []string{"--sync"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"a", "b"} {
				require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
			}
			var in strings.Builder
			for i := range n {
				fmt.Fprintf(&in, `{"type":"file","title":"%s/%s/f%d","params":"{ensure: file, content: c%d}"}`+"\n",
					root, []string{"a", "b"}[i%2], i, i)
			}
			out, stderr, code := run(t, root, strings.NewReader(in.String()), append([]string{"--log-level", "debug"}, c.args...)...)
			require.Equal(t, 0, code, stderr)
			_, as := testutil.DecodeAnswers(t, out)
			require.Len(t, as, n)
			for i := range n {
				p := filepath.Join(root, []string{"a", "b"}[i%2], fmt.Sprintf("f%d", i))
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("c%d", i), string(b))
			}
			dirs, changes := flushes(t, stderr)
			total := 0
			for i := range changes {
				total += changes[i]
				if c.sync {
					assert.Equal(t, 1, dirs[i])
					assert.Equal(t, 1, changes[i])
				} else {
					assert.LessOrEqual(t, dirs[i], 2)
					assert.LessOrEqual(t, changes[i], 64)
				}
			}
			assert.Equal(t, n, total, "every change is covered before exit")
			if c.sync {
				assert.Len(t, changes, n, "one fsync per change")
			} else {
				assert.Less(t, len(changes), n/2, "fsyncs are grouped")
			}
		})
	}
}

// SIGTERM while a file is being written with the next line already read:
// the file is finished, answered, and its directory fsynced before exit.
func TestDirectoryFsyncBeforeExitOnSIGTERM(t *testing.T) {
	root := t.TempDir()
	started := filepath.Join(root, "started")
	target := filepath.Join(root, "dir", "f")
	require.NoError(t, os.Mkdir(filepath.Dir(target), 0o755))
	cmd, stdin, stdout, stderr := startReceiver(t, "--no-banner", "--log-level", "debug")
	slow := fmt.Sprintf(`{"type":"file","title":"%s","params":{"content":"x","validate_cmd":"/bin/sh -c 'touch %s; sleep 0.5' %%"}}`, target, started)
	_, err := io.WriteString(stdin, slow+"\n"+`{"type":"notify","title":"never","params":"{}"}`+"\n")
	require.NoError(t, err)
	waitFor(t, started)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	out, err := io.ReadAll(stdout)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	_, as := testutil.DecodeAnswers(t, string(out))
	require.Len(t, as, 1, "%s", out)
	assert.True(t, as[0].Changed)
	assert.FileExists(t, target)
	log := stderr.String()
	caught := strings.Index(log, "Caught TERM")
	require.GreaterOrEqual(t, caught, 0, log)
	dirs, changes := flushes(t, log[caught:])
	assert.Equal(t, []int{1}, dirs, "the file's directory is fsynced after the signal: %s", log)
	assert.Equal(t, []int{1}, changes)
}
