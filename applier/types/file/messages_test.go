package file_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rubyTimeRE is a time as Puppet prints a time checksum's value.
const rubyTimeRE = `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}`

// Issue 26 item 16: checksum ctime and mtime label the content with their
// own kind, in Puppet's words and format:
// defined content as '{ctime}2026-11-26 14:24:26 +0000', and
// content changed '{ctime}...' to '{ctime}...'.
func TestTimeChecksumMessages(t *testing.T) {
	e := newEngine(t)
	for _, kind := range []string{"ctime", "mtime"} {
		root := t.TempDir()
		src, dst := filepath.Join(root, "src"), filepath.Join(root, "dst")
		require.NoError(t, os.WriteFile(src, []byte("one\n"), 0o644))
		params := "{source: " + src + ", checksum: " + kind + "}"
		res := apply(t, e, dst, params)
		require.Equal(t, changed, outcomeOf(res), "%+v", res)
		assert.Regexp(t, regexp.MustCompile(`^defined content as '\{`+kind+`\}`+rubyTimeRE+`'$`), res.Events[0].Message)
		res = apply(t, e, dst, params)
		assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)

		// The source changes after the copy: newer, so copied again (past
		// the kernel's coarse clock tick).
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, os.WriteFile(src, []byte("two\n"), 0o644))
		res = apply(t, e, dst, params)
		require.Equal(t, changed, outcomeOf(res), "%+v", res)
		assert.Regexp(t, regexp.MustCompile(`^content changed '\{`+kind+`\}`+rubyTimeRE+`' to '\{`+kind+`\}`+rubyTimeRE+`'$`), res.Events[0].Message)
		assert.Equal(t, "two\n", readFile(t, dst))
	}
}

// source_permissions: use names owners as Puppet does:
// owner changed 'root' to 'nobody'.
func TestSourcePermissionsNamesOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	if exec.Command("getent", "group", "nogroup").Run() != nil || exec.Command("getent", "passwd", "nobody").Run() != nil {
		t.Skip("no nobody:nogroup")
	}
	root := t.TempDir()
	src, dst := filepath.Join(root, "src"), filepath.Join(root, "dst")
	require.NoError(t, os.WriteFile(src, []byte("same\n"), 0o640))
	require.NoError(t, os.WriteFile(dst, []byte("same\n"), 0o640))
	out, err := exec.Command("chown", "nobody:nogroup", src).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.Chown(dst, 0, 0))
	e := newEngine(t)
	res := apply(t, e, dst, "{source: "+src+", source_permissions: use}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	var msgs []string
	for _, ev := range res.Events {
		msgs = append(msgs, ev.Message)
	}
	assert.Contains(t, msgs, "owner changed 'root' to 'nobody'")
	assert.Contains(t, msgs, "group changed 'root' to 'nogroup'")
	res = apply(t, e, dst, "{source: "+src+", source_permissions: use}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
}

// A content change carries a diff only when the request asks for it with
// show_diff: true (Puppet's show_diff setting is off by default: a
// secret's content never reaches a report unless asked for).
func TestDiffOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "secret")
	require.NoError(t, os.WriteFile(p, []byte("password=one\n"), 0o600))
	e, logs := newLoggingEngine(t)
	res := apply(t, e, p, "{content: \"password=two\\n\"}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.NotContains(t, fmt.Sprintf("%+v", res), "password")
	assert.NotContains(t, logs.String(), "password")
	res = apply(t, e, p, "{noop: true, content: \"password=three\\n\"}")
	assert.True(t, res.Noop)
	assert.NotContains(t, fmt.Sprintf("%+v", res), "password")
	assert.NotContains(t, logs.String(), "password")

	// Asked for: the diff, even of a file others cannot read.
	res = apply(t, e, p, "{show_diff: true, content: \"password=four\\n\"}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Contains(t, res.Events[0].Message, "-password=two\n+password=four")
}
