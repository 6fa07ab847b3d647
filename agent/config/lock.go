package config

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	json "github.com/goccy/go-json"
)

// LockedError is Lock's answer when another run holds the lock.
type LockedError struct {
	Path string
	PID  int // 0 when the file does not say (a lock being written)
	// TimedOut: LockWait waited maxwaitforlock for it in vain.
	TimedOut bool
}

func (e *LockedError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("the maxwaitforlock timeout has been exceeded waiting for %s (held by pid %d)", e.Path, e.PID)
	}
	if e.PID == 0 {
		return fmt.Sprintf("another run holds the lock %s", e.Path)
	}
	return fmt.Sprintf("run of Puppet configuration client already in progress (pid %d holds %s)", e.PID, e.Path)
}

// freshLock is how long a lock file without a PID (a Puppet process
// between creating it and writing its PID) counts as held.
const freshLock = 5 * time.Second

// Lock takes the run lock at path (agent_catalog_run.lock): a file holding
// this process's PID, as Puppet's Pidlock writes it, so a Puppet agent and
// receiver agent never run at once. unlock removes it.
//
// A lock whose holder is gone is taken over, as Puppet does: the PID is
// dead, or it is a live process that is neither Puppet nor this program
// (the PID was reused). Otherwise the error is a *LockedError with the
// holder's PID.
//
// The file appears complete (PID written) and already flock(2)ed by its
// owner: it is written to a temporary file and linked into place, which
// fails if the lock exists, never following a symbolic link. Two processes
// that find the same stale lock serialize on its flock, so only one of
// them removes it.
func Lock(path string) (unlock func(), err error) {
	if path == "" {
		return nil, errors.New("run lock: no path")
	}
	dir := filepath.Dir(path)
	for attempt := 0; attempt < 10; attempt++ {
		f, err := createLocked(path, []byte(strconv.Itoa(os.Getpid())))
		if err == nil {
			removeOldTemps(path)
			restore := nameForPuppet()
			return func() { releaseLock(path, f); restore() }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("run lock %s: %w", path, err)
		}
		held, err := checkStale(path)
		if err != nil {
			return nil, err
		}
		if held != nil {
			return nil, held
		}
		// the stale lock was removed (by us or another process): retry.
	}
	return nil, fmt.Errorf("run lock %s: could not take it (it keeps reappearing in %s)", path, dir)
}

// LockWait takes the run lock as Puppet's agent does with its waitforlock
// and maxwaitforlock settings: while another run holds it, wait every
// (waitforlock) and try again, for at most max (maxwaitforlock; a
// negative max is unlimited), calling waiting before each wait (Puppet
// logs "Will try again in N seconds."). every under a second does not
// wait: the *LockedError comes at once, as Puppet's "already in progress;
// skipping". After max, the *LockedError has TimedOut. ctx ends the wait.
func LockWait(ctx context.Context, path string, every, max time.Duration, waiting func(*LockedError)) (unlock func(), err error) {
	var deadline time.Time
	for {
		unlock, err := Lock(path)
		var le *LockedError
		if err == nil || !errors.As(err, &le) || every < time.Second {
			return unlock, err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(max)
		}
		if max >= 0 && !time.Now().Before(deadline) {
			le.TimedOut = true
			return nil, le
		}
		if waiting != nil {
			waiting(le)
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the run lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
}

// createLocked writes data to a new temporary file next to path, takes its
// flock, and links it at path (EEXIST when path exists, even as a
// symbolic link). The returned file keeps the flock.
func createLocked(path string, data []byte) (*os.File, error) {
	tmp, f, err := writeTemp(path, data, 0o644)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Link(tmp, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// removeOldTemps removes what writeTemp left next to path more than a
// minute ago (a process killed between writing and linking).
func removeOldTemps(path string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".????????????????"))
	for _, p := range old {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > time.Minute {
			os.Remove(p)
		}
	}
}

// writeTemp writes data to a new file (O_EXCL, a random name) in path's
// directory, synced; the file is returned open.
func writeTemp(path string, data []byte, mode os.FileMode) (string, *os.File, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", nil, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, mode)
	if err != nil {
		return "", nil, err
	}
	if _, err := f.Write(data); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return "", nil, err
	}
	return tmp, f, nil
}

// releaseLock removes the lock if it is still ours (the same file), then
// drops the flock.
func releaseLock(path string, f *os.File) {
	defer f.Close()
	mine, err := f.Stat()
	if err != nil {
		return
	}
	if cur, err := os.Lstat(path); err == nil && os.SameFile(mine, cur) {
		os.Remove(path)
	}
}

// checkStale looks at an existing lock: held (a *LockedError), or stale and
// removed (nil, nil).
func checkStale(path string) (*LockedError, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // gone meanwhile
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("run lock %s is a symbolic link: refusing it (remove it by hand)", path)
		}
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("run lock %s is not a regular file", path)
	}
	// A receiver holding the lock holds its flock until it ends; another
	// receiver removing this same stale lock holds it for a moment.
	for try := 0; ; try++ {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		pid := readPID(f)
		if try >= 100 || pid != 0 && holderAlive(pid) {
			return &LockedError{Path: path, PID: pid}, nil
		}
		if cur, err := os.Lstat(path); err != nil || !os.SameFile(st, cur) {
			return nil, nil // removed meanwhile
		}
		time.Sleep(10 * time.Millisecond)
	}
	// We hold the flock of this file: no other receiver removes it now.
	// Is it still the file at path?
	if cur, err := os.Lstat(path); err != nil || !os.SameFile(st, cur) {
		return nil, nil
	}
	pid := readPID(f)
	if pid == 0 && time.Since(st.ModTime()) < freshLock {
		return &LockedError{Path: path}, nil
	}
	if pid != 0 && holderAlive(pid) {
		return &LockedError{Path: path, PID: pid}, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing the stale run lock %s: %w", path, err)
	}
	return nil, nil
}

