package file_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSymlinkSafety(t *testing.T) {
	cases := []struct {
		name   string
		params string
		want   outcome
		check  func(t *testing.T, root string)
	}{
		{"content replaces the link", "{content: new}", changed, func(t *testing.T, root string) {
			assert.True(t, modeOf(t, root+"/l").IsRegular())
			assert.Equal(t, "new", readFile(t, root+"/l"))
		}},
		{"ensure file replaces the link", "{ensure: file}", changed, func(t *testing.T, root string) {
			assert.True(t, modeOf(t, root+"/l").IsRegular())
		}},
		{"absent removes the link only", "{ensure: absent}", changed, func(t *testing.T, root string) {
			assert.NoFileExists(t, root+"/l")
		}},
		{"mode of a link is not managed", "{mode: '0600'}", unchanged, nil},
		{"present accepts the link", "{ensure: present, content: new}", unchanged, nil},
		{"follow writes through", "{content: new, links: follow}", changed, func(t *testing.T, root string) {
			assert.Equal(t, os.ModeSymlink, modeOf(t, root+"/l")&os.ModeSymlink)
			assert.Equal(t, "new", readFile(t, root+"/victim"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			victim := filepath.Join(root, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
			require.NoError(t, os.Symlink(victim, filepath.Join(root, "l")))
			res := apply(t, newEngine(t), root+"/l", tc.params)
			assert.Equal(t, tc.want, outcomeOf(res), "%+v", res)
			if !strings.Contains(tc.params, "follow") {
				assert.Equal(t, "precious", readFile(t, victim))
				assert.Equal(t, os.FileMode(0o644), modeOf(t, victim))
			}
			if tc.check != nil {
				tc.check(t, root)
			}
		})
	}
}

func TestOwnershipAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ensureGroup(t, "pippettest")
	ensureUser(t, "pippettest", "pippettest")
	root := t.TempDir()
	e := newEngine(t)
	p := filepath.Join(root, "a")
	steps := []struct {
		params string
		want   outcome
		uid    string // name expected after the step
	}{
		{"{content: one, owner: pippettest, group: pippettest, mode: '4750'}", changed, "pippettest"},
		{"{content: one, owner: pippettest, group: pippettest, mode: '4750'}", unchanged, "pippettest"},
		{"{content: two}", changed, "pippettest"}, // a rewrite keeps owner and mode
		{"{owner: root, group: root}", changed, "root"},
		{"{owner: 0, group: 0}", unchanged, "root"},
		{"{owner: nosuchuser-pippet}", failed, "root"},
		{"{group: nosuchgroup-pippet}", failed, "root"},
	}
	for i, s := range steps {
		res := apply(t, e, p, s.params)
		assert.Equal(t, s.want, outcomeOf(res), "step %d %s: %+v", i+1, s.params, res)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		assert.Equal(t, s.uid, uidName(t, int(st.Uid)), "step %d", i+1)
		if i == 2 {
			assert.Equal(t, os.FileMode(0o750)|os.ModeSetuid, fi.Mode(), "mode kept with setuid after rewrite")
			assert.Equal(t, "two", readFile(t, p))
		}
	}
	// A link's owner is the link's, not its target's.
	require.NoError(t, os.Symlink(p, root+"/l"))
	res := apply(t, e, root+"/l", "{owner: pippettest}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	var lst syscall.Stat_t
	require.NoError(t, syscall.Lstat(root+"/l", &lst))
	assert.Equal(t, "pippettest", uidName(t, int(lst.Uid)))
	assert.Equal(t, "root", uidName(t, ownerOf(t, p)))
	// A directory created with owner and mode.
	res = apply(t, e, root+"/d", "{ensure: directory, owner: pippettest, mode: '0750'}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "pippettest", uidName(t, ownerOf(t, root+"/d")))
	assert.Equal(t, os.ModeDir|0o750, modeOf(t, root+"/d"))
}

func ownerOf(t *testing.T, p string) int {
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(p, &st))
	return int(st.Uid)
}

func uidName(t *testing.T, uid int) string {
	out, err := exec.Command("id", "-nu", fmt.Sprint(uid)).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func ensureGroup(t *testing.T, name string) {
	if exec.Command("getent", "group", name).Run() == nil {
		return
	}
	out, err := exec.Command("groupadd", "--system", name).CombinedOutput()
	require.NoError(t, err, string(out))
	t.Cleanup(func() { _ = exec.Command("groupdel", name).Run() })
}

func ensureUser(t *testing.T, name, group string) {
	if exec.Command("getent", "passwd", name).Run() == nil {
		return
	}
	out, err := exec.Command("useradd", "--system", "--no-create-home", "-g", group, name).CombinedOutput()
	require.NoError(t, err, string(out))
	// Registered after the group's cleanup, so it runs first.
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
}

func TestShowDiff(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "a")
	e, logs := newDiffingEngine(t)
	res := apply(t, e, p, "content: \"alpha\\nsecret-one\\ngamma\\n\"")
	require.Equal(t, changed, outcomeOf(res))
	assert.Equal(t, "defined content as '{sha256}"+sha256hex("alpha\nsecret-one\ngamma\n")+"'", res.Events[0].Message)

	res = apply(t, e, p, "{show_diff: true, content: \"alpha\\nsecret-two\\ngamma\\n\"}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	msg := res.Events[0].Message
	assert.Regexp(t, `^content changed '\{sha256\}[0-9a-f]{64}' to '\{sha256\}[0-9a-f]{64}'$`, msg, "the event says the change only; the diff is a record before it")
	assert.Contains(t, logs.String(), `\n-secret-one\n+secret-two\n`) // the text handler writes \n
	assert.Contains(t, logs.String(), "@@ -1,3 +1,3 @@")

	logs.Reset()
	res = apply(t, e, p, "{show_diff: false, content: \"alpha\\nsecret-three\\n\"}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.NotContains(t, fmt.Sprintf("%+v", res), "secret")
	assert.NotContains(t, logs.String(), "secret")
	// Noop logs the diff it would make, when show_diff is true.
	logs.Reset()
	res = apply(t, e, p, "{show_diff: true, noop: true, content: \"secret-noop\"}")
	assert.False(t, res.Changed)
	assert.Contains(t, logs.String(), "+secret-noop")
	// Noop shows checksums, not content.
	logs.Reset()
	res = apply(t, e, p, "{show_diff: false, noop: true, content: \"secret-four\"}")
	assert.True(t, res.Noop)
	assert.NotContains(t, fmt.Sprintf("%+v", res), "secret")
	assert.NotContains(t, logs.String(), "secret")
	assert.Equal(t, "alpha\nsecret-three\n", readFile(t, p))
}

// TestCrashSafety kills a receiver-like child with SIGKILL while it is
// writing a large file fed slowly over HTTP: the old file must remain, and
// nothing else. Left to finish, the child installs the new file.
func TestCrashSafety(t *testing.T) {
	if os.Getenv("PIPPET_CRASH_CHILD") != "" {
		return // the child's work is in TestCrashChild
	}
	const chunk, chunks = 64 << 10, 64
	full := strings.Repeat("n", chunk*chunks)
	run := func(t *testing.T, kill bool) (string, []string) {
		var served atomic.Int64
		release := make(chan struct{})
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(full)))
			w.Header().Set("X-Checksum-Sha256", sha256hex(full))
			if r.Method == http.MethodHead {
				return
			}
			for i := 0; i < chunks; i++ {
				if i == 8 {
					select {
					case <-release:
					case <-r.Context().Done():
						return
					}
				}
				if _, err := io.WriteString(w, full[i*chunk:(i+1)*chunk]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				served.Add(chunk)
			}
		}))
		defer hs.Close()
		root := t.TempDir()
		p := filepath.Join(root, "target")
		require.NoError(t, os.WriteFile(p, []byte("old content"), 0o644))
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), "PIPPET_CRASH_CHILD="+p, "PIPPET_CRASH_URL="+hs.URL+"/big")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		deadline := time.Now().Add(20 * time.Second)
		for served.Load() < 8*chunk && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		require.GreaterOrEqual(t, served.Load(), int64(8*chunk), "child never fetched: %s", out)
		time.Sleep(50 * time.Millisecond) // let the child write what it got
		if kill {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
		} else {
			close(release)
			require.NoError(t, cmd.Wait(), out.String())
		}
		return readFile(t, p), listDir(t, root)
	}
	t.Run("killed mid-write keeps the old file", func(t *testing.T) {
		got, entries := run(t, true)
		assert.Equal(t, "old content", got)
		assert.Equal(t, []string{"target"}, entries)
	})
	t.Run("finished write installs the new file", func(t *testing.T) {
		got, entries := run(t, false)
		assert.Equal(t, full, got)
		assert.Equal(t, []string{"target"}, entries)
	})
}

