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

// With Puppet's show_diff setting on, a file others cannot read is
// diffed only when the request gives show_diff: true itself (pippet's
// rule: the setting alone never copies a private file's lines into logs
// and reports).
func TestDiffOnlyWhenAsked(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "secret")
	require.NoError(t, os.WriteFile(p, []byte("password=one\n"), 0o600))
	e, logs := newDiffingEngine(t)
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
	assert.Contains(t, logs.String(), `-password=two\n+password=four`) // the text handler writes \n
	assert.NotContains(t, res.Events[0].Message, "password", "the diff is a record of its own, as Puppet's, not in the event")
}

// TestShowDiffAsPuppet: a diff is shown as Puppet 7 shows it, where
// `puppet apply --show_diff -e "file { '/tmp/f': content => 'NEW' }"`
// over a file holding OLD logs the unified diff and, without
// --show_diff, only the checksums, whatever the resource's show_diff
// (true by default, as Puppet's); show_diff => false silences it with
// the setting on.
func TestShowDiffAsPuppet(t *testing.T) {
	cases := []struct {
		name    string
		setting bool
		params  string
		diff    bool
	}{
		{name: "setting off (puppet apply's default)", params: `{content: "NEW\n"}`},
		{name: "setting off, show_diff true", params: `{content: "NEW\n", show_diff: true}`},
		{name: "setting on", setting: true, params: `{content: "NEW\n"}`, diff: true},
		{name: "setting on, show_diff false", setting: true, params: `{content: "NEW\n", show_diff: false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(p, []byte("OLD\n"), 0o644))
			e, logs := newLoggingEngine(t)
			e.Env().Options.ShowDiff = tc.setting
			res := apply(t, e, p, tc.params)
			require.Equal(t, changed, outcomeOf(res), "%+v", res)
			out := fmt.Sprintf("%+v", res) + logs.String()
			if tc.diff {
				assert.Contains(t, logs.String(), `-OLD\n+NEW`) // the text handler writes \n
				assert.NotContains(t, res.Events[0].Message, "OLD", "the diff is a record of its own, as Puppet's, not in the event")
			} else {
				assert.NotContains(t, out, "OLD")
				assert.NotContains(t, out, "+NEW")
			}
		})
	}
}

// TestSensitiveContentNeverShown: a content named in
// sensitive_parameters (a catalog's Sensitive value) shows neither a
// diff nor a checksum, as Puppet 7's `puppet apply --show_diff -e "file
// { '/tmp/f': content => Sensitive(\"NEWSECRET\n\") }"` over OLD logs
// "content: [diff redacted]" then "content: changed [redacted] to
// [redacted]"; a file created with it says "ensure: changed [redacted]
// to [redacted]"; noop says "current_value [redacted], should be
// [redacted] (noop)".
func TestSensitiveContentNeverShown(t *testing.T) {
	secret := "NEWSECRET"
	sum := sha256hex(secret + "\n")
	oldSum := sha256hex("OLD\n")
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("OLD\n"), 0o644))
	e, logs := newDiffingEngine(t)
	check := func(res any) {
		t.Helper()
		out := fmt.Sprintf("%+v", res) + logs.String()
		for _, leak := range []string{secret, sum, sum[:16], oldSum, "OLD"} {
			assert.NotContains(t, out, leak)
		}
	}

	res := apply(t, e, p, `{content: "NEWSECRET\n", sensitive_parameters: [content], noop: true}`)
	require.True(t, res.Noop)
	require.Len(t, res.Events, 1)
	assert.Equal(t, "current_value [redacted], should be [redacted] (noop)", res.Events[0].Message)
	assert.Contains(t, logs.String(), "/File["+p+"]/content: [diff redacted]")
	check(res)

	logs.Reset()
	res = apply(t, e, p, `{content: "NEWSECRET\n", sensitive_parameters: [content]}`)
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "changed [redacted] to [redacted]", res.Events[0].Message)
	assert.Equal(t, "[redacted]", res.Events[0].Previous)
	assert.Equal(t, "[redacted]", res.Events[0].Desired)
	assert.Contains(t, logs.String(), "/File["+p+"]/content: [diff redacted]")
	check(res)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, secret+"\n", string(got), "the secret is written")

	logs.Reset()
	q := filepath.Join(dir, "new")
	res = apply(t, e, q, `{content: "NEWSECRET\n", sensitive_parameters: content}`)
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "ensure", res.Events[0].Property)
	assert.Equal(t, "changed [redacted] to [redacted]", res.Events[0].Message)
	check(res)
}
