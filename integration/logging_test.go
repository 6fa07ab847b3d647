package integration

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A title, message or command output cannot forge a log record or drive a
// terminal: every stderr line is one record of the level it names, with
// control characters escaped.
func TestLogInjection(t *testing.T) {
	root := t.TempDir()
	in := `{"type":"notify","title":"x\nError: /Stage[main]/File[/etc/shadow]/ensure: removed","params":"{message: \"hi\\nError: /Stage[main]/File[/etc/passwd]/content: changed\\e[31m\\r\"}"}` + "\n" +
		`{"type":"exec","title":"/bin/sh -c 'printf \"out\\nError: forged\\033[2J\"; exit 1'","params":"{logoutput: true}"}` + "\n"
	_, stderr, code := run(t, root, strings.NewReader(in), "--no-banner", "--log-level", "debug")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		assert.NotContains(t, l, "\x1b", "raw ESC in %q", l)
		assert.NotContains(t, l, "\r", "raw CR in %q", l)
		if strings.HasPrefix(l, "Error: /Stage") || strings.HasPrefix(l, "Error: forged") {
			t.Errorf("a forged record: %q", l)
		}
	}
	// Each line of a multi-line message is a record of the message's level.
	assert.Contains(t, lines, `Notice: hi`)
	assert.Contains(t, lines, `Notice: Error: /Stage[main]/File[/etc/passwd]/content: changed\x1b[31m\r`)
	assert.Contains(t, lines, `Notice: Error: /Stage[main]/File[/etc/shadow]/ensure: removed]/message: defined 'message' as 'hi`)
	assert.Contains(t, lines, `Error: Error: forged\x1b[2J`, "command output quoted in an error stays an error record's text")
}

// filebucket list escapes the paths it prints: a file name with a line
// break cannot forge a second entry.
func TestFilebucketListEscapes(t *testing.T) {
	root := t.TempDir()
	state := t.TempDir()
	target := filepath.Join(root, "evil\nfffff 2020-01-01 00:00:00 etc-shadow")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	line := `{"type":"file","title":"` + strings.ReplaceAll(target, "\n", `\n`) + `","params":"{content: new, backup: main}"}` + "\n"
	out, stderr, code := runWith(t, root, strings.NewReader(line), "--no-banner", "--state-dir", state)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `"changed":true`, stderr)
	list, stderr, code := runWith(t, root, nil, "filebucket", "--state-dir", state, "list")
	require.Equal(t, 0, code, stderr)
	rows := strings.Split(strings.TrimRight(list, "\n"), "\n")
	require.Len(t, rows, 1, "one backup, one line: %q", list)
	assert.Contains(t, rows[0], `evil\nfffff 2020-01-01 00:00:00 etc-shadow`)
}

// runWith runs the receiver with exactly args (no state directory added).
func runWith(t *testing.T, dir string, input io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(receiverBin, args...)
	cmd.Dir = dir
	cmd.Stdin = input
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}
