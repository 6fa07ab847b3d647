package runner

import (
	"bufio"
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
	// DefaultMaxRequest is the receiver's own default request limit
	// (its --max-line): the longest request line Apply sends.
	DefaultMaxRequest = 16 << 20
	// DefaultMaxStderrLine bounds one logged line of the child's stderr;
	// a longer one is logged cut short, and logging goes on.
	DefaultMaxStderrLine = 64 << 10
)

// answerFactor is how much longer than its request an answer may be: it
// repeats the title (reference, event message) and the values (desired,
// message) a few times, and escapes some characters JSON carried raw
// (U+2028 takes 6 bytes instead of 3). A request of MaxRequest bytes thus
// always has a readable answer. (YAML aliases can repeat a value more
// often than that; such an answer is refused as too long.)
const answerFactor = 8

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
	// (DefaultStartTimeout when 0; Puppet's receiver takes seconds). The
	// context of RegisterContext or of an apply that restarts the child
	// bounds it too.
	StartTimeout time.Duration
	// StopTimeout is the grace period between closing the child's stdin
	// and killing it (DefaultStopTimeout when 0).
	StopTimeout time.Duration
	// NoReady starts the child without waiting for a ready line, for a
	// receiver that prints none.
	NoReady bool
	// MaxRequest is the longest request line the child reads: the
	// receiver's --max-line (DefaultMaxRequest when 0, the receiver's
	// default). Apply refuses a longer request before sending it.
	MaxRequest int
	// MaxLine bounds one output line; 0 derives it from MaxRequest
	// (8 times as long: 128 MiB by default), so that every request the
	// child reads has an answer the runner reads.
	MaxLine int
	// Logger receives the child's stderr, line by line at the level its
	// prefix says (Error:, Warning:, Notice: ...), and, at debug level,
	// the child's starts and exits. Nil means slog.Default(). Lines over
	// DefaultMaxStderrLine are logged cut short; the error of a start that
	// failed quotes the last stderr lines.
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
//
// Every method that waits has a form taking a context (RegisterContext,
// UnregisterContext, LockApplyContext); Apply and Check use those. The
// forms without one keep the shape engines written for Puppet's receiver
// use, and wait as long as it takes (a start is still bounded by
// StartTimeout, a stop by StopTimeout).
type Receiver struct {
	opts Options
	log  *slog.Logger

	applyLock chan struct{} // a token held from LockApply to UnlockApply
	life      chan struct{} // a token held while starting or stopping the child

	mu      sync.Mutex // guards users, child, lastErr, declared; never held while waiting
	users   int
	child   *child
	lastErr error // why there is no child, when users > 0
	// declared is the last declaration the child did not refuse (a
	// request line without its id, see Declare), sent again to every
	// child that replaces it; nil when none is in force.
	declared []byte
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
	if opts.MaxRequest <= 0 {
		opts.MaxRequest = DefaultMaxRequest
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = max(DefaultMaxLine, answerFactor*opts.MaxRequest)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Receiver{
		opts:      opts,
		log:       log.With("component", "pippet-runner"),
		applyLock: make(chan struct{}, 1),
		life:      make(chan struct{}, 1),
	}
}

// acquire takes the token of a one-slot channel, or gives up when ctx is
// done (at once when it is done already).
func acquire(ctx context.Context, token chan struct{}) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case token <- struct{}{}:
		return nil
	default:
	}
	select {
	case token <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func release(token chan struct{}) { <-token }

func (r *Receiver) maxRequest() int { return r.opts.MaxRequest }

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
// failed start is returned and not counted. It is RegisterContext without
// a deadline of its own (the start is bounded by StartTimeout).
func (r *Receiver) Register() error { return r.RegisterContext(context.Background()) }

// RegisterContext is Register giving up when ctx is done: while another
// user's start or stop is in progress, or while the child starts (it is
// then killed, and the error wraps ctx.Err()).
func (r *Receiver) RegisterContext(ctx context.Context) error {
	if err := acquire(ctx, r.life); err != nil {
		return fmt.Errorf("runner: register: %w", err)
	}
	defer release(r.life)
	r.mu.Lock()
	need := r.users == 0 || r.child == nil
	r.mu.Unlock()
	if need {
		c, err := r.startDeclared(ctx)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.child, r.lastErr = c, nil
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.users++
	r.mu.Unlock()
	return nil
}

// Unregister counts one user less and stops the child after the last:
// its stdin is closed (our receiver and Puppet's finish the request in
// progress and exit), and it is killed if it has not exited within
// StopTimeout. Unregistering more often than registering is an error.
func (r *Receiver) Unregister() error { return r.UnregisterContext(context.Background()) }

// UnregisterContext is Unregister with the grace period cut short when
// ctx is done: the child is then killed at once (and always reaped). A
// ctx done while another start or stop is in progress leaves the count as
// it was and returns an error wrapping ctx.Err().
func (r *Receiver) UnregisterContext(ctx context.Context) error {
	if err := acquire(ctx, r.life); err != nil {
		return fmt.Errorf("runner: unregister: %w", err)
	}
	defer release(r.life)
	r.mu.Lock()
	if r.users == 0 {
		r.mu.Unlock()
		return errors.New("runner: Unregister without a matching Register")
	}
	r.users--
	if r.users > 0 {
		r.mu.Unlock()
		return nil
	}
	c := r.child
	r.child = nil
	r.lastErr = nil
	r.declared = nil // the users' run ended with them
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	if why := c.usable(); why != nil {
		// Already dead or broken, and reported by the apply that found
		// out: no grace period for it.
		c.log.Debug("stopping a broken receiver", "reason", why.Error())
		c.kill()
		return nil
	}
	return c.stop(ctx, r.opts.StopTimeout)
}

// LockApply takes the apply lock and makes sure a working child is there:
// one that exited or was marked broken is replaced now (its start bounded
// by StartTimeout). When that fails, or nobody is registered, InputStream
// and Lines report why and Apply returns an error wrapping ErrUnavailable.
// It is LockApplyContext without a deadline.
func (r *Receiver) LockApply() { _ = r.LockApplyContext(context.Background()) }

// LockApplyContext is LockApply giving up when ctx is done, while waiting
// for the lock (another apply) or for the replacement of a dead child (it
// is then killed). It returns an error wrapping ctx.Err() only, and then
// does not hold the lock; a replacement that fails otherwise is reported
// by the streams, as with LockApply.
func (r *Receiver) LockApplyContext(ctx context.Context) error {
	if err := acquire(ctx, r.applyLock); err != nil {
		return err
	}
	if err := r.ensureChild(ctx); err != nil {
		release(r.applyLock)
		return err
	}
	return nil
}

// ensureChild replaces a child that died or was broken, when there are
// users. Only an end of ctx is returned.
func (r *Receiver) ensureChild(ctx context.Context) error {
	ready := func() bool {
		return r.users == 0 || (r.child != nil && r.child.usable() == nil)
	}
	r.mu.Lock()
	ok := ready()
	r.mu.Unlock()
	if ok {
		return nil
	}
	if err := acquire(ctx, r.life); err != nil {
		return err
	}
	defer release(r.life)
	r.mu.Lock()
	if ready() {
		r.mu.Unlock()
		return nil
	}
	old := r.child
	r.child = nil
	r.mu.Unlock()
	if old != nil {
		r.log.Warn("replacing receiver", "pid", old.pid, "reason", old.usable().Error())
		old.kill()
	}
	c, err := r.startDeclared(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.lastErr = err
		if ctx.Err() != nil {
			return fmt.Errorf("replacing the receiver: %w", err)
		}
		return nil
	}
	r.child, r.lastErr = c, nil
	return nil
}

// UnlockApply releases the apply lock.
func (r *Receiver) UnlockApply() { release(r.applyLock) }

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

// stderrTail is the current child's kept stderr lines, nil when there is
// no child.
func (r *Receiver) stderrTail() *tail {
	c, err := r.current()
	if err != nil {
		return nil
	}
	return c.stderr
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
	// protocol is the level the ready line announced (see ProtocolLevel).
	protocol int
}

// start runs the child and waits for its ready line, at most
// StartTimeout and until ctx is done.
func (r *Receiver) start(ctx context.Context) (*child, error) {
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
		c.log.Debug("receiver exited", "status", exitStatus(c.waitErr))
	}()
	c.log.Debug("receiver started", "command", strings.Join(argv, " "))

	if r.opts.NoReady {
		return c, nil
	}
	if err := c.awaitReady(ctx, r.opts.StartTimeout); err != nil {
		c.kill()
		return nil, fmt.Errorf("runner: starting %q: %w", strings.Join(argv, " "), err)
	}
	return c, nil
}

// awaitReady reads lines until the ready line: our JSON banner
// ({"ready":true,...}) or Puppet's notice ("Notice: ..."). Other lines
// before it (warnings) are logged and dropped.
func (c *child) awaitReady(parent context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	for {
		line, err := c.lines.ReadLine(ctx)
		if err != nil {
			if perr := parent.Err(); perr != nil {
				return fmt.Errorf("gave up waiting for the ready line: %w%s", perr, c.stderr.suffix())
			}
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
			case <-parent.Done():
				return fmt.Errorf("gave up waiting for the ready line: %w%s", parent.Err(), c.stderr.suffix())
			}
		}
		if isReadyLine(line) {
			c.protocol = bannerProtocol(line)
			return nil
		}
		c.log.Debug("receiver output before ready", "line", clip(string(line), DefaultMaxStderrLine))
	}
}

