package integration

// The file type attacked as an adversary with a shell on the host would
// (issue 15): each test reproduces one defect against the built receiver
// and keeps it found. Every test is bounded in time.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// fileLine is a request line for a file resource with YAML params.
func fileLine(path, params string) string {
	b, _ := json.Marshal(map[string]string{"type": "file", "title": path, "params": params})
	return string(b) + "\n"
}

// Owner and group ids outside the uid/gid range (32 bits, and
// 4294967295, which chown(2) takes as "unchanged") are error answers,
// never a truncated id nor a silent no-op; so is an exec's user or group.
func TestHostileIDsOutOfRange(t *testing.T) {
	dir := t.TempDir()
	var in strings.Builder
	bad := []string{"4294967296", "4294967295", "99999999999", "18446744073709551616"}
	for i, id := range bad {
		in.WriteString(fileLine(filepath.Join(dir, fmt.Sprintf("o%d", i)), "{ensure: file, owner: '"+id+"'}"))
		in.WriteString(fileLine(filepath.Join(dir, fmt.Sprintf("g%d", i)), "{ensure: file, group: '"+id+"'}"))
	}
	marker := filepath.Join(dir, "ran")
	for _, attr := range []string{"user", "group"} {
		b, _ := json.Marshal(map[string]string{"type": "exec", "title": "touch " + attr,
			"params": "{command: '/usr/bin/touch " + marker + "', " + attr + ": '4294967295'}"})
		in.WriteString(string(b) + "\n")
	}
	out, _, _ := run(t, dir, strings.NewReader(in.String()))
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 2*len(bad)+2)
	for _, a := range as {
		assert.True(t, a.Error, "%s: an id out of range is an error answer: %s", *a.Resource, str(a.Exception))
		assert.False(t, a.Changed, *a.Resource)
	}
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "nothing created, nothing run")
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// A file whose name is as long as a name may be (255 bytes) can be
// created and then changed: its temp names stay within NAME_MAX, with or
// without a validate_cmd (which needs the temp file by a path).
func TestHostileLongNames(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("n", 255))
	link := filepath.Join(dir, strings.Repeat("l", 255))
	in := fileLine(long, "{ensure: file, content: one}") +
		fileLine(long, "{ensure: file, content: two}") +
		fileLine(long, "{ensure: file, content: three, validate_cmd: '/bin/grep -q three %'}") +
		fileLine(long, "{ensure: file, content: four, backup: .b}") + // the backup's name is too long: fails
		fileLine(link, "{ensure: link, target: /a}") +
		fileLine(link, "{ensure: link, target: /b}")
	out, _, _ := run(t, dir, strings.NewReader(in))
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 6)
	for i, want := range []string{"changed", "changed", "changed", "failed", "changed", "changed"} {
		got := "changed"
		if as[i].Failed {
			got = "failed"
		}
		assert.Equal(t, want, got, "step %d: %s", i+1, str(as[i].Exception))
	}
	b, err := os.ReadFile(long)
	require.NoError(t, err)
	assert.Equal(t, "three", string(b))
	target, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "/b", target)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 2, "no temp file left")
}

// An HTTP source that offers no checksum: the event names the digest of
// what was installed, not an empty one.
func TestHostileHTTPSourceWithoutChecksum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("plain body\n"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, stderr, _ := run(t, dir, strings.NewReader(fileLine(filepath.Join(dir, "f"), "{source: '"+srv.URL+"/f'}")), "--log-level", "notice")
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 1)
	require.True(t, as[0].Changed, str(as[0].Exception))
	assert.NotContains(t, stderr, "'{sha256}'")
	assert.Contains(t, stderr, "defined content as '{sha256}"+sha256Hex("plain body\n")+"'")
}

