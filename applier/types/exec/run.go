package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxOutput bounds the output kept per command: its last 64 KiB.
const maxOutput = 64 << 10

// killGrace is how long a timed-out process group has between SIGTERM and SIGKILL.
const killGrace = time.Second

// errTimeout is returned by run when the command exceeded its timeout.
var errTimeout = errors.New("Command exceeded timeout")

// spec is everything needed to start one command.
type spec struct {
	argv    []string
	env     []string
	dir     string
	cred    *syscall.Credential
	timeout time.Duration // 0: none
}

// outcome is a finished command.
type outcome struct {
	code   int
	output []byte // the last maxOutput bytes of stdout and stderr combined
}

// tail is an io.Writer keeping the last max bytes written.
type tail struct {
	buf       []byte
	max       int
	truncated bool
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.truncated = true
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.truncated = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// run starts the command in a new session and waits for it, the timeout
// or ctx, whichever comes first; on the last two it kills the whole
// process group. Output is read until the command exits (plus a short
// drain), so a background grandchild holding the pipe does not block.
func run(ctx context.Context, s *spec) (outcome, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return outcome{}, fmt.Errorf("creating the output pipe: %w", err)
	}
	defer pr.Close()
	cmd := &osexec.Cmd{
		Path:   s.argv[0],
		Args:   s.argv,
		Env:    s.env,
		Dir:    s.dir,
		Stdout: pw,
		Stderr: pw,
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:     true,
			Credential: s.cred,
		},
	}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return outcome{}, fmt.Errorf("could not execute '%s': %w", s.argv[0], err)
	}
	pw.Close()
	pgid := cmd.Process.Pid

	out := &tail{max: maxOutput}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var timer <-chan time.Time
	if s.timeout > 0 {
		t := time.NewTimer(s.timeout)
		defer t.Stop()
		timer = t.C
	}
	var waitErr, why error
	select {
	case waitErr = <-waitDone:
	case <-timer:
		why = errTimeout
	case <-ctx.Done():
		why = fmt.Errorf("cancelled: %w", ctx.Err())
	}
	if why != nil {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case waitErr = <-waitDone:
		case <-time.After(killGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			waitErr = <-waitDone
		}
		// Anything left in the group (children that ignored SIGTERM) goes too.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	// The command has exited; take what output is there without waiting
	// on descendants that still hold the pipe.
	_ = pr.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	<-readDone

	res := outcome{code: cmd.ProcessState.ExitCode(), output: out.buf}
	if why != nil {
		return res, why
	}
	if waitErr != nil {
		var ee *osexec.ExitError
		if !errors.As(waitErr, &ee) {
			return res, fmt.Errorf("waiting for '%s': %w", s.argv[0], waitErr)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Ruby reports no exit status for a killed process; treat it
			// as a failure with the shell's convention 128+signal.
			res.code = 128 + int(ws.Signal())
		}
	}
	return res, nil
}

// maxReason bounds the output quoted in a failure message.
const maxReason = 2048

// lastLines returns up to n trailing lines of out, at most maxReason bytes.
func lastLines(out []byte, n int) string {
	if len(out) > maxReason+1 {
		out = out[len(out)-maxReason-1:]
	}
	s := strings.TrimRight(string(out), "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lookPath finds an executable regular file named exe in dirs.
func lookPath(exe string, dirs []string) (string, bool) {
	for _, d := range dirs {
		p := d + "/" + exe
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// checkExe verifies the program exists, as Puppet's posix provider does
// before running anything.
func checkExe(exe string, dirs []string) (string, error) {
	if strings.HasPrefix(exe, "/") {
		fi, err := os.Stat(exe)
		switch {
		case err != nil:
			return "", fmt.Errorf("Could not find command '%s'", exe)
		case !fi.Mode().IsRegular():
			return "", fmt.Errorf("'%s' is a %s, not a file", exe, fileKind(fi.Mode()))
		case fi.Mode()&0o111 == 0:
			return "", fmt.Errorf("'%s' is not executable", exe)
		}
		return exe, nil
	}
	if p, ok := lookPath(exe, dirs); ok {
		return p, nil
	}
	return "", fmt.Errorf("Could not find command '%s'", exe)
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "link"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func formatCodes(codes []any) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.FormatInt(c.(int64), 10)
	}
	return strings.Join(parts, ",")
}
