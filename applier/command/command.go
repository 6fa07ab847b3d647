// Package command runs the system's tools for every type: exec's
// commands, mount(8), useradd(8), crontab(1), apt-get, init scripts,
// validate_cmd. One runner, so every command gets the same guarantees:
//
//   - Bounded output. Combined stdout and stderr are kept to their last
//     MaxOutput bytes (64 KiB by default), however much the command prints;
//     a caller that wants stdout whole (a listing it parses) passes its own
//     Stdout writer and bounds it itself.
//   - Bounded time. Timeout, or the context, ends the command: its whole
//     process group gets SIGTERM, then SIGKILL a second later. Output is
//     read until the command exits (plus a short drain), so a background
//     grandchild holding the pipe never blocks the caller.
//   - Nothing outlives the receiver. Each command runs in its own process
//     group (so it can be killed as one; in its own session when the
//     receiver has a controlling terminal) with SIGKILL as its
//     parent-death signal, and every group still running is known: KillAll,
//     which the receiver calls whenever it exits, ends them all, and a
//     watchdog process (see watchdog.go) ends them when the receiver is
//     killed outright. The exception is a command that must not be cut
//     short (Cmd.Finish: package tools, account tools, crontab, service
//     scripts), which runs to its end in a session of its own whatever
//     becomes of the receiver, as Puppet's do when Puppet dies.
//   - Clean signal dispositions. A command starts with default signal
//     handling whatever the receiver ignores (the receiver must not ignore
//     SIGPIPE: an ignored disposition survives exec).
//
// Failures are worded as Puppet words them: Execution of '/usr/sbin/useradd
// -u 5 x' returned 9: useradd: user 'x' already exists.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultMaxOutput is how much output is kept when Cmd.MaxOutput is 0.
const DefaultMaxOutput = 64 << 10

// KillGrace is how long a process group has between SIGTERM and SIGKILL.
const KillGrace = time.Second

// ErrTimeout is returned when a command exceeded its Timeout (Puppet's words).
var ErrTimeout = errors.New("Command exceeded timeout")

// Cmd is one command to run.
type Cmd struct {
	// Argv is the program and its arguments; Argv[0] is a path, or a name
	// looked up on PATH.
	Argv []string
	// Env is the command's environment; nil inherits the receiver's.
	Env []string
	// Dir is the working directory; "" inherits the receiver's.
	Dir string
	// Cred runs the command as another user (nil: as the receiver).
	Cred *syscall.Credential
	// Stdin is fed to the command's standard input; nil gives it /dev/null.
	Stdin []byte
	// Stdout, when set, receives standard output alone (then Output holds
	// only standard error's tail). It is the caller's to bound.
	Stdout io.Writer
	// Timeout ends the command's process group when exceeded (0: none).
	Timeout time.Duration
	// MaxOutput bounds the output kept (0: DefaultMaxOutput).
	MaxOutput int
	// Finish runs a command that changes the system in steps that must
	// not be cut short (dpkg and apt-get, useradd and its kin, crontab,
	// a service's start script) to its end, whatever happens to the
	// receiver, as Puppet's commands outlive Puppet: it gets a session of
	// its own, no parent-death signal, its input and output in unlinked
	// files rather than pipes (nothing it writes can fail because the
	// receiver is gone), and neither KillAll nor the watchdog ends it.
	// Only Timeout kills it. When ctx ends first, Run stops waiting and
	// returns an error wrapping ErrLeftRunning (and ctx's error) naming
	// the command and its pid: it goes on to its end, and what it leaves
	// is not known to the answer.
	Finish bool
}

// ErrLeftRunning is wrapped by Run's error for a Finish command whose
// context ended before it did: it was left running to completion.
var ErrLeftRunning = errors.New("left running to completion")

// Result is a finished command.
type Result struct {
	// Code is the exit status; 128+N for a command killed by signal N.
	Code int
	// Output is the last MaxOutput bytes of combined stdout and stderr.
	Output []byte
	// Truncated: earlier output was dropped.
	Truncated bool
}

