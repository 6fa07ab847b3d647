package mailalias_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	"github.com/pippet/pippet/applier/types/mailalias"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

func TestFindAndSearch(t *testing.T) {
	target := parsedfiletest.Target(t, "aliases", "# the aliases\npostmaster:    root\nroot: a\n"+
		"staff: :include: /srv/lists/staff\npipe: \"|/usr/bin/procmail -f x\", bob\nroot: nobody , 'x'\n")
	e := typetest.New(t, []*applier.Type{mailalias.Type})
	tgt := "{target: '" + target + "'}"

	// Of two lines of one name, the last is the resource, as in Puppet.
	res := e.Find("mailalias", "root", tgt)
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{
		{Name: "ensure", Value: "present"},
		{Name: "provider", Value: "aliases"},
		{Name: "recipient", Value: []any{"nobody", "x"}},
		{Name: "target", Value: target},
	}, res.State)
	before, err := os.ReadFile(target)
	require.NoError(t, err)
	back := e.Apply("mailalias", "root", res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(back), "%s\n%s", res.Params, typetest.Events(back))

	res = e.Find("mailalias", "staff", tgt)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "present"}, {Name: "file", Value: "/srv/lists/staff"},
		{Name: "provider", Value: "aliases"}, {Name: "target", Value: target}}, res.State)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("mailalias", "staff", res.Params)))

	res = e.Find("mailalias", "pipe", tgt)
	assert.Equal(t, []any{"|/usr/bin/procmail -f x", "bob"}, res.State[2].Value)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("mailalias", "pipe", res.Params)))

	res = e.Find("mailalias", "nobody-here", tgt)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "aliases"}}, res.State)

	after, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "find or a round trip changed the file")

	res = e.Search("mailalias", tgt)
	require.False(t, res.Failed, res.Exception)
	var titles []string
	for _, in := range res.Instances {
		titles = append(titles, in.Title)
	}
	assert.Equal(t, []string{"pipe", "postmaster", "root", "staff"}, titles, "sorted by title")
}

// TestRequests: the request path from create to removal, noop included;
// the file is replaced whole, its mode kept, comments kept byte for byte.
func TestRequests(t *testing.T) {
	target := parsedfiletest.Target(t, "aliases", "# keep  me\n\npostmaster:\troot\n")
	require.NoError(t, os.Chmod(target, 0o640))
	e := typetest.New(t, []*applier.Type{mailalias.Type})
	p := func(s string) string { return "{target: '" + target + "'" + s + "}" }

	res := e.Apply("mailalias", "root", p(", recipient: [nobody, 'Some One <x@y>'], noop: true"))
	assert.Equal(t, "unchanged", typetest.Summary(res))
	assert.Equal(t, "ensure: current_value 'absent', should be 'present' (noop) (noop)\n", typetest.Events(res))
	assert.Equal(t, "# keep  me\n\npostmaster:\troot\n", readFile(t, target), "noop wrote the file")

	res = e.Apply("mailalias", "root", p(", recipient: [nobody, 'Some One <x@y>']"))
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, "# keep  me\n\npostmaster: root\nroot: nobody,\"Some One <x@y>\"\n", parsedfiletest.Body(t, target))
	fi, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	res = e.Apply("mailalias", "root", p(", recipient: [nobody, 'Some One <x@y>']"))
	assert.Equal(t, "unchanged", typetest.Summary(res), typetest.Events(res))

	res = e.Apply("mailalias", "root", p(", file: /srv/list"))
	require.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, "file: defined 'file' as '/srv/list' (success)\n", typetest.Events(res))
	assert.Equal(t, "# keep  me\n\npostmaster: root\nroot: :include: /srv/list\n", parsedfiletest.Body(t, target))

	res = e.Apply("mailalias", "root", p(", ensure: absent"))
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	assert.Equal(t, "# keep  me\n\npostmaster: root\n", parsedfiletest.Body(t, target))
}

// TestBadInput: refused values name the resource and write nothing; an
// unreadable file fails the resource and stays as it was.
func TestBadInput(t *testing.T) {
	target := parsedfiletest.Target(t, "aliases", "root: a,\n\tb\n")
	e := typetest.New(t, []*applier.Type{mailalias.Type})
	for params, want := range map[string]string{
		"{recipient: [\"a\\nevil: b\"]}":           "Recipient cannot include a newline",
		"{file: relative}":                         "File paths must be fully qualified, not 'relative'",
		"{file: /x, recipient: a}":                 "You cannot specify both a recipient and a file",
		"{name: 'a:b', recipient: a}":              "Alias name cannot include a newline or a colon",
		"{target: '" + target + "', recipient: x}": "could not parse line 2 of " + target,
	} {
		res := e.Apply("mailalias", "root", params)
		assert.True(t, res.Failed || res.Error, "%s: %+v", params, res)
		assert.Contains(t, res.Exception, want, params)
		assert.Contains(t, res.Exception+res.Resource, "Mailalias[root]", params)
	}
	assert.Equal(t, "root: a,\n\tb\n", readFile(t, target))
}

// TestNewFileThroughSymlink: a link to the aliases file is followed and kept.
func TestNewFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real"), []byte("a: b\n"), 0o644))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "aliases")))
	e := typetest.New(t, []*applier.Type{mailalias.Type})
	res := e.Apply("mailalias", "root", "{target: '"+filepath.Join(dir, "aliases")+"', recipient: nobody}")
	assert.Equal(t, "changed", typetest.Summary(res), typetest.Events(res))
	fi, err := os.Lstat(filepath.Join(dir, "aliases"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type())
	assert.Equal(t, "a: b\nroot: nobody\n", parsedfiletest.Body(t, filepath.Join(dir, "real")))
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
