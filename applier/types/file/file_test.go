package file_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one request in a sequence and what it must answer.
type step struct {
	path   string // relative to the case's root ("" is "a")
	params string // YAML; @ROOT@ is the root
	want   outcome
}

func TestSequences(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, root string)
		steps []step
		check func(t *testing.T, root string)
	}{
		{name: "create empty file", steps: []step{{"a", "{ensure: file}", changed}, {"a", "{ensure: file}", unchanged}},
			check: func(t *testing.T, root string) {
				assert.Equal(t, "", readFile(t, root+"/a"))
				assert.Equal(t, os.FileMode(0o644), modeOf(t, root+"/a"))
			}},
		{name: "content", steps: []step{
			{"a", "{ensure: file, content: hello}", changed},
			{"a", "{ensure: file, content: hello}", unchanged},
			{"a", "{content: bye}", changed},
		}, check: func(t *testing.T, root string) { assert.Equal(t, "bye", readFile(t, root+"/a")) }},
		// As Puppet: content is a string (or a list, whose first element is
		// the content); a YAML number or boolean is refused.
		{name: "content number refused", steps: []step{{"a", "{content: 42}", errored}, {"a", "{content: true}", errored}},
			check: func(t *testing.T, root string) { assert.NoFileExists(t, root+"/a") }},
		{name: "content list: the last, as Puppet writes it", steps: []step{{"a", "{content: [one, two]}", changed}, {"a", "{content: two}", unchanged}},
			check: func(t *testing.T, root string) { assert.Equal(t, "two", readFile(t, root+"/a")) }},
		{name: "multiline content", steps: []step{{"a", "ensure: file\ncontent: |\n  line1\n  line2\n", changed}},
			check: func(t *testing.T, root string) { assert.Equal(t, "line1\nline2\n", readFile(t, root+"/a")) }},
		{name: "mode", steps: []step{
			{"a", "{ensure: file, mode: '0600'}", changed},
			{"a", "{ensure: file, mode: '600'}", unchanged},
			{"a", "{ensure: file, mode: '0640'}", changed},
			{"a", "{ensure: file, mode: 'u+x,g-r'}", changed},
			{"a", "{ensure: file, mode: 'u+x,g-r'}", unchanged},
		}, check: func(t *testing.T, root string) { assert.Equal(t, os.FileMode(0o700), modeOf(t, root+"/a")) }},
		{name: "symbolic X on a directory", steps: []step{
			{"d", "{ensure: directory, mode: '0600'}", changed},
			{"d", "{ensure: directory, mode: 'a=rX'}", changed},
		}, check: func(t *testing.T, root string) { assert.Equal(t, os.ModeDir|0o555, modeOf(t, root+"/d")) }},
		{name: "numeric mode on a directory adds search", steps: []step{
			{"d", "{ensure: directory, mode: '0644'}", changed},
			{"d", "{ensure: directory, mode: '0644'}", unchanged},
		}, check: func(t *testing.T, root string) { assert.Equal(t, os.ModeDir|0o755, modeOf(t, root+"/d")) }},
		{name: "integer mode is an error", steps: []step{{"a", "{ensure: file, mode: 0644}", errored}},
			check: func(t *testing.T, root string) { assert.NoFileExists(t, root+"/a") }},
		{name: "bad symbolic mode is an error", steps: []step{{"a", "{ensure: file, mode: 'u*x'}", errored}}},
		{name: "symbolic X on a file", steps: []step{
			{"a", "{ensure: file, mode: '0600'}", changed},
			{"a", "{ensure: file, mode: 'a=rX'}", changed},
			{"a", "{ensure: file, mode: 'u+x'}", changed},
			{"a", "{ensure: file, mode: 'go+X'}", changed},
		}, check: func(t *testing.T, root string) { assert.Equal(t, os.FileMode(0o555), modeOf(t, root+"/a")) }},
		{name: "absent", steps: []step{
			{"a", "{ensure: file}", changed}, {"a", "{ensure: absent}", changed}, {"a", "{ensure: absent}", unchanged},
		}, check: func(t *testing.T, root string) { assert.NoFileExists(t, root+"/a") }},
		{name: "absent dir needs force", steps: []step{
			{"d", "{ensure: directory}", changed}, {"d/x", "{ensure: file}", changed},
			{"d", "{ensure: absent}", failed}, {"d", "{ensure: absent, force: true}", changed},
		}, check: func(t *testing.T, root string) { assert.NoDirExists(t, root+"/d") }},
		{name: "file over dir needs force", steps: []step{
			{"d", "{ensure: directory}", changed}, {"d", "{ensure: file}", failed},
			{"d", "{content: x}", failed}, {"d", "{ensure: file, force: true}", changed},
		}, check: func(t *testing.T, root string) { assert.True(t, modeOf(t, root+"/d").IsRegular()) }},
		{name: "missing parent fails", steps: []step{{"nodir/a", "{ensure: file}", failed}},
			check: func(t *testing.T, root string) { assert.NoDirExists(t, root+"/nodir") }},
		{name: "relative path is an error", steps: []step{{"", "{ensure: file}", errored}}},
		{name: "unknown parameter is an error", steps: []step{{"a", "{parameters: many}", errored}}},
		{name: "content and source conflict", steps: []step{{"a", "{content: x, source: /etc/hostname}", errored}}},
		{name: "content on a directory is an error", steps: []step{{"d", "{ensure: directory, content: x}", errored}}},
		{name: "content with checksum mtime is an error", steps: []step{{"a", "{content: x, checksum: mtime}", errored}}},
		{name: "bad checksum_value is an error", steps: []step{{"a", "{content: x, checksum_value: abc}", errored}}},
		{name: "replace false only creates", steps: []step{
			{"a", "{ensure: file, content: one}", changed},
			{"a", "{ensure: file, content: two, replace: false}", unchanged},
			{"b", "{ensure: file, content: two, replace: false}", changed},
		}, check: func(t *testing.T, root string) {
			assert.Equal(t, "one", readFile(t, root+"/a"))
			assert.Equal(t, "two", readFile(t, root+"/b"))
		}},
		{name: "replace as Psych reads it (on, off: booleans)", steps: []step{
			{"a", "{ensure: file, content: one}", changed},
			{"a", "{ensure: file, content: two, replace: off}", unchanged},
			{"a", "{ensure: link, target: /nowhere, replace: off}", unchanged},
			{"a", "{ensure: file, content: two, replace: on}", changed},
		}, check: func(t *testing.T, root string) { assert.Equal(t, "two", readFile(t, root+"/a")) }},
		{name: "replace false keeps a link, even dangling", steps: []step{
			{"l", "{ensure: link, target: /nowhere}", changed},
			{"l", "{ensure: file, content: x, replace: false}", unchanged},
			{"l", "{ensure: link, target: /elsewhere, replace: false}", unchanged},
			{"l", "{ensure: absent, replace: false}", unchanged},
		}, check: func(t *testing.T, root string) {
			got, err := os.Readlink(root + "/l")
			require.NoError(t, err)
			assert.Equal(t, "/nowhere", got)
		}},
		{name: "backup suffix", steps: []step{
			{"a", "{ensure: file, content: one, mode: '0640'}", changed},
			{"a", "{ensure: file, content: two, backup: .bak}", changed},
		}, check: func(t *testing.T, root string) {
			assert.Equal(t, "two", readFile(t, root+"/a"))
			assert.Equal(t, "one", readFile(t, root+"/a.bak"))
			assert.Equal(t, os.FileMode(0o640), modeOf(t, root+"/a.bak"))
		}},
		{name: "backup true is .puppet-bak", steps: []step{
			{"a", "{content: one}", changed}, {"a", "{ensure: absent, backup: true}", changed},
		}, check: func(t *testing.T, root string) { assert.Equal(t, "one", readFile(t, root+"/a.puppet-bak")) }},
		{name: "link create and retarget", steps: []step{
			{"l", "{ensure: link, target: @ROOT@/t}", changed},
			{"l", "{ensure: link, target: @ROOT@/t}", unchanged},
			{"l", "{ensure: link, target: @ROOT@/u}", changed},
			{"l", "{ensure: '@ROOT@/u'}", unchanged},
			{"l", "{target: rel}", changed},
		}, check: func(t *testing.T, root string) {
			got, err := os.Readlink(root + "/l")
			require.NoError(t, err)
			assert.Equal(t, "rel", got)
		}},
		{name: "link over file", steps: []step{
			{"l", "{content: x}", changed}, {"l", "{ensure: link, target: /etc}", changed},
		}, check: func(t *testing.T, root string) {
			got, _ := os.Readlink(root + "/l")
			assert.Equal(t, "/etc", got)
		}},
		{name: "link over dir needs force", steps: []step{
			{"d", "{ensure: directory}", changed}, {"d", "{ensure: link, target: /etc}", failed},
			{"d", "{ensure: link, target: /etc, force: true}", changed},
		}},
		{name: "directory over file", steps: []step{
			{"a", "{content: x}", changed}, {"a", "{ensure: directory}", changed},
		}, check: func(t *testing.T, root string) { assert.DirExists(t, root+"/a") }},
		{name: "present accepts anything", steps: []step{
			{"d", "{ensure: directory}", changed}, {"d", "{ensure: present}", unchanged},
			{"a", "{ensure: present}", changed}, {"a", "{ensure: present}", unchanged},
		}},
		{name: "trailing slash dropped", steps: []step{
			{"a/", "{ensure: file}", changed}, {"a", "{ensure: file}", unchanged},
		}},
		{name: "nothing to manage on a missing file", steps: []step{{"a", "{mode: '0600'}", unchanged}},
			check: func(t *testing.T, root string) { assert.NoFileExists(t, root+"/a") }},
		{name: "checksum md5lite ignores after 512 bytes", steps: []step{
			{"a", "content: " + strings.Repeat("x", 600), changed},
			{"a", "{checksum: md5lite, content: " + strings.Repeat("x", 512) + "y}", unchanged},
			{"a", "{checksum: md5, content: " + strings.Repeat("x", 512) + "y}", changed},
		}},
		{name: "checksum_value pins inline content", steps: []step{
			// sha256("hello")
			{"a", "{content: hello, checksum_value: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824}", changed},
			{"a", "{content: hello, checksum_value: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824}", unchanged},
			{"b", "{content: other, checksum_value: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824}", failed},
		}, check: func(t *testing.T, root string) { assert.NoFileExists(t, root+"/b") }},
		{name: "staging location", setup: func(t *testing.T, root string) { os.Mkdir(root+"/stage", 0o755) },
			steps: []step{{"a", "{content: x, staging_location: @ROOT@/stage}", changed}},
			check: func(t *testing.T, root string) { assert.Empty(t, listDir(t, root+"/stage")) }},
		{name: "validate_cmd", steps: []step{
			{"a", "{content: good}", changed},
			{"a", "{content: bad, validate_cmd: '/bin/grep -q good %'}", failed},
			{"a", "{content: goody, validate_cmd: '/bin/grep -q good %'}", changed},
			{"a", "{content: bad2, validate_cmd: '/bin/grep -q good @@', validate_replacement: '@@'}", failed},
			// A shell metacharacter runs the command through /bin/sh, as Puppet
			// (Ruby's Kernel.exec) does: without a shell the first grep would
			// read files named "|", "/bin/grep", "-qx" and "1", and fail.
			{"a", "{content: good3, validate_cmd: '/bin/grep -c good % | /bin/grep -qx 1'}", changed},
			{"a", "{content: bad3, validate_cmd: '/bin/grep -c good % | /bin/grep -qx 1'}", failed},
		}, check: func(t *testing.T, root string) {
			assert.Equal(t, "good3", readFile(t, root+"/a"))
			assert.Equal(t, []string{"a"}, listDir(t, root))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			e := newEngine(t)
			if tc.setup != nil {
				tc.setup(t, root)
			}
			for i, s := range tc.steps {
				p := filepath.Join(root, s.path)
				if s.path == "" {
					p = "relative/a"
				} else if strings.HasSuffix(s.path, "/") {
					p += "/"
				}
				res := apply(t, e, p, strings.ReplaceAll(s.params, "@ROOT@", root))
				assert.Equal(t, s.want, outcomeOf(res), "step %d %s: %+v", i+1, s.params, res)
			}
			if tc.check != nil {
				tc.check(t, root)
			}
		})
	}
}