// hasTerminal says whether the receiver has a controlling terminal. Only
// then does a command get a session of its own, which keeps it from the
// terminal (no /dev/tty, no job-control stops); otherwise a process group
// of its own is enough to kill it as one, and costs far less: with the
// kernel's scheduler autogroups, each new session makes (and at its end
// frees) a scheduling group, which made a short command cost about 1.4
// times what os/exec alone costs (BenchmarkOSExecSetsid).
var hasTerminal = sync.OnceValue(func() bool {
	f, err := os.OpenFile("/dev/tty", os.O_RDONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
})

// String renders argv as Puppet quotes a command in messages.
func String(argv []string) string { return strings.Join(argv, " ") }

// Run starts c and waits for it, its Timeout or ctx, whichever comes
// first; on the last two it kills the whole process group and returns the
// output so far with an error wrapping ErrTimeout or ctx's error. A
// command that ran and exited non-zero is not an error: see Result.Code.
func Run(ctx context.Context, c *Cmd) (Result, error) {
	if len(c.Argv) == 0 {
		return Result{}, errors.New("command: empty argv")
	}
	path := c.Argv[0]
	if !strings.Contains(path, "/") {
		p, err := osexec.LookPath(path)
		if err != nil {
			return Result{}, fmt.Errorf("could not find command '%s': %w", path, err)
		}
		path = p
	}
	if c.Finish {
		return runToEnd(ctx, c, path)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("creating the output pipe: %w", err)
	}
	defer pr.Close()
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	cmd := &osexec.Cmd{
		Path:   path,
		Args:   c.Argv,
		Env:    c.Env,
		Dir:    c.Dir,
		Stdout: pw,
		Stderr: pw,
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:     hasTerminal(),
			Setpgid:    !hasTerminal(),
			Pdeathsig:  syscall.SIGKILL,
			Credential: c.Cred,
		},
	}
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	// The watchdog is started before the command, so that the command's
	// group is registered with it microseconds after it starts, not after
	// the watchdog's own start-up.
	watchdog.once.Do(startWatchdog)
	live.Lock()
	if live.closed {
		live.Unlock()
		pw.Close()
		return Result{}, errors.New("command: the receiver is exiting; not starting '" + c.Argv[0] + "'")
	}
	err = cmd.Start()
	if err == nil {
		live.groups[cmd.Process.Pid] = struct{}{}
	}
	live.Unlock()
	if err == nil {
		watch('+', cmd.Process.Pid)
	}
	pw.Close()
	if err != nil {
		return Result{}, fmt.Errorf("could not execute '%s': %w", c.Argv[0], err)
	}
	pgid := cmd.Process.Pid
	out := &Tail{Max: max}
	waitErr, why := supervise(ctx, cmd, pr, out, c.Timeout)
	// A command ended by timeout or cancellation takes its whole group
	// with it (children that ignored SIGTERM). A command that exited by
	// itself leaves its background children alone: a service's start
	// script is expected to leave its daemon running.
	if why != nil {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	live.Lock()
	delete(live.groups, pgid)
	live.Unlock()
	watch('-', pgid)

	res := Result{Code: cmd.ProcessState.ExitCode(), Output: out.Bytes(), Truncated: out.Truncated}
	if err := exitOf(&res, c, waitErr); err != nil {
		return res, err
	}
	if why != nil {
		return res, why
	}
	return res, nil
}

// exitOf completes res from the command's wait error: a command killed by
// a signal exits 128+signal, as a shell reports it; an error that is not
// an exit status is returned, naming the command.
func exitOf(res *Result, c *Cmd, waitErr error) error {
	if waitErr == nil {
		return nil
	}
	var ee *osexec.ExitError
	if !errors.As(waitErr, &ee) {
		return fmt.Errorf("waiting for '%s': %w", c.Argv[0], waitErr)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Code = 128 + int(ws.Signal())
	}
	return nil
}

// drainAfterExit is how long output is still read once the command has
// exited, for what it wrote last; a background grandchild holding the
// pipe open never keeps the caller longer.
const drainAfterExit = 100 * time.Millisecond

// readBufs are the buffers the output is read through.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// longAgo is a read deadline that has passed: it wakes a blocked read.
var longAgo = time.Unix(1, 0)

// supervise reads the started command's output into out, on the calling
// goroutine, until the command has exited and its output is drained (end
// of file, or drainAfterExit after the exit), while one goroutine reaps
// it. The timeout and ctx are read deadlines on the pipe: when either
// passes first, the command's process group gets SIGTERM, then SIGKILL
// after KillGrace, and why says which. It returns cmd.Wait's error.
//
// One goroutine besides the caller's and no timer: a short command costs
// little more than os/exec's own Run (BenchmarkRun, BenchmarkOSExec).
func supervise(ctx context.Context, cmd *osexec.Cmd, pr *os.File, out *Tail, timeout time.Duration) (waitErr, why error) {
	pgid := cmd.Process.Pid
	var (
		mu     sync.Mutex
		exited bool
	)
	// setDeadline moves the read deadline unless the command has exited
	// (then the exit's wake-up and the drain decide).
	setDeadline := func(t time.Time) {
		mu.Lock()
		if !exited {
			_ = pr.SetReadDeadline(t)
		}
		mu.Unlock()
	}
	var timeoutAt time.Time
	if timeout > 0 {
		timeoutAt = time.Now().Add(timeout)
		_ = pr.SetReadDeadline(timeoutAt)
	}
	waitDone := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		mu.Lock()
		exited = true
		_ = pr.SetReadDeadline(longAgo) // wake the reader: start draining
		mu.Unlock()
		waitDone <- err
	}()
	stop := context.AfterFunc(ctx, func() { setDeadline(longAgo) })
	defer stop()

	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	var graceAt time.Time // SIGTERM sent; SIGKILL at graceAt
	killed, draining := false, false
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			out.Write(buf[:n])
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			break // end of file: nothing holds the pipe any more
		}
		mu.Lock()
		ex := exited
		mu.Unlock()
		now := time.Now()
		switch {
		case ex && draining:
			return <-waitDone, why
		case ex:
			draining = true
			_ = pr.SetReadDeadline(now.Add(drainAfterExit))
		case why == nil:
			switch {
			case ctx.Err() != nil:
				why = fmt.Errorf("cancelled: %w", ctx.Err())
			case !timeoutAt.IsZero() && !now.Before(timeoutAt):
				why = ErrTimeout
			default:
				setDeadline(timeoutAt) // woken early: sleep on
				continue
			}
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			graceAt = now.Add(KillGrace)
			setDeadline(graceAt)
		case !killed && !now.Before(graceAt):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			killed = true
			setDeadline(time.Time{}) // the exit wakes the read
		case !killed:
			setDeadline(graceAt) // woken early (ctx after a timeout): sleep on
		default:
			setDeadline(time.Time{})
		}
	}
	// End of file before the exit is known: the command closed its output
	// (or has just exited). Wait for the exit, still bounded.
	if why != nil {
		if killed {
			return <-waitDone, why
		}
		select {
		case waitErr = <-waitDone:
		case <-time.After(time.Until(graceAt)):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			waitErr = <-waitDone
		}
		return waitErr, why
	}
	var timer <-chan time.Time
	if !timeoutAt.IsZero() {
		t := time.NewTimer(time.Until(timeoutAt))
		defer t.Stop()
		timer = t.C
	}
	select {
	case waitErr = <-waitDone:
		return waitErr, nil
	case <-timer:
		why = ErrTimeout
	case <-ctx.Done():
		why = fmt.Errorf("cancelled: %w", ctx.Err())
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case waitErr = <-waitDone:
	case <-time.After(KillGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		waitErr = <-waitDone
	}
	return waitErr, why
}

