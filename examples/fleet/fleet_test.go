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
	assert.EqualError(t, err, "line 1: type and title are required")
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