// HTTP source bodies are bounded: by the Content-Length the server
// promised (no byte past it is read), by --max-source-size (a promise
// past it is refused before anything is read, an endless body when it
// passes it); a gzip-encoded body is decoded (never stored compressed)
// and other encodings are refused.
func TestHostileHTTPSourceBodies(t *testing.T) {
	const content = "the real content\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/liar": // promises 10 bytes and sends more
			w.Header().Set("Content-Length", "10")
			w.WriteHeader(200)
			if r.Method == http.MethodGet {
				w.(http.Flusher).Flush()
				conn, buf, _ := w.(http.Hijacker).Hijack()
				buf.WriteString(strings.Repeat("x", 1<<20))
				buf.Flush()
				conn.Close()
			}
		case "/huge": // promises more than the bound
			w.Header().Set("Content-Length", strconv.Itoa(2<<20))
			w.WriteHeader(200)
			if r.Method == http.MethodGet {
				w.Write([]byte(strings.Repeat("z", 2<<20)))
			}
		case "/endless": // no length, no end (until the limit)
			if r.Method == http.MethodGet {
				chunk := []byte(strings.Repeat("y", 64<<10))
				for i := 0; i < 1<<14; i++ { // at most 1 GiB, far past the test's limit
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			if r.Method == http.MethodGet {
				w.Write(gzipped(t, content))
			}
		case "/br":
			w.Header().Set("Content-Encoding", "br")
			if r.Method == http.MethodGet {
				w.Write([]byte("\x0b\x02\x80not brotli"))
			}
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	var in strings.Builder
	for _, name := range []string{"liar", "huge", "endless", "gzip", "br"} {
		in.WriteString(fileLine(filepath.Join(dir, name), "{source: '"+srv.URL+"/"+name+"'}"))
	}
	out, _, _ := run(t, dir, strings.NewReader(in.String()), "--max-source-size", "1048576")
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 5)
	assert.True(t, as[0].Changed, str(as[0].Exception))
	assert.True(t, as[1].Failed, "a body promising more than --max-source-size fails")
	assert.Contains(t, str(as[1].Exception), "max-source-size")
	assert.True(t, as[2].Failed, "a body past --max-source-size fails")
	assert.Contains(t, str(as[2].Exception), "max-source-size")
	assert.True(t, as[3].Changed, str(as[3].Exception))
	assert.True(t, as[4].Failed, "an encoding that cannot be decoded is refused")
	assert.Contains(t, str(as[4].Exception), "Content-Encoding")
	b, err := os.ReadFile(filepath.Join(dir, "liar"))
	require.NoError(t, err)
	assert.Equal(t, "xxxxxxxxxx", string(b), "no byte past the promised length")
	b, err = os.ReadFile(filepath.Join(dir, "gzip"))
	require.NoError(t, err)
	assert.Equal(t, content, string(b), "stored decoded")
	for _, name := range []string{"huge", "endless", "br"} {
		assert.NoFileExists(t, filepath.Join(dir, name))
	}
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 2, "no temp file left")
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func gzipped(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// A receiver killed (SIGKILL) while a validate_cmd checks new content
// leaves no temp file: the temp stays unnamed (O_TMPFILE) until the
// final rename, the validator reading it through /proc.
func TestHostileKillLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	scripts := t.TempDir()
	mark := filepath.Join(scripts, "validating")
	validator := filepath.Join(scripts, "v.sh")
	require.NoError(t, os.WriteFile(validator, []byte("#!/bin/sh\ngrep -q new \"$1\" && echo $$ > "+mark+".tmp && mv "+mark+".tmp "+mark+" && exec sleep 60\n"), 0o755))
	cmd, stdin, _, _ := startReceiver(t)
	t.Cleanup(func() {
		if b, err := os.ReadFile(mark); err == nil {
			var pid int
			fmt.Sscan(string(b), &pid)
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	_, err := io.WriteString(stdin, fileLine(target, "{content: new, validate_cmd: '"+validator+" %'}"))
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the validator never ran")
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"f"}, names, "no temp file left by the killed receiver")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "old", string(b))
}

// Temps a killed writer left (on a file system without O_TMPFILE, or in
// the instant between naming a temp and renaming it) are removed when a
// later receiver writes in that directory: only those whose writer is
// dead, never a live writer's, never a file that merely looks like one.
func TestHostileStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	dead := exec.Command("/bin/true")
	require.NoError(t, dead.Run())
	deadPID := dead.Process.Pid
	long := strings.Repeat("x", 200)
	stale := []string{
		fmt.Sprintf(".f.pippet-%d-0", deadPID),
		fmt.Sprintf(".%s.pippet-%d-3", long, deadPID),
	}
	kept := []string{
		fmt.Sprintf(".f.pippet-%d-0", os.Getpid()), // a live writer (this test)
		fmt.Sprintf("f.pippet-%d-0", deadPID),      // not hidden: not ours
		fmt.Sprintf(".f.pippet-%d-x", deadPID),     // not our pattern
	}
	old := time.Now().Add(-time.Hour)
	for _, n := range append(append([]string{}, stale...), kept...) {
		p := filepath.Join(dir, n)
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o600))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	out, _, _ := run(t, dir, strings.NewReader(fileLine(target, "{content: new}")))
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 1)
	require.True(t, as[0].Changed, str(as[0].Exception))
	for _, n := range stale {
		assert.NoFileExists(t, filepath.Join(dir, n))
	}
	for _, n := range kept {
		assert.FileExists(t, filepath.Join(dir, n))
	}
}

