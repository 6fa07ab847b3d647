package integration

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol"
)

// TestLegacyController drives the binary the way existing controllers do:
// read up to 80 bytes after starting it and throw them away, then write
// one JSON line and decode one JSON answer per resource, never closing
// stdin until the end.
func TestLegacyController(t *testing.T) {
	cmd := exec.Command(receiverBin, "--state-dir", t.TempDir())
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	first := make([]byte, 80)
	n, err := stdout.Read(first)
	require.NoError(t, err)
	assert.Equal(t, protocol.Banner, string(first[:n]), "the banner is the whole first read")

	r := bufio.NewReader(stdout)
	for _, title := range []string{"one", "two", "three"} {
		_, err := io.WriteString(stdin, `{"type":"notify","title":"`+title+`","params":"{message: hi}"}`+"\n")
		require.NoError(t, err)
		done := make(chan struct{})
		var line string
		go func() { line, err = r.ReadString('\n'); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("no answer while stdin is still open")
		}
		require.NoError(t, err)
		var a testutil.Answer
		require.NoError(t, json.Unmarshal([]byte(line), &a), "answer %q", line)
		require.NotNil(t, a.Resource)
		assert.Equal(t, "Notify["+title+"]", *a.Resource)
		assert.False(t, a.Error || a.Failed, "%+v", a)
	}
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
}

// The same with a Python controller of the usual shape: os.read(fd, 80),
// then write a line, readline, json.loads.
func TestPythonController(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	script := `
import json, os, subprocess, sys
p = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
os.read(p.stdout.fileno(), 80)
for t in ("a", "b"):
    p.stdin.write(json.dumps({"type": "notify", "title": t, "params": "{message: hi}"}).encode() + b"\n")
    p.stdin.flush()
    ans = json.loads(p.stdout.readline())
    print(ans["resource"], ans["error"])
p.stdin.close()
sys.exit(p.wait())
`
	cmd := exec.Command(py, "-c", script, receiverBin)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "Notify[a] "))
	assert.True(t, strings.HasPrefix(lines[1], "Notify[b] "))
	assert.Equal(t, []string{"Notify[a] False", "Notify[b] False"}, lines)
}
