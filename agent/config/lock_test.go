package config

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be a second process: CONFIG_LOCK_HELPER
// "hold" takes the lock at CONFIG_LOCK_PATH, says "locked", and holds it
// until its stdin closes; "race" waits for CONFIG_LOCK_GO to exist, tries
// once, says "won" or "lost PID", and a winner holds the lock 2 s.
func TestMain(m *testing.M) {
	switch os.Getenv("CONFIG_LOCK_HELPER") {
	case "hold":
		unlock, err := Lock(os.Getenv("CONFIG_LOCK_PATH"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		unlock()
		os.Exit(0)
	case "race":
		for {
			if _, err := os.Stat(os.Getenv("CONFIG_LOCK_GO")); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		unlock, err := Lock(os.Getenv("CONFIG_LOCK_PATH"))
		var le *LockedError
		switch {
		case err == nil:
			fmt.Println("won")
			time.Sleep(2 * time.Second)
			unlock()
		case errors.As(err, &le):
			fmt.Println("lost", le.PID)
		default:
			fmt.Println("error", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder is another process holding the lock at path.
type holder struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
}

func hold(t *testing.T, path string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CONFIG_LOCK_HELPER=hold", "CONFIG_LOCK_PATH="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q", line)
	}
	h := &holder{cmd: cmd, stdin: in}
	t.Cleanup(func() { h.stdin.Close(); h.cmd.Process.Kill(); h.cmd.Wait() })
	return h
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent_catalog_run.lock")
	unlock, err := Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock holds %q, want the PID %d (no newline, as Puppet)", got, os.Getpid())
	}
	// Not re-entrant: a second run in this process is refused too.
	var le *LockedError
	if _, err := Lock(p); !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Errorf("second Lock: %v", err)
	}
	unlock()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("unlock left the file: %v", err)
	}
	unlock, err = Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if _, err := Lock(filepath.Join(t.TempDir(), "missing", "x.lock")); err == nil {
		t.Error("a lock in a missing directory: no error")
	}
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.lock")
	h := hold(t, p)
	_, err := Lock(p)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != h.cmd.Process.Pid {
		t.Fatalf("Lock while held: %v, want the holder's PID %d", err, h.cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(h.cmd.Process.Pid)) || !strings.Contains(err.Error(), p) {
		t.Errorf("message %q lacks the PID or the path", err)
	}
	// The holder is killed (no chance to unlock): its lock is stale.
	h.cmd.Process.Signal(syscall.SIGKILL)
	h.cmd.Wait()
	if got := readFile(t, p); got != strconv.Itoa(h.cmd.Process.Pid) {
		t.Fatalf("the killed holder's lock holds %q", got)
	}
	unlock, err := Lock(p)
	if err != nil {
		t.Fatalf("a dead holder's lock is not taken over: %v", err)
	}
	defer unlock()
	if got := readFile(t, p); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("taken-over lock holds %q", got)
	}
}

func TestLockHolderReleases(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.lock")
	h := hold(t, p)
	h.stdin.Close()
	h.cmd.Wait()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("the holder's unlock left the file: %v", err)
	}
}

// deadPID is the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestLockStale(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	old := time.Now().Add(-time.Minute)
	cases := []struct {
		name    string
		content string
		mtime   time.Time
		taken   bool
		pid     int
	}{
		{"dead PID", strconv.Itoa(deadPID(t)), time.Now(), true, 0},
		{"PID reused by another program", strconv.Itoa(sleeper.Process.Pid), time.Now(), true, 0},
		{"not a PID, old", "garbage", old, true, 0},
		{"empty, old", "", old, true, 0},
		{"empty, being written", "", time.Now(), false, 0},
		{"PID with a newline", strconv.Itoa(deadPID(t)) + "\n", time.Now(), true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "run.lock")
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(p, c.mtime, c.mtime)
			unlock, err := Lock(p)
			if c.taken {
				if err != nil {
					t.Fatalf("not taken over: %v", err)
				}
				unlock()
				return
			}
			var le *LockedError
			if !errors.As(err, &le) || le.PID != c.pid {
				t.Fatalf("Lock: %v, want locked by %d", err, c.pid)
			}
		})
	}
}

// TestLockSymlink: a symbolic link where the lock goes is neither followed
// nor replaced.
func TestLockSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{target, filepath.Join(dir, "nonexistent")} {
		p := filepath.Join(dir, "run.lock")
		os.Remove(p)
		if err := os.Symlink(dest, p); err != nil {
			t.Fatal(err)
		}
		if _, err := Lock(p); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("symlink to %s: %v", dest, err)
		}
		if got := readFile(t, target); got != "precious" {
			t.Errorf("target now %q", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "nonexistent")); err == nil {
			t.Error("the dangling link's target was created")
		}
	}
}

