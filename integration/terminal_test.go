package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openPty opens a pseudo-terminal pair through /dev/ptmx: what the
// receiver writes to the slave side is read from the master side.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	ioctl := func(req uintptr, arg unsafe.Pointer) error {
		rc, err := m.SyscallConn()
		if err != nil {
			return err
		}
		var errno syscall.Errno
		if err := rc.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
		}); err != nil {
			return err
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
	var unlock int32
	require.NoError(t, ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)), "unlockpt")
	var n uint32
	require.NoError(t, ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n)), "ptsname")
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return m, s
}

// runWithStderr runs the receiver on input with stderr on a terminal (tty)
// or a pipe, and returns its stdout, stderr (without the terminal's CRs)
// and exit status.
func runWithStderr(t *testing.T, tty bool, input string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(receiverBin, append([]string{"--state-dir", t.TempDir(), "--no-banner"}, args...)...)
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	var master *os.File
	if tty {
		var slave *os.File
		master, slave = openPty(t)
		cmd.Stderr = slave
		require.NoError(t, cmd.Start())
		slave.Close() // the child holds it; the master reads EIO once the child is gone
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := io.Copy(&errb, master)
			if err != nil && !errors.Is(err, syscall.EIO) {
				t.Errorf("reading the terminal: %v", err)
			}
		}()
		err := cmd.Wait()
		<-done
		code = exitCode(t, err)
	} else {
		cmd.Stderr = &errb
		code = exitCode(t, cmd.Run())
	}
	return out.String(), strings.ReplaceAll(errb.String(), "\r\n", "\n"), code
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

// At a terminal the receiver logs each change as `puppet resource` does
// and ends with a summary; through a pipe (a controller) it stays as
// quiet as Puppet's receiver: errors only, no summary. Neither changes
// the exit status without --detailed-exitcodes.
func TestTerminalLogging(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	input := fmt.Sprintf(`{"type":"file","title":%q,"params":"{ensure: file}"}`+"\n", a) +
		`{"type":"notify","title":"hello","params":"{message: hi there}"}` + "\n" +
		`{"type":"notify","title":"quiet","params":"{message: at info, loglevel: info}"}` + "\n" +
		fmt.Sprintf(`{"type":"file","title":%q,"params":"{ensure: file}"}`+"\n", filepath.Join(dir, "missing", "b"))
	created := "Notice: /File[" + a + "]/ensure: created\n"
	failed := "Error: /File[" + filepath.Join(dir, "missing", "b") + "]/ensure: change from 'absent' to 'file' failed: "
	summary := regexp.MustCompile(`(?m)^Notice: Applied 4 resources in \d+\.\d\d s: 3 changed, 1 failed\n\z`)

	for _, tt := range []struct {
		name      string
		tty       bool
		args      []string
		notices   bool
		infos     bool
		summaries bool
	}{
		{name: "terminal", tty: true, notices: true, summaries: true},
		{name: "pipe", tty: false},
		{name: "terminal, --log-level warning", tty: true, args: []string{"--log-level", "warning"}},
		{name: "pipe, --log-level notice", tty: false, args: []string{"--log-level", "notice"}, notices: true, summaries: true},
		{name: "pipe, --verbose", tty: false, args: []string{"--verbose"}, notices: true, infos: true, summaries: true},
		{name: "terminal, --verbose", tty: true, args: []string{"--verbose"}, notices: true, infos: true, summaries: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(a)
			out, stderr, code := runWithStderr(t, tt.tty, input, tt.args...)
			assert.Equal(t, 0, code, "without --detailed-exitcodes a failure does not change the status")
			assert.Equal(t, 4, strings.Count(out, "\n"), out)
			assert.Contains(t, stderr, failed, "errors always show")
			check := func(want bool, s string) {
				t.Helper()
				if want {
					assert.Contains(t, stderr, s)
				} else {
					assert.NotContains(t, stderr, s)
				}
			}
			check(tt.notices, created)
			check(tt.notices, "Notice: hi there\n")
			check(tt.notices, "Notice: /Notify[hello]/message: defined 'message' as 'hi there'\n")
			check(tt.infos, "Info: at info\n")
			if tt.summaries {
				assert.Regexp(t, summary, stderr)
			} else {
				assert.NotContains(t, stderr, "Applied")
			}
		})
	}
}

// --detailed-exitcodes: 2 changes, 4 failures, 6 both, 0 neither (noop
// changes included, as puppet apply --noop); the summary follows the log
// level, not the flag.
func TestDetailedExitcodes(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	require.NoError(t, os.WriteFile(existing, nil, 0o644))
	unchanged := fmt.Sprintf(`{"type":"file","title":%q,"params":"{ensure: file}"}`+"\n", existing)
	change := `{"type":"notify","title":"n","params":"{}"}` + "\n"
	failure := fmt.Sprintf(`{"type":"file","title":%q,"params":"{ensure: file}"}`+"\n", filepath.Join(dir, "missing", "x"))
	bad := `{"type":"starship","title":"x","params":"{}"}` + "\n"
	for _, tt := range []struct {
		name  string
		input string
		args  []string
		want  int
	}{
		{"nothing", "", nil, 0},
		{"in sync", unchanged, nil, 0},
		{"changes", unchanged + change, nil, 2},
		{"failures", unchanged + failure, nil, 4},
		{"error answer", bad, nil, 4},
		{"both", change + failure, nil, 6},
		{"noop", change, []string{"--noop"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runWithStderr(t, false, tt.input, append([]string{"--detailed-exitcodes"}, tt.args...)...)
			assert.Equal(t, tt.want, code, stderr)
			assert.NotContains(t, stderr, "Applied", "no summary at the warning level")
			_, _, code = runWithStderr(t, false, tt.input, tt.args...)
			assert.Equal(t, 0, code, "without the flag the status is unchanged")
		})
	}
	_, stderr, code := runWithStderr(t, false, change+failure, "--detailed-exitcodes", "--log-level", "notice")
	assert.Equal(t, 6, code)
	assert.Regexp(t, `Notice: Applied 2 resources in \d+\.\d\d s: 1 changed, 1 failed\n$`, stderr)
}
