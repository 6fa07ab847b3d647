package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoDir is the directory examples/demo.ndjson writes under.
const demoDir = "/tmp/pippet-demo"

// checkDemo checks what the demo stream answered and left in dir.
func checkDemo(t *testing.T, dir, stdout string) {
	t.Helper()
	var answers []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a), sc.Text())
		if _, ok := a["ready"]; ok {
			continue
		}
		answers = append(answers, a)
	}
	// One answer per request line; the mistakes the stream makes on
	// purpose (an unknown type, bad YAML, a relative path, a missing
	// parent) and nothing else fail.
	require.Len(t, answers, 16, stdout)
	var failed []string
	for _, a := range answers {
		if a["failed"] == true {
			failed = append(failed, a["resource"].(string))
		}
	}
	assert.Len(t, failed, 4, "failed: %v", failed)
	assert.Contains(t, failed, "File["+dir+"/nodir/x]")
	assert.Equal(t, true, answers[0]["changed"], "the stream creates its directory: %v", answers[0])
	assert.Equal(t, float64(0), answers[0]["id"])

	b, err := os.ReadFile(filepath.Join(dir, "conf", "motd"))
	require.NoError(t, err)
	assert.Equal(t, "Welcome to pippet\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "conf-copy", "app.conf"))
	require.NoError(t, err)
	assert.Equal(t, "port = 9090\nworkers = 4\n", string(b))
	target, err := os.Readlink(filepath.Join(dir, "current"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "conf"), target)
	_, err = os.Lstat(filepath.Join(dir, "never"))
	assert.True(t, os.IsNotExist(err), "noop made nothing: %v", err)
}

// The demo stream piped by hand works on its own: its first request makes
// the directory every other one writes in. (The stream names
// /tmp/pippet-demo; the test moves it into a fresh path that does not
// exist yet, as `make demo` moves it.)
func TestDemoByHand(t *testing.T) {
	stream, err := os.ReadFile("../examples/demo.ndjson")
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "demo")
	require.NotContains(t, strings.ReplaceAll(string(stream), demoDir, ""), "/tmp/", "every path of the stream is under "+demoDir)
	in := strings.ReplaceAll(string(stream), demoDir, dir)

	stdout, stderr, code := run(t, t.TempDir(), strings.NewReader(in))
	require.Equal(t, 0, code, stderr)
	checkDemo(t, dir, stdout)

	// Again, over what the first run left: nothing fails that did not.
	stdout, stderr, code = run(t, t.TempDir(), strings.NewReader(in))
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 4, strings.Count(stdout, `"failed":true`), stdout)
}

// `make demo` writes in a directory of the user's own under $TMPDIR, so
// two users sharing /tmp each run it: as root, root then nobody (uid
// 65534) with one shared sticky TMPDIR; as another user, that user twice.
func TestMakeDemoPerUser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	// Everything reachable by both users: the Makefile, the stream, the
	// binary, and a /tmp-like shared directory.
	top, err := os.MkdirTemp("", "pippet-demo-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(top) })
	require.NoError(t, os.Chmod(top, 0o755))
	src := filepath.Join(top, "src")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "examples"), 0o755))
	copyFile(t, "../Makefile", filepath.Join(src, "Makefile"), 0o644)
	copyFile(t, "../examples/demo.ndjson", filepath.Join(src, "examples", "demo.ndjson"), 0o644)
	bin := filepath.Join(top, "receiver")
	copyFile(t, receiverBin, bin, 0o755)
	shared := filepath.Join(top, "tmp")
	require.NoError(t, os.Mkdir(shared, 0o755))
	require.NoError(t, os.Chmod(shared, 0o1777))

	type runAs struct {
		uid  int
		name string
	}
	me, err := user.Current()
	require.NoError(t, err)
	uid, _ := strconv.Atoi(me.Uid)
	users := []runAs{{uid, me.Username}, {uid, me.Username}}
	if uid == 0 {
		other, err := user.LookupId(strconv.Itoa(nobody))
		if err != nil {
			t.Skipf("no account with uid %d: %v", nobody, err)
		}
		users[1] = runAs{nobody, other.Username}
	} else {
		t.Log("not root: running the demo twice as the same user; the second user's run needs root")
	}
	for _, u := range users {
		// -o build: the binary is given, make builds nothing.
		cmd := exec.Command("make", "-s", "-C", src, "-o", "build", "demo", "RECEIVER="+bin)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + shared, "HOME=" + top}
		if u.uid != uid {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "make demo as %s: %s%s", u.name, out.String(), errb.String())
		dir := filepath.Join(shared, "pippet-demo-"+u.name)
		answers, _, _ := strings.Cut(out.String(), "--- "+dir+":")
		checkDemo(t, dir, answers)
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, uint32(u.uid), fi.Sys().(*syscall.Stat_t).Uid, "%s is %s's", dir, u.name)
	}
}