func TestRecurseWithoutSourceOnAFile(t *testing.T) {
	root := t.TempDir()
	e := newEngine(t)
	for i, s := range []struct {
		params string
		want   outcome
	}{
		{"{content: x}", changed},
		{"{recurse: true, mode: '0600'}", changed},
		{"{recurse: true, mode: '0600'}", unchanged},
		{"{ensure: file, recurse: true}", unchanged},
	} {
		res := apply(t, e, root+"/a", s.params)
		assert.Equal(t, s.want, outcomeOf(res), "step %d %s: %+v", i+1, s.params, res)
	}
	assert.Equal(t, "x", readFile(t, root+"/a"))
	res := apply(t, e, root+"/b", "{ensure: file, recurse: true}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "", readFile(t, root+"/b"))
}

// A content change and a symbolic mode change in one request: the mode
// event names the mode the file had before this run, not the one the new
// content was already written with.
func TestModeEventNamesPreviousMode(t *testing.T) {
	e := newEngine(t)
	p := filepath.Join(t.TempDir(), "a")
	require.Equal(t, changed, outcomeOf(apply(t, e, p, "{ensure: file, content: hi, mode: '0640'}")))
	r := apply(t, e, p, "{ensure: file, content: bye, mode: 'u+x'}")
	require.Equal(t, changed, outcomeOf(r))
	var msg string
	for _, ev := range r.Events {
		if ev.Property == "mode" {
			msg = ev.Message
		}
	}
	require.Equal(t, "mode changed '0640' to '0740' (u+x)", msg)
	require.Equal(t, os.FileMode(0o740), modeOf(t, p).Perm())
}