// A user who owns the managed directory swaps the file for a symlink to
// a secret (and back) while the receiver reads it: no read for the
// comparison, the diff or the backup follows the link, so the secret
// never reaches a backup, an answer or the log.
func TestHostileSymlinkSwapDuringRead(t *testing.T) {
	const secret = "TOPSECRET-shadow-line\n"
	const newContent = "new content\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Checksum-Sha256", sha256Hex(newContent))
		w.Write([]byte(newContent))
	}))
	defer srv.Close()
	private := t.TempDir()
	secretPath := filepath.Join(private, "shadow")
	require.NoError(t, os.WriteFile(secretPath, []byte(secret), 0o600))
	dir, state := t.TempDir(), t.TempDir()
	target := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the attacker
		defer close(done)
		link, reg := filepath.Join(dir, "swap-link"), filepath.Join(dir, "swap-reg")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(link)
			os.Symlink(secretPath, link)
			os.Rename(link, target)
			os.WriteFile(reg, []byte("old\n"), 0o644)
			os.Rename(reg, target)
		}
	}()
	var in strings.Builder
	for i := 0; i < 150; i++ {
		backup := "main"
		if i%2 == 1 {
			backup = ".bak"
		}
		in.WriteString(fileLine(target, "{source: '"+srv.URL+"/f', backup: "+backup+", show_diff: true}"))
		in.WriteString(fileLine(target, "{content: \"other\\n\", backup: "+backup+", show_diff: true}"))
		in.WriteString(fileLine(target, "{content: \"old\\n\", noop: true}"))
	}
	out, stderr, _ := run(t, dir, strings.NewReader(in.String()), "--state-dir", state, "--log-level", "debug", "--show_diff")
	close(stop)
	<-done
	_, as := testutil.DecodeAnswers(t, out)
	require.Len(t, as, 450)
	assert.False(t, strings.Contains(out, "TOPSECRET"), "an answer quotes the secret")
	assert.False(t, strings.Contains(stderr, "TOPSECRET"), "the log quotes the secret")
	leaks := 0
	filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "TOPSECRET") {
				leaks++
			}
		}
		return nil
	})
	assert.Zero(t, leaks, "backups in the filebucket holding the secret")
	if b, err := os.ReadFile(target + ".bak"); err == nil {
		assert.NotContains(t, string(b), "TOPSECRET")
	}
	b, _ := os.ReadFile(secretPath)
	assert.Equal(t, secret, string(b), "the secret itself is untouched")
}

// A recursive copy never writes through a symlinked subdirectory of the
// destination: with replace: false the link is kept and what the source
// has below it is not created (through it or anywhere); with replace:
// true the link is replaced by a real directory.
func TestHostileRecursiveCopyThroughSymlinkedDir(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(fmt.Sprintf("replace %v", replace), func(t *testing.T) {
			root := t.TempDir()
			src, dest, elsewhere := filepath.Join(root, "src"), filepath.Join(root, "dest"), filepath.Join(root, "elsewhere")
			require.NoError(t, os.MkdirAll(filepath.Join(src, "sub", "deeper"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "f"), []byte("from source"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "deeper", "g"), []byte("deeper"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(src, "top"), []byte("top"), 0o644))
			require.NoError(t, os.MkdirAll(dest, 0o755))
			require.NoError(t, os.Mkdir(elsewhere, 0o700))
			require.NoError(t, os.Symlink(elsewhere, filepath.Join(dest, "sub")))
			params := fmt.Sprintf("{ensure: directory, recurse: true, source: %s, replace: %v, mode: '0640'}", src, replace)
			out, _, _ := run(t, root, strings.NewReader(fileLine(dest, params)+fileLine(dest, params)))
			_, as := testutil.DecodeAnswers(t, out)
			require.Len(t, as, 2)
			for _, a := range as {
				assert.False(t, a.Failed || a.Error, str(a.Exception))
			}
			assert.False(t, as[1].Changed, "the second run finds nothing to do")
			entries, _ := os.ReadDir(elsewhere)
			assert.Empty(t, entries, "nothing written through the link")
			fi, err := os.Stat(elsewhere)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the link's target is not chmodded")
			b, err := os.ReadFile(filepath.Join(dest, "top"))
			require.NoError(t, err)
			assert.Equal(t, "top", string(b))
			fi, err = os.Lstat(filepath.Join(dest, "sub"))
			require.NoError(t, err)
			if replace {
				assert.True(t, fi.IsDir(), "the link was replaced by a directory")
				b, err := os.ReadFile(filepath.Join(dest, "sub", "deeper", "g"))
				require.NoError(t, err)
				assert.Equal(t, "deeper", string(b))
			} else {
				assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "replace: false keeps the link")
			}
		})
	}
}
