package augeas_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/augeas"
	"github.com/pippet/pippet/applier/typetest"
)

const mainCF = "# postfix\nbiff = no\nmyorigin = old.example\n"

func write(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "main.cf")
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// noAugnew fails when a dry run left a .augnew (or a temporary) file.
func noAugnew(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range es {
		assert.NotContains(t, e.Name(), ".aug", "left in %s", dir)
		assert.False(t, strings.HasPrefix(e.Name(), "main.cf."), "left in %s: %s", dir, e.Name())
	}
}

// showDiff turns Puppet's show_diff setting on (the agent's -t).
func showDiff(env *applier.Env) { env.Options.ShowDiff = true }

func params(p, changes string) string {
	return "{incl: '" + p + "', lens: Postfix_Main.lns, changes: \"" + changes + "\""
}

// TestChangeThenUnchanged: a change replaces the file by rename (a new
// inode; the mode kept), its event carries Puppet's message and the diff;
// the next request is unchanged and writes nothing.
func TestChangeThenUnchanged(t *testing.T) {
	p := write(t, mainCF, 0o640)
	var before syscall.Stat_t
	require.NoError(t, syscall.Stat(p, &before))
	e := typetest.New(t, []*applier.Type{augeas.Type}, showDiff)
	res := e.Apply("augeas", "origin", params(p, "set myorigin 'new.example'")+"}")
	require.Equal(t, "changed", typetest.Summary(res), res.Exception)
	require.Len(t, res.Events, 1)
	ev := res.Events[0]
	assert.Equal(t, "returns", ev.Property)
	assert.Equal(t, "need_to_run", ev.Previous)
	assert.True(t, strings.HasPrefix(ev.Message, "executed successfully\n--- "+p), ev.Message)
	assert.Contains(t, ev.Message, "\n-myorigin = old.example\n+myorigin = new.example")
	assert.Equal(t, "# postfix\nbiff = no\nmyorigin = new.example\n", read(t, p))
	var after syscall.Stat_t
	require.NoError(t, syscall.Stat(p, &after))
	assert.NotEqual(t, before.Ino, after.Ino, "replaced by rename")
	assert.Equal(t, uint32(0o640), after.Mode&0o7777)
	noAugnew(t, filepath.Dir(p))

	res = e.Apply("augeas", "origin", params(p, "set myorigin 'new.example'")+"}")
	assert.Equal(t, "unchanged", typetest.Summary(res), typetest.Events(res))
	var again syscall.Stat_t
	require.NoError(t, syscall.Stat(p, &again))
	assert.Equal(t, after.Ino, again.Ino)
	assert.Equal(t, after.Mtim, again.Mtim, "an unchanged request wrote the file")
	noAugnew(t, filepath.Dir(p))
}

// TestNoop: the change is reported, the diff logged, nothing written.
func TestNoop(t *testing.T) {
	p := write(t, mainCF, 0o644)
	e := typetest.New(t, []*applier.Type{augeas.Type}, showDiff)
	res := e.Apply("augeas", "biff", params(p, "set biff yes")+", noop: true}")
	assert.Equal(t, "unchanged", typetest.Summary(res))
	assert.Equal(t, "returns: current_value 'need_to_run', should be '0' (noop) (noop)\n", typetest.Events(res))
	assert.Equal(t, mainCF, read(t, p))
	assert.Contains(t, e.Log(), "+biff = yes")
	noAugnew(t, filepath.Dir(p))
}

// TestShowDiffFalse: no diff in the event or the log.
func TestShowDiffFalse(t *testing.T) {
	p := write(t, mainCF, 0o644)
	e := typetest.New(t, []*applier.Type{augeas.Type})
	res := e.Apply("augeas", "biff", params(p, "set biff secret")+", show_diff: false}")
	assert.Equal(t, "returns: executed successfully (success)\n", typetest.Events(res))
	assert.NotContains(t, e.Log(), "secret")
}