// readPID reads a lock's PID (Puppet writes it without a newline); 0 when
// the content is not a PID.
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// holderAlive says whether pid is a live process that may hold the lock:
// Puppet (a ruby running puppet, or a puppet* command, as Puppet's Pidlock
// checks) or this same program. Another process has reused the PID.
func holderAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	proc := "/proc/" + strconv.Itoa(pid)
	comm, err := os.ReadFile(proc + "/comm")
	if err != nil {
		// No /proc, or not ours to read: alive is what we know.
		return !errors.Is(err, os.ErrNotExist)
	}
	name := strings.TrimSpace(string(comm))
	args, _ := os.ReadFile(proc + "/cmdline")
	switch {
	case puppetName.MatchString(name), strings.Contains(name, "ruby") && bytes.Contains(args, []byte("puppet")):
		return true
	case name == "receiver":
		return true
	}
	self, err1 := os.Readlink("/proc/self/exe")
	exe, err2 := os.Readlink(proc + "/exe")
	return err1 == nil && err2 == nil && self == exe
}

// puppetName is the process name Puppet's Pidlock accepts as a lock
// holder (besides ruby running puppet).
var puppetName = regexp.MustCompile(`puppet(-.*)?$`)

// nameForPuppet makes this process's name (comm, what ps shows) one that a
// Puppet agent's Pidlock recognises, while it holds the run lock: Puppet
// takes a lock held by a live process of any other name for a stale one
// and would run at the same time. "receiver" becomes "receiver-puppet"
// (the 15 bytes the kernel keeps: the name is cut to 8 first). The
// returned func puts the name back. Without /proc it does nothing.
func nameForPuppet() (restore func()) {
	const comm = "/proc/self/comm"
	b, err := os.ReadFile(comm)
	if err != nil {
		return func() {}
	}
	orig := strings.TrimSuffix(string(b), "\n")
	if puppetName.MatchString(orig) {
		return func() {}
	}
	short := orig
	if len(short) > 8 {
		short = short[:8]
	}
	if os.WriteFile(comm, []byte(short+"-puppet"), 0) != nil {
		return func() {}
	}
	return func() { os.WriteFile(comm, []byte(orig), 0) }
}

// disabledLock is agent_disabled.lock's content.
type disabledLock struct {
	Message *string `json:"disabled_message,omitempty"`
}

// Disable disables agent runs as `puppet agent --disable MESSAGE` does: it
// writes agent_disabled.lock, {"disabled_message":"MESSAGE"} (message ""
// is Puppet's "reason not specified"). Already disabled, it leaves the
// file and its first message alone, as Puppet. The file is written whole
// (a temporary file, synced, linked into place), never through a
// symbolic link.
func Disable(path, message string) error {
	if message == "" {
		message = DefaultDisableMessage
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(disabledLock{Message: &message}); err != nil {
		return err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	removeOldTemps(path)
	tmp, f, err := writeTemp(path, b, 0o644)
	if err != nil {
		return fmt.Errorf("disabling: %w", err)
	}
	f.Close()
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil
		}
		return fmt.Errorf("disabling: %w", err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// Enable removes agent_disabled.lock (`puppet agent --enable`); not
// disabled is no error.
func Enable(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("enabling: %w", err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// maxDisabledLock bounds what Disabled reads of the file.
const maxDisabledLock = 1 << 20

// Disabled says whether agent runs are disabled (agent_disabled.lock
// exists) and with which message. A file that is not Puppet's JSON still
// disables, with message "" (Puppet warns and runs nothing either).
func Disabled(path string) (message string, disabled bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", false, nil
	case errors.Is(err, syscall.ELOOP):
		// A symbolic link in its place still says "disabled"; its target
		// is not read.
		return "", true, nil
	case err != nil:
		return "", false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return "", true, nil
	}
	b := make([]byte, maxDisabledLock)
	n, _ := f.Read(b)
	var d disabledLock
	if json.Unmarshal(b[:n], &d) == nil && d.Message != nil {
		return *d.Message, true, nil
	}
	return "", true, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
