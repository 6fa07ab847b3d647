package file_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/file"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

// kmsgReadable skips the test unless /proc/kmsg can be opened (root, or
// CAP_SYSLOG): the one regular file whose read waits for the kernel.
func kmsgReadable(t *testing.T) {
	t.Helper()
	fd, err := syscall.Open("/proc/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Skipf("/proc/kmsg cannot be opened: %v", err)
	}
	syscall.Close(fd)
}

// within runs f, failing the test if it takes longer than d (f is left
// running: before the fix it blocked forever).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not end within %v", what, d)
	}
}

// Issue 26 item 4: a find of /proc/kmsg, or a search of /proc, never
// reads a file that waits: files of the kernel's pseudo file systems are
// reported without content (and nothing of kmsg is taken from its
// readers).
func TestFindOfProcNeverBlocks(t *testing.T) {
	kmsgReadable(t)
	e := typetest.New(t, []*applier.Type{file.Type})
	var res protocol.Result
	within(t, 10*time.Second, "find /proc/kmsg", func() { res = e.Find("file", "/proc/kmsg", "") })
	require.False(t, res.Failed, res.Exception)
	v, _ := res.State.Get("ensure")
	assert.Equal(t, "file", v)
	_, has := res.State.Get("content")
	assert.False(t, has, "no content reported for a /proc file")

	within(t, 30*time.Second, "search /proc", func() { res = e.Search("file", "{path: /proc}") })
	require.False(t, res.Failed, res.Exception)
	st, ok := typetest.Instance(res, "/proc/kmsg")
	require.True(t, ok)
	_, has = st.Get("content")
	assert.False(t, has)
}

// A read that waits (a local source that is /proc/kmsg) ends when the
// request's context does: the resource fails, nothing is written.
func TestBlockingSourceReadEndsWithContext(t *testing.T) {
	kmsgReadable(t)
	// (The read takes what the kernel's log holds for /proc/kmsg's
	// reader, then waits.)
	eng := newEngine(t)
	dst := filepath.Join(t.TempDir(), "copy")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := protocol.Request{Type: "file", Title: dst}
	var dec protocol.Decoder
	require.NoError(t, dec.DecodeLine([]byte(`{"type":"file","title":"`+dst+`","params":"{source: /proc/kmsg}"}`), &req))
	var res protocol.Result
	start := time.Now()
	within(t, 10*time.Second, "apply with source /proc/kmsg", func() { res = eng.Apply(ctx, &req) })
	t.Logf("ended after %v: %+v", time.Since(start), res)
	assert.True(t, res.Failed)
	assert.Contains(t, res.Exception, "deadline exceeded")
	_, err := os.Lstat(dst)
	assert.True(t, os.IsNotExist(err), "nothing is written")
}