// TestWithoutIncl: without lens and incl, every lens is loaded and only
// the transforms that can hold the context are kept (Puppet's rule), here
// under a root.
func TestWithoutIncl(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	hosts := filepath.Join(root, "etc", "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 localhost\n"), 0o644))
	e := typetest.New(t, []*applier.Type{augeas.Type})
	req := "{root: '" + root + "', context: /files/etc/hosts, changes: ['set 01/ipaddr 10.1.1.1', 'set 01/canonical db'], onlyif: \"match *[canonical = 'db'] size == 0\"}"
	res := e.Apply("augeas", "db", req)
	require.Equal(t, "changed", typetest.Summary(res), res.Exception)
	assert.Equal(t, "127.0.0.1 localhost\n10.1.1.1\tdb\n", read(t, hosts))
	res = e.Apply("augeas", "db", req)
	assert.Equal(t, "unchanged", typetest.Summary(res), typetest.Events(res))
	noAugnew(t, filepath.Join(root, "etc"))
}

// TestBadInput: values augtool cannot carry, unknown commands and a lens
// without incl fail the resource with its name, and leave the file alone.
func TestBadInput(t *testing.T) {
	p := write(t, mainCF, 0o644)
	e := typetest.New(t, []*applier.Type{augeas.Type})
	for req, want := range map[string]string{
		params(p, "set biff 'a\\x01rm /files'") + "}":                    "control character",
		params(p, "set biff 'a]'") + "}":                                 "a ']' with no '[' before it",
		params(p, "launch biff") + "}":                                   "Unknown command launch",
		params(p, "ins x sideways biff") + "}":                           "Invalid value 'sideways' for where param",
		"{incl: '" + p + "', changes: 'set biff yes'}":                   "You must specify both the lens and incl parameters, or neither.",
		params(p, "set biff yes") + ", onlyif: 'get biff ~ x'}":          "invalid comparator for command get",
		"{incl: '" + p + "', lens: NoSuch.lns, changes: 'set biff yes'}": "",
	} {
		res := e.Apply("augeas", "bad", req)
		assert.True(t, res.Failed || res.Error, "%s: %+v", req, res)
		assert.Contains(t, res.Exception, "Augeas[bad]", req)
		assert.Contains(t, res.Exception, want, req)
	}
	assert.Equal(t, mainCF, read(t, p))
	noAugnew(t, filepath.Dir(p))
}

// TestFind: a read runs nothing.
func TestFind(t *testing.T) {
	p := write(t, mainCF, 0o644)
	e := typetest.New(t, []*applier.Type{augeas.Type})
	res := e.Find("augeas", "x", params(p, "set biff yes")+"}")
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, mainCF, read(t, p))
}

// TestDiffAsPuppetsSetting: the diff of a change is logged only with
// Puppet's show_diff setting on (off by default, as for puppet apply),
// and never for Sensitive changes (sensitive_parameters), whose diff
// would show the secret: "returns: [diff redacted]".
func TestDiffAsPuppetsSetting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []func(*applier.Env)
		extra   string
		diff    bool
		redacts bool
	}{
		{name: "setting off"},
		{name: "setting on", opts: []func(*applier.Env){showDiff}, diff: true},
		{name: "sensitive changes", opts: []func(*applier.Env){showDiff}, extra: ", sensitive_parameters: [changes]", redacts: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, mainCF, 0o644)
			e := typetest.New(t, []*applier.Type{augeas.Type}, tc.opts...)
			res := e.Apply("augeas", "biff", params(p, "set biff topsecret")+tc.extra+", noop: true}")
			require.Len(t, res.Events, 1)
			res = e.Apply("augeas", "biff", params(p, "set biff topsecret")+tc.extra+"}")
			require.Equal(t, "changed", typetest.Summary(res), res.Exception)
			out := typetest.Events(res) + e.Log()
			if tc.diff {
				assert.Contains(t, out, "+biff = topsecret")
			} else {
				assert.NotContains(t, out, "topsecret")
			}
			if tc.redacts {
				assert.Contains(t, e.Log(), "/Augeas[biff]/returns: [diff redacted]")
			}
			assert.Equal(t, "# postfix\nbiff = topsecret\nmyorigin = old.example\n", read(t, p))
		})
	}
}