// bannerProtocol is the protocol level a ready line announces: our
// banner's "protocol" member, 0 for Puppet's notice (no verbs).
func bannerProtocol(raw []byte) int {
	line := bytes.TrimSpace(stripANSI(raw))
	var banner struct {
		Protocol int `json:"protocol"`
	}
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &banner) != nil {
		return 0
	}
	return banner.Protocol
}

// ProtocolLevel is the protocol level the current child announced in its
// ready line: 2 or more for a receiver that answers the read verbs (find,
// search, describe), 1 for an older one of ours, 0 for Puppet's receiver,
// a child started with Options.NoReady, or no child. Call it with the
// apply lock held (Find, Search and Describe do).
func (r *Receiver) ProtocolLevel() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.child == nil {
		return 0
	}
	return r.child.protocol
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

// stop closes stdin, waits up to grace (or until ctx is done) for the
// child to exit, then kills its process group; it returns once the child
// is reaped.
func (c *child) stop(ctx context.Context, grace time.Duration) error {
	c.stdin.Close()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		c.log.Warn("receiver did not exit after its input closed; killing it", "grace", grace.String())
		c.kill()
		return fmt.Errorf("runner: receiver %d did not exit within %s of closing its input; killed", c.pid, grace)
	case <-ctx.Done():
		c.kill()
		return fmt.Errorf("runner: receiver %d killed before the end of its grace period: %w", c.pid, ctx.Err())
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

// logStderr logs the child's stderr line by line until it ends. A line
// longer than DefaultMaxStderrLine is logged cut short (with its length)
// and the rest of it skipped: logging goes on, and the pipe keeps being
// drained so the child never blocks on it.
func (c *child) logStderr(r *os.File) {
	defer close(c.errDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, n, err := readCapped(br, DefaultMaxStderrLine)
		if n > 0 || err == nil {
			text := string(stripANSI(trimEOL(line)))
			if n > len(line) {
				text = fmt.Sprintf("%s...(line of %d bytes cut short)", strings.ToValidUTF8(text, "\uFFFD"), n)
			}
			c.stderr.add(clip(text, 1024))
			c.log.Log(context.Background(), stderrLevel(text), "receiver stderr", "line", text)
		}
		if err != nil {
			return
		}
	}
}

// readCapped reads one line, keeping at most max bytes of it (without its
// newline); n is the line's whole length.
func readCapped(br *bufio.Reader, max int) (line []byte, n int, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if err == nil {
			frag = frag[:len(frag)-1]
		}
		n += len(frag)
		if room := max - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, n, err
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
	added uint64 // lines added since the child started
}

func (t *tail) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == t.max {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:t.max-1]
	}
	t.lines = append(t.lines, s)
	t.added++
}

// mark is how many lines were added so far, for since.
func (t *tail) mark() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
}

// since returns the kept lines added after mark m.
func (t *tail) since(m uint64) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(t.added-m, uint64(len(t.lines)))
	return append([]string(nil), t.lines[uint64(len(t.lines))-n:]...)
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
