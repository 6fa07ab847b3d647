package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	json "github.com/goccy/go-json"
)

// EnvReceiver names the environment variable that overrides the default
// receiver command: a command line split on blanks, e.g.
// "puppet yamlresource receive --color=no" or "ssh web1 receiver".
const EnvReceiver = "PIPPET_RECEIVER"

// Defaults of Options.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultStopTimeout  = 5 * time.Second
)

// Options configure a Receiver.
type Options struct {
	// Command is the receiver's argv. Empty means: the command line in
	// $PIPPET_RECEIVER if set, else the `receiver` binary beside the
	// running executable (a bundle uses its own), else `receiver` on PATH.
	// Any command speaking the protocol works: our receiver,
	// `puppet yamlresource receive --color=no`, `ssh HOST receiver`.
	Command []string
	// Env is added to the current environment of the child.
	Env []string
	// Dir is the child's working directory; empty means ours.
	Dir string
	// StartTimeout bounds the wait for the ready line after a start
	// (DefaultStartTimeout when 0; Puppet's receiver takes seconds).
	StartTimeout time.Duration
	// StopTimeout is the grace period between closing the child's stdin
	// and killing it (DefaultStopTimeout when 0).
	StopTimeout time.Duration
	// NoReady starts the child without waiting for a ready line, for a
	// receiver that prints none.
	NoReady bool
	// MaxLine bounds one output line (DefaultMaxLine when 0).
	MaxLine int
	// Logger receives the child's stderr, line by line, and its starts and
	// exits; slog.Default() when nil.
	Logger *slog.Logger
}

// Receiver is one long-lived receiver process shared by many users. Users
// Register before applying and Unregister when done; the child starts with
// the first user and stops after the last. It implements Runner: applies
// from any number of goroutines are serialized by LockApply.
//
// A child that exited or was marked broken by Apply is replaced in the next
// LockApply; the apply that was in flight when it died got an error wrapping
// ErrReceiverDied.
type Receiver struct {
	opts Options
	log  *slog.Logger

	applyMu sync.Mutex // held from LockApply to UnlockApply

	mu      sync.Mutex // guards users, child, lastErr
	users   int
	child   *child
	lastErr error // why there is no child, when users > 0
}

// New returns a Receiver with its own child process (not the process-wide
// one of Get). Nothing starts until the first Register.
func New(opts Options) *Receiver {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Receiver{opts: opts, log: log.With("component", "pippet-runner")}
}

var (
	defaultMu   sync.Mutex
	defaultOpts Options
	defaultRecv *Receiver
)

// ErrConfigured is returned by Configure once Get has created the
// process-wide Receiver.
var ErrConfigured = errors.New("runner: Configure called after the receiver was first used")

// Configure sets the options of the process-wide Receiver. It must be
// called before the first Get.
func Configure(opts Options) error {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultRecv != nil {
		return ErrConfigured
	}
	defaultOpts = opts
	return nil
}

// Get returns the process-wide Receiver, creating it on the first call
// (safe from any goroutine) with the options given to Configure.
func Get() *Receiver {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultRecv == nil {
		defaultRecv = New(defaultOpts)
	}
	return defaultRecv
}

// Register counts one more user and starts the child for the first. A
// failed start is returned and not counted.
func (r *Receiver) Register() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == 0 || r.child == nil {
		c, err := r.start()
		if err != nil {
			return err
		}
		r.child = c
		r.lastErr = nil
	}
	r.users++
	return nil
}

// Unregister counts one user less and stops the child after the last:
// its stdin is closed (our receiver and Puppet's finish the request in
// progress and exit), and it is killed if it has not exited within
// StopTimeout. Unregistering more often than registering is an error.
func (r *Receiver) Unregister() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == 0 {
		return errors.New("runner: Unregister without a matching Register")
	}
	r.users--
	if r.users > 0 {
		return nil
	}
	c := r.child
	r.child = nil
	r.lastErr = nil
	if c == nil {
		return nil
	}
	if why := c.usable(); why != nil {
		// Already dead or broken, and reported by the apply that found
		// out: no grace period for it.
		c.log.Info("stopping a broken receiver", "reason", why.Error())
		c.kill()
		return nil
	}
	return c.stop(r.opts.StopTimeout)
}

// LockApply takes the apply lock and makes sure a working child is there:
// one that exited or was marked broken is replaced now (its start bounded
// by StartTimeout). When that fails, or nobody is registered, InputStream
// and Lines report why and Apply returns an error wrapping ErrUnavailable.
func (r *Receiver) LockApply() {
	r.applyMu.Lock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == 0 {
		return
	}
	if r.child != nil && r.child.usable() == nil {
		return
	}
	if r.child != nil {
		why := r.child.usable()
		r.log.Warn("replacing receiver", "pid", r.child.pid, "reason", why.Error())
		r.child.kill()
		r.child = nil
	}
	c, err := r.start()
	if err != nil {
		r.lastErr = err
		return
	}
	r.child, r.lastErr = c, nil
}