// TestLockRace: eight processes find the same stale lock at once; one
// runs, the others are told its PID.
func TestLockRace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.lock")
	if err := os.WriteFile(p, []byte(strconv.Itoa(deadPID(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(dir, "go")
	const n = 8
	outs := make([]string, n)
	var wg sync.WaitGroup
	var cmds []*exec.Cmd
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CONFIG_LOCK_HELPER=race", "CONFIG_LOCK_PATH="+p, "CONFIG_LOCK_GO="+goFile)
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			line, _ := bufio.NewReader(out).ReadString('\n')
			outs[i] = strings.TrimSpace(line)
		}(i)
	}
	time.Sleep(200 * time.Millisecond) // all started and polling
	os.WriteFile(goFile, nil, 0o644)
	wg.Wait()
	winner := 0
	for _, cmd := range cmds {
		cmd.Wait()
	}
	for i, o := range outs {
		switch {
		case o == "won":
			winner = cmds[i].Process.Pid
		case strings.HasPrefix(o, "lost "):
		default:
			t.Errorf("helper %d: %q", i, o)
		}
	}
	wins := 0
	for i, o := range outs {
		if o == "won" {
			wins++
		} else if o != "lost "+strconv.Itoa(winner) {
			t.Errorf("helper %d: %q, want lost %d", i, o, winner)
		}
	}
	if wins != 1 {
		t.Errorf("%d winners: %q", wins, outs)
	}
}

func TestDisable(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "agent_disabled.lock")
	if msg, dis, err := Disabled(p); err != nil || dis || msg != "" {
		t.Fatalf("not disabled yet: %q %v %v", msg, dis, err)
	}
	if err := Disable(p, `maint "x" é <b>`); err != nil {
		t.Fatal(err)
	}
	// Puppet's JSON: compact, non-ASCII and <> as they are.
	if got := readFile(t, p); got != `{"disabled_message":"maint \"x\" é <b>"}` {
		t.Errorf("file %s", got)
	}
	if msg, dis, err := Disabled(p); err != nil || !dis || msg != `maint "x" é <b>` {
		t.Errorf("Disabled: %q %v %v", msg, dis, err)
	}
	// Disabling again keeps the first message, as Puppet.
	if err := Disable(p, "second"); err != nil {
		t.Fatal(err)
	}
	if msg, _, _ := Disabled(p); msg != `maint "x" é <b>` {
		t.Errorf("second disable changed the message to %q", msg)
	}
	if err := Enable(p); err != nil {
		t.Fatal(err)
	}
	if _, dis, _ := Disabled(p); dis {
		t.Error("still disabled after Enable")
	}
	if err := Enable(p); err != nil {
		t.Errorf("Enable when enabled: %v", err)
	}
	if err := Disable(p, ""); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != `{"disabled_message":"reason not specified"}` {
		t.Errorf("default message: %s", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestDisabledOddFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content, msg string
	}{
		{"empty", "", ""},
		{"not JSON", "maintenance", ""},
		{"JSON without a message", "{}", ""},
		{"Puppet's", `{"disabled_message":"by puppet"}`, "by puppet"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte(c.content), 0o644)
		if msg, dis, err := Disabled(p); err != nil || !dis || msg != c.msg {
			t.Errorf("%s: %q %v %v", c.name, msg, dis, err)
		}
	}
	// A symbolic link: disabled, its target not read; Disable does not
	// write through it.
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte(`{"disabled_message":"secret"}`), 0o600)
	link := filepath.Join(dir, "link.lock")
	os.Symlink(secret, link)
	if msg, dis, err := Disabled(link); err != nil || !dis || msg != "" {
		t.Errorf("symlink: %q %v %v", msg, dis, err)
	}
	if err := Disable(link, "x"); err != nil {
		t.Errorf("Disable over a symlink: %v", err)
	}
	if got := readFile(t, secret); got != `{"disabled_message":"secret"}` {
		t.Errorf("written through the link: %s", got)
	}
}

// TestDisabledConcurrent: processes disabling at once leave one whole
// file, never a torn one.
func TestDisableConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent_disabled.lock")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := Disable(p, fmt.Sprintf("message %d", i)); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	msg, dis, err := Disabled(p)
	if err != nil || !dis || !strings.HasPrefix(msg, "message ") {
		t.Errorf("%q %v %v", msg, dis, err)
	}
}

// TestLockWait: waitforlock/maxwaitforlock as Puppet's agent, against a
// lock held by another process.
func TestLockWait(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.lock")
	h := hold(t, p)
	ctx := context.Background()

	// waitforlock 0: no wait.
	start := time.Now()
	_, err := LockWait(ctx, p, 0, time.Minute, func(*LockedError) { t.Error("waited") })
	var le *LockedError
	if !errors.As(err, &le) || le.TimedOut || le.PID != h.cmd.Process.Pid || time.Since(start) > time.Second {
		t.Errorf("waitforlock 0: %v after %v", err, time.Since(start))
	}

	// maxwaitforlock reached.
	waits := 0
	start = time.Now()
	_, err = LockWait(ctx, p, time.Second, 1500*time.Millisecond, func(*LockedError) { waits++ })
	if !errors.As(err, &le) || !le.TimedOut || waits != 2 {
		t.Errorf("maxwaitforlock: %v, %d waits, after %v", err, waits, time.Since(start))
	}

	// ctx ends the wait.
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = LockWait(cctx, p, time.Second, Unlimited, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled wait: %v", err)
	}

	// The holder finishes while we wait: the lock is ours.
	go func() { time.Sleep(1200 * time.Millisecond); h.stdin.Close() }()
	unlock, err := LockWait(ctx, p, time.Second, Unlimited, nil)
	if err != nil {
		t.Fatalf("after the holder ended: %v", err)
	}
	unlock()
}
