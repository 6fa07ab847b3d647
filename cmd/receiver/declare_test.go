package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/testutil"
)

// A controller's declaration of its run over the pipe (docs/protocol.md,
// Run context), end to end through realMain: the requests that follow see
// the declared resources as a catalog's resources see each other.

// receive runs the receiver over in and returns its answers and stderr.
func receive(t *testing.T, dir string, in string, args ...string) ([]testutil.Answer, string) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--no-banner", "--state-dir", filepath.Join(dir, "state")}, args...)
	code := realMain(context.Background(), args, strings.NewReader(in), &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	_, as := testutil.DecodeAnswers(t, out.String())
	return as, errb.String()
}

// declareLine is a declaration of resources, each {type, title, params}.
func declareLine(t *testing.T, id int, resources ...map[string]any) string {
	t.Helper()
	if resources == nil {
		resources = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"op": "declare", "resources": resources, "id": id})
	require.NoError(t, err)
	return string(b) + "\n"
}

func requestLine(t *testing.T, typ, title string, params map[string]any, id int) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "title": title, "params": params, "id": id})
	require.NoError(t, err)
	return string(b) + "\n"
}

func res(typ, title string, params map[string]any) map[string]any {
	m := map[string]any{"type": typ, "title": title}
	if params != nil {
		m["params"] = params
	}
	return m
}

// A purge leaves alone what the declared run manages, and only while it
// is declared.
func TestDeclarePurgeKeepsManaged(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "mods-enabled")
	require.NoError(t, os.Mkdir(tree, 0o755))
	for _, n := range []string{"kept.conf", "stray.conf", "declared-dir"} {
		require.NoError(t, os.WriteFile(filepath.Join(tree, n), []byte(n), 0o644))
	}
	purge := requestLine(t, "file", tree, map[string]any{"ensure": "directory", "recurse": true, "purge": true, "force": true}, 2)
	in := declareLine(t, 1,
		res("file", tree, map[string]any{"ensure": "directory", "recurse": true, "purge": true}),
		// Managed by path with a trailing slash, and by a title that is
		// not its path.
		res("file", filepath.Join(tree, "kept.conf")+"/", nil),
		res("file", "the dir", map[string]any{"path": filepath.Join(tree, "declared-dir")}),
	) + purge
	as, stderr := receive(t, dir, in)
	require.Len(t, as, 2, stderr)
	assert.False(t, as[0].Failed, "%+v", as[0])
	assert.Nil(t, as[0].Resource, "a declaration names no resource")
	assert.Equal(t, "1", string(as[0].ID))
	assert.True(t, as[1].Changed, stderr)
	assert.FileExists(t, filepath.Join(tree, "kept.conf"))
	assert.FileExists(t, filepath.Join(tree, "declared-dir"))
	assert.NoFileExists(t, filepath.Join(tree, "stray.conf"))

	// Sent again, line for line (the memo's own lines), nothing changes;
	// once the declaration is cleared, the purge takes everything.
	in = declareLine(t, 1, res("file", filepath.Join(tree, "kept.conf"), nil), res("file", filepath.Join(tree, "declared-dir"), nil)) +
		purge + purge + purge + declareLine(t, 3) + purge
	as, stderr = receive(t, dir, in)
	require.Len(t, as, 6, stderr)
	for i, want := range []bool{false, false, false, false, false, true} {
		assert.False(t, as[i].Failed, "%d: %+v", i, as[i])
		assert.Equal(t, want, as[i].Changed, "answer %d", i)
	}
	left, err := os.ReadDir(tree)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// A concat_file over the pipe is assembled from the fragments declared;