// UnlockApply releases the apply lock.
func (r *Receiver) UnlockApply() { r.applyMu.Unlock() }

// current is the child to use, or why there is none.
func (r *Receiver) current() (*child, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.users == 0:
		return nil, fmt.Errorf("%w: no user registered", ErrUnavailable)
	case r.child == nil && r.lastErr != nil:
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, r.lastErr)
	case r.child == nil:
		return nil, fmt.Errorf("%w: not started", ErrUnavailable)
	}
	return r.child, nil
}

// InputStream is the current child's stdin, or a writer that fails with
// the reason there is none.
func (r *Receiver) InputStream() io.WriteCloser {
	c, err := r.current()
	if err != nil {
		return errStream{err}
	}
	return c.stdin
}

// OutputStream is the current child's stdout, or a reader that fails with
// the reason there is none. Read answers through Lines, not this.
func (r *Receiver) OutputStream() io.ReadCloser {
	c, err := r.current()
	if err != nil {
		return errStream{err}
	}
	return c.stdout
}

// Lines is the persistent line reader of the current child's stdout.
func (r *Receiver) Lines() *LineReader {
	c, err := r.current()
	if err != nil {
		return failedLineReader(err)
	}
	return c.lines
}

// Pid is the process id of the current child; 0 when there is none.
func (r *Receiver) Pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.child == nil {
		return 0
	}
	return r.child.pid
}

// Running reports whether there is a child that can take a request now.
func (r *Receiver) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.child != nil && r.child.usable() == nil
}

// Users is the number of registered users.
func (r *Receiver) Users() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users
}

// Command is the argv the next start will run.
func (r *Receiver) Command() ([]string, error) {
	if len(r.opts.Command) > 0 {
		return r.opts.Command, nil
	}
	if env := strings.Fields(os.Getenv(EnvReceiver)); len(env) > 0 {
		return env, nil
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "receiver")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && beside != exe {
			return []string{beside}, nil
		}
	}
	if p, err := exec.LookPath("receiver"); err == nil {
		return []string{p}, nil
	}
	return nil, fmt.Errorf("runner: no receiver command: set %s, put `receiver` on PATH or beside %s, or set Options.Command", EnvReceiver, os.Args[0])
}

// child is one receiver process.
type child struct {
	pid    int
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	lines  *LineReader
	log    *slog.Logger

	exited  chan struct{} // closed after Wait returned
	waitErr error         // set before exited closes
	stderr  *tail         // last lines of stderr, for error messages
	errDone chan struct{} // closed when stderr has ended
}

// start runs the child and waits for its ready line.
func (r *Receiver) start() (*child, error) {
	argv, err := r.Command()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.opts.Dir
	if len(r.opts.Env) > 0 {
		cmd.Env = append(os.Environ(), r.opts.Env...)
	}
	// Its own process group, so stopping it also stops what it started
	// (a wrapper shell, ssh's helpers, a hung exec's children).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("runner: starting %s: %w", argv[0], err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("runner: starting %s: %w", argv[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("runner: starting %s: %w", argv[0], err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("runner: starting %q: %w", strings.Join(argv, " "), err)
	}
	closeAll(inR, outW, errW) // the child's ends

	c := &child{
		pid:     cmd.Process.Pid,
		cmd:     cmd,
		stdin:   inW,
		stdout:  outR,
		lines:   NewLineReader(outR, r.opts.MaxLine),
		log:     r.log.With("pid", cmd.Process.Pid),
		exited:  make(chan struct{}),
		stderr:  &tail{max: 10},
		errDone: make(chan struct{}),
	}
	go c.logStderr(errR)
	go func() {
		// The pipes are ours (*os.File), so Wait only reaps: it neither
		// closes them nor waits for anyone holding them open.
		c.waitErr = cmd.Wait()
		close(c.exited)
		c.log.Info("receiver exited", "status", exitStatus(c.waitErr))
	}()
	c.log.Info("receiver started", "command", strings.Join(argv, " "))

	if r.opts.NoReady {
		return c, nil
	}
	if err := c.awaitReady(r.opts.StartTimeout); err != nil {
		c.kill()
		return nil, fmt.Errorf("runner: starting %q: %w", strings.Join(argv, " "), err)
	}
	return c, nil
}

