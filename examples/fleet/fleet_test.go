package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

func TestReadResources(t *testing.T) {
	rs, err := ReadResources(strings.NewReader("# comment\n\n{\"type\":\"notify\",\"title\":\"a\"}\n{\"type\":\"file\",\"title\":\"/x\",\"params\":\"{ensure: file}\"}\n"))
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, "{}", rs[0].Params)
	_, err = ReadResources(strings.NewReader("{\"type\":\"notify\"}\n"))
	assert.EqualError(t, err, `line 1: invalid request: missing or empty "title" for type notify`, "the receiver's own message")
	_, err = ParseHost("web1")
	assert.Error(t, err)
	h, err := ParseHost("web1=ssh web1 receiver")
	require.NoError(t, err)
	assert.Equal(t, Host{Name: "web1", Command: []string{"ssh", "web1", "receiver"}}, h)
}

// Two hosts reached over real ssh (a sshd on a loopback port) and one that
// is down, driven at once: each host gets every resource, and the host
// that is down does not hold back the others.
func TestFleetOverSSH(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the receiver and runs sshd")
	}
	s := testutil.StartSSHD(t)
	bin := testutil.Receiver(t)

	// The two "hosts" are one machine: both converge the same file, which
	// only the first to get there changes.
	root := t.TempDir()
	ndjson := `{"type":"notify","title":"hello"}
{"type":"file","title":"` + root + `/shared","params":"{ensure: file, content: fleet}"}
{"type":"exec","title":"/bin/false","params":"{}"}
`
	rs, err := ReadResources(strings.NewReader(ndjson))
	require.NoError(t, err)
	hosts := []Host{
		{Name: "web1", Command: s.Command(bin, "--state-dir", filepath.Join(root, "s1"))},
		{Name: "web2", Command: s.Command(bin, "--state-dir", filepath.Join(root, "s2"))},
		{Name: "down", Command: []string{"ssh", "-p", "1", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "root@127.0.0.1", bin}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sums := Apply(ctx, hosts, rs, 30*time.Second, false, slog.New(slog.DiscardHandler))
	require.Len(t, sums, 3)
	assert.Equal(t, "down", sums[0].Host)
	assert.Error(t, sums[0].Err, "an unreachable host is reported, not waited for")
	changed := 0
	for _, s := range sums[1:] {
		require.NoError(t, s.Err, s.Host)
		assert.Equal(t, 1, s.Failed, "%s: the exec fails on every host", s.Host)
		assert.Equal(t, 2, s.Changed+s.Unchanged, s.Host)
		changed += s.Changed
		assert.Contains(t, s.String(), s.Host+": 3 resources in ")
	}
	assert.Equal(t, 3, changed, "each notify, and the shared file once")
	b, err := os.ReadFile(filepath.Join(root, "shared"))
	require.NoError(t, err)
	assert.Equal(t, "fleet", string(b))
}

// TestFleetNoop: resources that would change are counted so, whether the
// fleet runs with -noop or a host's receiver runs with --noop (it said
// "3 unchanged" for three resources that would change), and nothing
// changes.
func TestFleetNoop(t *testing.T) {
	bin := testutil.Receiver(t)
	root := t.TempDir()
	ndjson := `{"type":"notify","title":"hello"}
{"type":"file","title":"` + root + `/a","params":"{ensure: file, content: fleet}"}
{"type":"file","title":"` + root + `/b","params":"{ensure: absent}"}
`
	rs, err := ReadResources(strings.NewReader(ndjson))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name string
		host Host
		noop bool
	}{
		{"fleet -noop", Host{Name: "web1", Command: []string{bin, "--state-dir", filepath.Join(root, "s1")}}, true},
		{"host --noop", Host{Name: "web2", Command: []string{bin, "--noop", "--state-dir", filepath.Join(root, "s2")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sums := Apply(ctx, []Host{tc.host}, rs, 30*time.Second, tc.noop, slog.New(slog.DiscardHandler))
			require.Len(t, sums, 1)
			s := sums[0]
			require.NoError(t, s.Err)
			assert.Equal(t, 0, s.Changed)
			assert.Equal(t, 2, s.WouldChange, "the notify and the missing file would change")
			assert.Equal(t, 1, s.Unchanged, "an absent file that is absent")
			assert.Contains(t, s.String(), "0 changed, 2 would change (noop), 1 unchanged, 0 failed")
			assert.NoFileExists(t, filepath.Join(root, "a"))
		})
	}
}

// TestReadResourcesForms: every request form the receiver takes is read
// (protocol's decoder, not a second parser): the legacy TYPE TITLE {yaml}
// line, params as a YAML string, params as a JSON object; a line the
// receiver refuses is refused with its line number.
func TestReadResourcesForms(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		typ, title string
		values     map[string]any
		refresh    bool
		err        string
	}{
		{name: "legacy", line: "file /tmp/x {ensure: file, mode: '0644'}", typ: "file", title: "/tmp/x", values: map[string]any{"ensure": "file", "mode": "0644"}},
		{name: "legacy without params", line: "notify hello", err: "line 1: invalid request: legacy form TYPE TITLE YAML has no YAML after the title"},
		{name: "params as a string", line: `{"type":"file","title":"/x","params":"{ensure: file}"}`, typ: "file", title: "/x", values: map[string]any{"ensure": "file"}},
		{name: "params as an object", line: `{"type":"file","title":"/x","params":{"ensure":"file","mode":"0600"}}`, typ: "file", title: "/x", values: map[string]any{"ensure": "file", "mode": "0600"}},
		{name: "refresh", line: `{"type":"exec","title":"/bin/true","refresh":true}`, typ: "exec", title: "/bin/true", refresh: true},
		{name: "a read verb", line: `{"op":"find","type":"host","title":"localhost"}`, err: `line 1: Host[localhost]: op "find" is not an apply; fleet applies resources`},
		{name: "bad JSON", line: `{"type":"file",`, err: "line 1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := ReadResources(strings.NewReader(tc.line + "\n"))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, rs, 1)
			assert.Equal(t, tc.typ, rs[0].Type)
			assert.Equal(t, tc.title, rs[0].Title)
			if tc.values == nil {
				assert.Equal(t, "{}", rs[0].Params, "no params: the empty mapping")
				assert.Nil(t, rs[0].Values)
			} else {
				assert.Equal(t, "", rs[0].Params)
				assert.Equal(t, tc.values, rs[0].Values)
			}
			assert.Equal(t, tc.refresh, rs[0].Refresh)
		})
	}
}