// Exec runs argv with the receiver's environment, no timeout but ctx's,
// and returns its combined output. A command that exits non-zero is an
// *ExitError worded as Puppet words it.
func Exec(ctx context.Context, argv ...string) (string, error) {
	return Check(ctx, &Cmd{Argv: argv})
}

// Check is Run for a command that must succeed: a non-zero exit is an
// *ExitError (Execution of 'ARGV' returned N: LAST LINES).
func Check(ctx context.Context, c *Cmd) (string, error) {
	res, err := Run(ctx, c)
	if err != nil {
		return string(res.Output), fmt.Errorf("Execution of '%s' failed: %w", String(c.Argv), err)
	}
	if res.Code != 0 {
		return string(res.Output), &ExitError{Argv: c.Argv, Code: res.Code, Output: LastLines(res.Output, 10)}
	}
	return string(res.Output), nil
}

// ExitError is a command that ran and exited with a status other than 0.
type ExitError struct {
	Argv   []string
	Code   int
	Output string // its last lines
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("Execution of '%s' returned %d", String(e.Argv), e.Code)
	if e.Output != "" {
		msg += ": " + e.Output
	}
	return msg
}

// MaxReason bounds the output LastLines quotes.
const MaxReason = 2048

// LastLines returns up to n trailing lines of out, at most MaxReason
// bytes, for a failure message.
func LastLines(out []byte, n int) string {
	if len(out) > MaxReason+1 {
		out = out[len(out)-MaxReason-1:]
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

// Tail is an io.Writer keeping the last Max bytes written.
type Tail struct {
	Max       int
	buf       []byte
	Truncated bool
	mu        sync.Mutex
}

// Write keeps the last Max bytes of everything written.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.Max {
		t.Truncated = t.Truncated || len(p) > t.Max || len(t.buf) > 0
		t.buf = append(t.buf[:0], p[len(p)-t.Max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.Truncated = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Bytes returns what is kept.
func (t *Tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf
}

// live is every process group started and not yet reaped.
var live = struct {
	sync.Mutex
	groups map[int]struct{}
	closed bool
}{groups: map[int]struct{}{}}

// KillAll sends SIGKILL to the process group of every command still
// running and refuses to start new ones. The receiver calls it when it
// exits, so no command outlives it; Run's callers then see their
// commands killed.
func KillAll() {
	live.Lock()
	defer live.Unlock()
	live.closed = true
	for pgid := range live.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// KillRunning sends SIGKILL to the process group of every command still
// running, as KillAll, but new commands may still start: the end of one
// apply in a process that goes on (the agent's daemon runs one apply
// after another).
func KillRunning() {
	live.Lock()
	defer live.Unlock()
	for pgid := range live.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// running is how many commands are running now (export_test.go hands it
// to the tests).
func running() int {
	live.Lock()
	defer live.Unlock()
	return len(live.groups)
}