// awaitReady reads lines until the ready line: our JSON banner
// ({"ready":true,...}) or Puppet's notice ("Notice: ..."). Other lines
// before it (warnings) are logged and dropped.
func (c *child) awaitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		line, err := c.lines.ReadLine(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("no ready line within %s%s", timeout, c.stderr.suffix())
			}
			// The output ended: give Wait a moment to say why.
			select {
			case <-c.exited:
				c.drainStderr()
				return fmt.Errorf("exited before it was ready (%s)%s", exitStatus(c.waitErr), c.stderr.suffix())
			case <-time.After(time.Second):
				return fmt.Errorf("output ended before it was ready: %w%s", err, c.stderr.suffix())
			}
		}
		if isReadyLine(line) {
			return nil
		}
		c.log.Info("receiver output before ready", "line", string(line))
	}
}

// isReadyLine recognises a ready line.
func isReadyLine(raw []byte) bool {
	line := bytes.TrimSpace(stripANSI(raw))
	if len(line) > 0 && line[0] == '{' {
		var banner struct {
			Ready bool `json:"ready"`
		}
		return json.Unmarshal(line, &banner) == nil && banner.Ready
	}
	// Puppet's receiver logs a notice once it is set up and then lowers its
	// log level to warning, so a notice at start means it is listening.
	// (A request written a little early would only wait in the pipe.)
	return bytes.HasPrefix(line, []byte("Notice:"))
}

// usable is nil while the child can take a request.
func (c *child) usable() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%w (%s)", ErrReceiverDied, exitStatus(c.waitErr))
	default:
	}
	return c.lines.Err()
}

// stop closes stdin, waits up to grace for the child to exit, then kills
// its process group; it returns once the child is reaped.
func (c *child) stop(grace time.Duration) error {
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(grace):
		c.log.Warn("receiver did not exit after its input closed; killing it", "grace", grace.String())
		c.kill()
		return fmt.Errorf("runner: receiver %d did not exit within %s of closing its input; killed", c.pid, grace)
	}
	c.release()
	var ee *exec.ExitError
	if c.waitErr != nil && !errors.As(c.waitErr, &ee) {
		return fmt.Errorf("runner: waiting for receiver %d: %w", c.pid, c.waitErr)
	}
	if ee != nil && !ee.Success() {
		return fmt.Errorf("runner: receiver %d exited with %s%s", c.pid, exitStatus(c.waitErr), c.stderr.suffix())
	}
	return nil
}

// kill ends the child's process group at once and reaps it.
func (c *child) kill() {
	c.lines.Break(fmt.Errorf("%w: replaced", ErrReceiverDied))
	c.stdin.Close()
	_ = syscall.Kill(-c.pid, syscall.SIGKILL) // its process group
	_ = syscall.Kill(c.pid, syscall.SIGKILL)  // and itself, should it have left the group
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		// A process stuck in the kernel; Wait will reap it when it can.
		c.log.Error("receiver did not die after SIGKILL")
	}
	c.release()
}

// release closes our end of the child's stdout once its reader has drained
// it, and lets the stderr logger finish, so nothing of ours outlives the
// child and everything it said is logged.
func (c *child) release() {
	c.drainStderr()
	select {
	case <-c.lines.Done():
	case <-time.After(time.Second):
		// Unread lines are holding the reader up; nobody will read them.
		c.lines.Break(fmt.Errorf("%w: stopped", ErrReceiverDied))
	}
	c.stdout.Close()
}

// drainStderr gives the stderr logger a moment to take in the last lines
// of a child that has exited, for an error message that quotes them.
func (c *child) drainStderr() {
	select {
	case <-c.errDone:
	case <-time.After(time.Second):
	}
}

func (c *child) logStderr(r *os.File) {
	defer close(c.errDone)
	defer r.Close()
	lr := NewLineReader(r, 1<<20)
	for {
		line, err := lr.ReadLine(context.Background())
		if err != nil {
			return
		}
		text := string(stripANSI(line))
		c.stderr.add(text)
		c.log.Log(context.Background(), stderrLevel(text), "receiver stderr", "line", text)
	}
}

// stderrLevel maps Puppet-style log prefixes to slog levels.
func stderrLevel(line string) slog.Level {
	switch {
	case strings.HasPrefix(line, "Error:"), strings.HasPrefix(line, "Critical:"),
		strings.HasPrefix(line, "Alert:"), strings.HasPrefix(line, "Emergency:"):
		return slog.LevelError
	case strings.HasPrefix(line, "Warning:"):
		return slog.LevelWarn
	case strings.HasPrefix(line, "Debug:"):
		return slog.LevelDebug
	default:
		return slog.LevelInfo
	}
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// tail keeps the last lines of a stream.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tail) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == t.max {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:t.max-1]
	}
	t.lines = append(t.lines, s)
}

// suffix is ": stderr: ..." with the kept lines, or "".
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return "; stderr: " + strings.Join(t.lines, " | ")
}

// errStream stands in for the streams of a child that is not there.
type errStream struct{ err error }

func (e errStream) Write([]byte) (int, error) { return 0, e.err }
func (e errStream) Read([]byte) (int, error)  { return 0, e.err }
func (e errStream) Close() error              { return nil }