// the same concat_file line sent again after a new declaration answers
// from the new fragments, not from what was kept of the line (the memo);
// a declaration cleared leaves it none.
func TestDeclareConcat(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	frag := func(title, content, order string) map[string]any {
		return res("concat_fragment", title, map[string]any{"target": target, "content": content, "order": order})
	}
	file := res("concat_file", target, map[string]any{"mode": "0640"})
	concat := requestLine(t, "concat_file", target, map[string]any{"mode": "0640"}, 2)
	fragLine := requestLine(t, "concat_fragment", "b", map[string]any{"target": target, "content": "second\n", "order": "20"}, 4)

	// The fragments in any order; params as YAML in a string too.
	in := declareLine(t, 1, frag("b", "second\n", "20"), file,
		map[string]any{"type": "concat_fragment", "title": "a", "params": "{target: " + target + `, content: "first\n", order: '10'}`}) +
		concat + concat + concat + fragLine
	as, stderr := receive(t, dir, in)
	require.Len(t, as, 5, stderr)
	for _, a := range as {
		require.False(t, a.Failed, "%+v %s", a, stderr)
	}
	assert.Equal(t, []bool{false, true, false, false, false}, changes(as))
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "first\nsecond\n", string(got))
	assert.NotContains(t, stderr, "not found in the catalog", "the fragment's concat_file is declared")

	// A changed fragment re-assembles the file, though the concat_file's
	// line is the same (answered from the memo by now).
	in = declareLine(t, 1, frag("b", "second\n", "20"), file, frag("a", "first\n", "10")) + concat + concat + concat +
		declareLine(t, 5, frag("b", "SECOND\n", "20"), file, frag("a", "first\n", "10"), frag("c", "third\n", "30")) + concat + concat
	as, stderr = receive(t, dir, in)
	require.Len(t, as, 7, stderr)
	assert.Equal(t, []bool{false, false, false, false, false, true, false}, changes(as), stderr)
	got, err = os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "first\nSECOND\nthird\n", string(got))

	// Cleared: a concat_file alone has no fragments (and its fragment
	// warns that no concat_file is in the run only when there is a run).
	as, stderr = receive(t, dir, declareLine(t, 1)+concat+fragLine)
	require.Len(t, as, 3, stderr)
	assert.True(t, as[1].Changed)
	got, err = os.ReadFile(target)
	require.NoError(t, err)
	assert.Empty(t, string(got))

	// A fragment declared without its concat_file warns, as the module.
	_, stderr = receive(t, dir, declareLine(t, 1, frag("b", "x", "1"))+fragLine, "--log-level", "warning")
	assert.Contains(t, stderr, "Concat_fragment[b]: Target Concat_file with path or title '"+target+"' not found in the catalog")
}

func changes(as []testutil.Answer) []bool {
	var out []bool
	for _, a := range as {
		out = append(out, a.Changed)
	}
	return out
}

// A declaration refused gets an error answer naming the problem (and the
// resource, when one is to blame), leaves the run as it was, and the
// receiver goes on.
func TestDeclareRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	frag := res("concat_fragment", "a", map[string]any{"target": target, "content": "kept\n"})
	concat := requestLine(t, "concat_file", target, map[string]any{}, 9)
	in := declareLine(t, 1, frag) +
		declareLine(t, 2, res("file", "/x", nil), res("File", "/x/", nil)) +
		`{"op":"declare","resources":[{"type":"concat_fragment","title":"b","params":"{target: [}"}],"id":3}` + "\n" +
		`{"op":"declare","resources":[{"type":"file"}],"id":4}` + "\n" +
		`{"op":"declare","type":"file","title":"x","resources":[]}` + "\n" +
		`{"op":"declare","resources":{}}` + "\n" +
		`{"type":"file","title":"x","params":{},"resources":[]}` + "\n" +
		"declare x {}\n" +
		concat
	as, stderr := receive(t, dir, in)
	require.Len(t, as, 9, stderr)
	assert.False(t, as[0].Failed)
	for i, c := range []struct{ resource, msg string }{
		{"File[/x/]", `request line 2: invalid declaration: File[/x/]: declared twice: "/x" names File[/x] too; the run is unchanged`},
		{"Concat_fragment[b]", "request line 3: invalid declaration: resource 1 (Concat_fragment[b]): params: line 1 column 11: invalid YAML"},
		{"", `declared resource 1 (type file) has no "title"`},
		{"", `a declaration takes no "type", "title"`},
		{"", `"resources" must be a list`},
		{"", `"resources" belongs to a declaration ("op":"declare") only`},
		{"", `unknown resource type 'declare'`},
	} {
		a := as[i+1]
		assert.True(t, a.Error && a.Failed, "%d: %+v", i, a)
		if c.resource == "" {
			if a.Resource != nil && !strings.HasPrefix(c.msg, "unknown") {
				t.Errorf("%d: names %s", i, *a.Resource)
			}
		} else if assert.NotNil(t, a.Resource, i) {
			assert.Equal(t, c.resource, *a.Resource)
		}
		require.NotNil(t, a.Exception)
		assert.Contains(t, *a.Exception, c.msg)
	}
	assert.Equal(t, "2", string(as[1].ID))
	assert.Equal(t, "3", string(as[2].ID), "the id after a bad resource is echoed")
	last := as[8]
	assert.False(t, last.Failed, "%+v", last)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "kept\n", string(got), "the run is the first declaration's")
}

