package integration

import (
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// Issue 26 item 4: the second SIGTERM reaches a read that waits. The
// source /proc/kmsg is a regular file whose read waits for the kernel's
// next message; the receiver, told twice to stop, cancels the resource,
// answers it failed and exits 0.
func TestSecondSignalCancelsBlockingRead(t *testing.T) {
	fd, err := syscall.Open("/proc/kmsg", syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Skipf("/proc/kmsg cannot be opened: %v", err)
	}
	syscall.Close(fd)
	cmd, stdin, stdout, stderr := startReceiver(t, "--no-banner", "--log-level", "notice")
	dst := filepath.Join(t.TempDir(), "copy")
	_, err = io.WriteString(stdin, `{"type":"file","title":"`+dst+`","params":"{source: /proc/kmsg}"}`+"\n")
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // the read is waiting
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan []byte)
	go func() { out, _ := io.ReadAll(stdout); done <- out }()
	var out []byte
	select {
	case out = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the second SIGTERM did not end the read; stderr: %s", stderr.String())
	}
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	assert.Less(t, time.Since(start), 10*time.Second)
	_, as := testutil.DecodeAnswers(t, string(out))
	require.Len(t, as, 1)
	assert.True(t, as[0].Failed)
	assert.Contains(t, *as[0].Exception, "cancel")
	assert.NoFileExists(t, dst)
}
