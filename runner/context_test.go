package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/runner"
)

// hangGuard is how long a test waits for a call that must return at its
// context's end before calling it a hang. It detects a wait past the
// context; it measures no speed.
const hangGuard = 20 * time.Second

// within runs f and fails the test if it has not returned within
// hangGuard.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s did not return at the end of its context", what)
	}
}

// holdLoop answers every request at once, except one titled "hold": it
// creates the file held, then answers once the file release exists.
func holdLoop(held, release string) string {
	return `echo '{"ready":true}'
while IFS= read -r line; do
  case "$line" in
    *'"title":"hold"'*) : > ` + held + `; while [ ! -e ` + release + ` ]; do sleep 0.02; done ;;
  esac
  answer "$line"
done
`
}

// Another apply holds the lock: an apply with a short context gives up
// while the first is still in flight, and sends nothing.
func TestApplyGivesUpWaitingForTheLock(t *testing.T) {
	dir := t.TempDir()
	held, release := filepath.Join(dir, "held"), filepath.Join(dir, "release")
	r := runner.New(runner.Options{Command: script(t, holdLoop(held, release))})
	require.NoError(t, r.Register())
	defer r.Unregister()

	first := make(chan error, 1)
	go func() {
		_, err := runner.Apply(context.Background(), r, &runner.Resource{Type: "notify", Title: "hold"})
		first <- err
	}()
	// The first apply holds the lock once the child has its request.
	require.Eventually(t, func() bool { _, err := os.Stat(held); return err == nil }, 10*time.Second, 5*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var err error
	within(t, "Apply waiting for the lock", func() {
		_, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "second"})
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "Notify[second]: not sent")
	select {
	case err := <-first:
		t.Fatalf("the first apply ended (%v) before the second gave up", err)
	default:
	}

	require.NoError(t, os.WriteFile(release, nil, 0o600))
	require.NoError(t, <-first)
	changed, err := apply(t, r, "after")
	require.NoError(t, err)
	assert.True(t, changed, "the same child goes on: nothing was sent for the one that gave up")
}

// A dead child is replaced by a child that is slow to start: the apply
// gives up at its context's end, and the next one (with time) succeeds.
func TestApplyGivesUpDuringARestart(t *testing.T) {
	dir := t.TempDir()
	slow, release := filepath.Join(dir, "slow"), filepath.Join(dir, "release")
	// The banner comes after the wait, so a slow start is slow to be ready.
	body := `if [ -e ` + slow + ` ]; then while [ ! -e ` + release + ` ]; do sleep 0.02; done; fi
echo '{"ready":true}'
` + echoLoop
	r := runner.New(runner.Options{Command: script(t, body), StartTimeout: time.Hour})
	require.NoError(t, r.Register())
	defer r.Unregister()
	pid := r.Pid()
	require.NoError(t, os.WriteFile(slow, nil, 0o600))
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var err error
	within(t, "Apply waiting for a restart", func() {
		_, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "x"})
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "Notify[x]: not sent")
	assert.Zero(t, r.Pid(), "the half-started child was killed")

	require.NoError(t, os.Remove(slow))
	changed, err := apply(t, r, "x")
	require.NoError(t, err)
	assert.True(t, changed)
}

// RegisterContext gives up on a slow start and counts nobody;
// UnregisterContext cuts the grace period short.
func TestRegisterAndUnregisterContext(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	slowStart := "while [ ! -e " + release + " ]; do sleep 0.02; done\necho '{\"ready\":true}'\n" + echoLoop
	r := runner.New(runner.Options{Command: script(t, slowStart), StartTimeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var err error
	within(t, "RegisterContext", func() { err = r.RegisterContext(ctx) })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, r.Users())
	assert.Zero(t, r.Pid())

	// Ignores its closed stdin and SIGTERM: only SIGKILL ends it.
	stubborn := "trap '' TERM\necho '{\"ready\":true}'\nwhile :; do sleep 1; done\n"
	r = runner.New(runner.Options{Command: script(t, stubborn), StopTimeout: time.Hour})
	require.NoError(t, r.RegisterContext(context.Background()))
	pid := r.Pid()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	within(t, "UnregisterContext", func() { err = r.UnregisterContext(ctx2) })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "killed before the end of its grace period")
	requireGone(t, pid)
	assert.Zero(t, r.Users())
}