// A declaration is not a resource: the summary and --detailed-exitcodes
// count the requests only.
func TestDeclareNotCounted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	var out, errb bytes.Buffer
	in := declareLine(t, 1, res("file", p, nil)) + requestLine(t, "file", p, map[string]any{"ensure": "file"}, 2)
	code := realMain(context.Background(), []string{"--no-banner", "--detailed-exitcodes", "--log-level", "notice", "--state-dir", filepath.Join(dir, "state")},
		strings.NewReader(in), &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	assert.Contains(t, errb.String(), "Applied 1 resource in")
}

// A delegated concat_file (here by --delegate) goes to Puppet with the
// declared fragments, as under `receiver apply`, whether the requests
// are sent one by one or ahead (the loop pipelines delegated requests
// when lines wait); a delegated concat_fragment is answered unchanged,
// applied with its concat_file.
func TestDeclareDelegatedConcat(t *testing.T) {
	if _, ok := delegate.FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent); .ci/run installs it")
	}
	if _, err := os.Stat("/usr/share/puppet/modules/concat"); err != nil {
		t.Skip("puppet-module-puppetlabs-concat not installed")
	}
	t.Setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	frags := []map[string]any{
		res("concat_fragment", "b", map[string]any{"target": target, "content": "second\n", "order": "20"}),
		res("concat_fragment", "a", map[string]any{"target": target, "content": "first\n", "order": "10"}),
	}
	in := declareLine(t, 1, append(frags, res("concat_file", target, nil))...) +
		requestLine(t, "concat_fragment", "b", frags[0]["params"].(map[string]any), 2) +
		requestLine(t, "concat_file", target, map[string]any{"mode": "0640"}, 3) +
		requestLine(t, "concat_fragment", "a", frags[1]["params"].(map[string]any), 4)
	args := []string{"--fallback", "puppet", "--delegate", "concat_file,concat_fragment", "--modulepath", "/usr/share/puppet/modules"}
	as, stderr := receive(t, dir, in, args...)
	require.Len(t, as, 4, stderr)
	for _, a := range as {
		require.False(t, a.Failed, "%+v\n%s", a, stderr)
	}
	assert.Equal(t, []bool{false, false, true, false}, changes(as), stderr)
	got, err := os.ReadFile(target)
	require.NoError(t, err, stderr)
	assert.Equal(t, "first\nsecond\n", string(got))
	fi, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	// Converged; then without the declaration Puppet's concat_file has
	// no fragments.
	as, stderr = receive(t, dir, in+declareLine(t, 5)+requestLine(t, "concat_file", target, map[string]any{"mode": "0640"}, 6), args...)
	require.Len(t, as, 6, stderr)
	assert.Equal(t, []bool{false, false, false, false, false, true}, changes(as), stderr)
	got, err = os.ReadFile(target)
	require.NoError(t, err)
	assert.Empty(t, string(got))
}