// TestCrashChild is the child half of TestCrashSafety.
func TestCrashChild(t *testing.T) {
	p := os.Getenv("PIPPET_CRASH_CHILD")
	if p == "" {
		t.Skip("only run as TestCrashSafety's child")
	}
	e := newEngine(t, withTimeout(60*time.Second))
	res := apply(t, e, p, "{source: '"+os.Getenv("PIPPET_CRASH_URL")+"'}")
	if !res.Changed || res.Failed {
		fmt.Fprintf(os.Stderr, "child: %+v\n", res)
		os.Exit(3)
	}
}

// TestEnsureTypoWarns: ensure: fiel makes a link to fiel, as Puppet does,
// and warns that file was probably meant; a real link target (a path, or
// a word far from every ensure value) makes no warning.
func TestEnsureTypoWarns(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		ensure, warn string
	}{
		{"fiel", "did you mean ensure: file?"},
		{"directroy", "did you mean ensure: directory?"},
		{"absnet", "did you mean ensure: absent?"},
		{"motd.d", ""},
		{"../fiel", ""},
	} {
		t.Run(tt.ensure, func(t *testing.T) {
			e, logs := newLoggingEngine(t)
			path := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(tt.ensure))
			res := apply(t, e, path, "{ensure: '"+tt.ensure+"'}")
			require.False(t, res.Failed || res.Error, res.Exception)
			got, err := os.Readlink(path)
			require.NoError(t, err, "a link is made, as in Puppet")
			assert.Equal(t, tt.ensure, got)
			if tt.warn == "" {
				assert.NotContains(t, logs.String(), "did you mean")
				return
			}
			assert.Contains(t, logs.String(), "level=WARN")
			assert.Contains(t, logs.String(), tt.warn)
		})
	}
}
