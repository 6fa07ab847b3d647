package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

func TestResourceSubcommand(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("10.0.0.1 a.example\n10.0.0.2 b.example b # bee\n"), 0o644))
	tgt := "target=" + hosts
	// The filebucket keeps the hosts file this test replaces: in the
	// test's own directory, never the machine's.
	bucket := filepath.Join(dir, "state")
	runSub := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		if len(args) > 1 && args[0] == "resource" {
			args = append([]string{"resource", "--state-dir", bucket}, args[1:]...)
		}
		return runSub(t, args...)
	}

	code, out, errs := runSub(t, "resource", "host", "b.example", tgt)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "host { 'b.example':\n  ensure       => 'present',\n  comment      => 'bee',\n  host_aliases => ['b'],\n"+
		"  ip           => '10.0.0.2',\n  provider     => 'parsed',\n  target       => '"+hosts+"',\n}\n", out)
	// Applying only the target changes nothing.
	before, _ := os.ReadFile(hosts)
	after, _ := os.ReadFile(hosts)
	assert.Equal(t, string(before), string(after))

	code, out, errs = runSub(t, "resource", "host", tgt, "--yaml")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "'a.example': {ensure: 'present', ip: '10.0.0.1', provider: 'parsed', target: '"+hosts+"'}\n"+
		"'b.example': {ensure: 'present', comment: 'bee', host_aliases: ['b'], ip: '10.0.0.2', provider: 'parsed', target: '"+hosts+"'}\n", out)

	// With attributes (the target here), --json prints the apply's answer,
	// then the find's.
	code, out, errs = runSub(t, "resource", "--json", "host", "a.example", tgt)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, out)
	var res protocol.Result
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &res))
	assert.False(t, res.Changed)
	assert.Nil(t, res.State)
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &res))
	assert.Equal(t, "Host[a.example]", res.Resource)
	assert.Equal(t, "{ensure: 'present', ip: '10.0.0.1', provider: 'parsed', target: '"+hosts+"'}", res.Params)

	// With attributes: applied, the change printed, then the new state.
	code, out, errs = runSub(t, "resource", "host", "a.example", "ip=10.0.0.9", tgt)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "Notice: /Host[a.example]/ip: ip changed '10.0.0.1' to '10.0.0.9'\n"+
		"host { 'a.example':\n  ensure   => 'present',\n  ip       => '10.0.0.9',\n  provider => 'parsed',\n  target   => '"+hosts+"',\n}\n", out)
	b, _ := os.ReadFile(hosts)
	assert.Contains(t, string(b), "10.0.0.9\ta.example")

	// A refused value: an error, exit 1.
	code, _, errs = runSub(t, "resource", "host", "a.example", "ip=x!", tgt)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `Invalid IP address "x!"`)

	code, _, errs = runSub(t, "resource", "starship")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "unknown resource type 'starship'")
	code, _, errs = runSub(t, "resource", "host", "a.example", "=x")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `"=x" is not ATTR=VALUE`)
	code, out, errs = runSub(t, "resource", "exec")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "cannot search Exec")
	assert.Empty(t, out, "a failed listing prints no resource")
	// A find that fails prints nothing on stdout either (it printed
	// "host { 'x':\n}"): the error is on stderr.
	code, out, errs = runSub(t, "resource", "host", "x.example", "target="+dir)
	assert.Equal(t, 1, code, errs)
	assert.Empty(t, out)
	assert.Contains(t, errs, "Error: ")

	entries, err := os.ReadDir(filepath.Join(bucket, "bucket"))
	require.NoError(t, err, "the replaced hosts file is kept in the test's own filebucket")
	assert.NotEmpty(t, entries)
}

func TestDescribeJSON(t *testing.T) {
	code, out, errs := runSub(t, "describe", "--json", "host", "notify")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2)
	var d struct {
		Name    string `json:"name"`
		Chosen  string `json:"chosen"`
		CanList bool   `json:"can_list"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &d))
	assert.Equal(t, "host", d.Name)
	assert.Equal(t, "parsed", d.Chosen)
	assert.True(t, d.CanList)
}

// Issue 26 item 3: what `resource --yaml file` prints of a FIFO, applied
// back through `resource file TITLE attr=value`, leaves it a FIFO.
func TestResourceFifoAppliedBack(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o640))
	code, out, errs := runSub(t, "resource", "--yaml", "file", fifo)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ensure: 'fifo'")
	code, out, errs = runSub(t, "resource", "--json", "file", fifo, "ensure=fifo", "mode=0640")
	require.Equal(t, 0, code, errs+out)
	var res protocol.Result
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &res))
	assert.False(t, res.Changed || res.Failed, out)
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO was replaced")
}
