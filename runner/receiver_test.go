package runner_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/runner"
)

// These tests run real child processes: small sh scripts speaking the
// protocol, so the process handling is tested on its own. The real receiver
// binary is tested in binary_test.go.

// answerFn defines the shell function answer LINE, which prints a changed
// answer to the request LINE (a notify), naming its resource and echoing
// its id (null when it has none), as the receiver answers.
const answerFn = `answer() {
  t=${1#*\"title\":\"}; t=${t%%\"*}
  case "$1" in *'"id":'*) id=${1##*\"id\":}; id=${id%\}} ;; *) id=null ;; esac
  printf '{"resource":"Notify[%s]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"id":%s}\n' "$t" "$id"
}
`

// script writes an executable sh script and returns its argv.
func script(t *testing.T, body string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-receiver")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+answerFn+body), 0o755))
	return []string{p}
}

// echoLoop answers every request line with a changed answer.
const echoLoop = `while IFS= read -r line; do answer "$line"; done
`

func testLogger(buf *testutil.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// children lists the pids of this process's children, zombies included.
func children(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	var pids []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(s)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
	}
	return pids
}

// gone reports whether pid no longer exists (not even as a zombie).
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.NotZero(t, pid)
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "process %d left behind", pid)
	assert.NotContains(t, children(t), pid)
}

func apply(t *testing.T, r runner.Runner, title string) (bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: title})
}

func TestReceiverBanners(t *testing.T) {
	tests := []struct {
		name   string
		prelog string
	}{
		{"our JSON banner", `echo '{"ready":true,"protocol":1,"version":"0.1.0"}'`},
		{"Puppet notice, coloured", `printf '\033[mNotice: ready\033[0m\n'`},
		{"Puppet notice after warnings", `echo 'Warning: Facter: timed out'; echo 'Notice: Receiver ready'`},
		{"any Puppet notice", `echo 'Notice: Compiled catalog for x in environment production'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runner.New(runner.Options{Command: script(t, tt.prelog+"\n"+echoLoop)})
			require.NoError(t, r.Register())
			changed, err := apply(t, r, "x")
			require.NoError(t, err)
			assert.True(t, changed)
			pid := r.Pid()
			require.NoError(t, r.Unregister())
			requireGone(t, pid)
		})
	}
}

func TestReceiverNoReady(t *testing.T) {
	r := runner.New(runner.Options{Command: script(t, echoLoop), NoReady: true})
	require.NoError(t, r.Register())
	changed, err := apply(t, r, "x")
	require.NoError(t, err)
	assert.True(t, changed)
	require.NoError(t, r.Unregister())
}

func TestReceiverStartFailures(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		body    string
		want    []string
		logged  string
		timeout time.Duration
	}{
		{name: "exits before ready", body: "echo 'Error: Unknown Puppet subcommand' >&2\nexit 3\n",
			want: []string{"exited before it was ready", "exit status 3", "Error: Unknown Puppet subcommand"}, logged: "level=ERROR"},
		{name: "never ready", body: "exec sleep 30\n", timeout: 300 * time.Millisecond,
			want: []string{"no ready line within 300ms"}},
		{name: "not a command", argv: []string{"/nonexistent/receiver", "--x"},
			want: []string{`starting "/nonexistent/receiver --x"`, "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs testutil.SyncBuffer
			argv := tt.argv
			if argv == nil {
				argv = script(t, tt.body)
			}
			before := len(children(t))
			r := runner.New(runner.Options{Command: argv, StartTimeout: tt.timeout, Logger: testLogger(&logs)})
			start := time.Now()
			err := r.Register()
			require.Error(t, err)
			if tt.timeout > 0 {
				assert.Less(t, time.Since(start), tt.timeout+2*time.Second)
			}
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Zero(t, r.Users(), "a failed start is not counted")
			assert.Zero(t, r.Pid())
			assert.Eventually(t, func() bool { return len(children(t)) <= before }, 5*time.Second, 10*time.Millisecond, "child left behind")
			if tt.logged != "" {
				assert.Contains(t, logs.String(), tt.logged)
			}
			// Nothing registered: applies are refused, not hung.
			_, err = apply(t, r, "x")
			require.ErrorIs(t, err, runner.ErrUnavailable)
		})
	}
}

func TestReceiverStderrIsLogged(t *testing.T) {
	var logs testutil.SyncBuffer
	body := `echo '{"ready":true}'
while IFS= read -r line; do
  echo "Warning: about $line" >&2
  answer "$line"
done
`
	r := runner.New(runner.Options{Command: script(t, body), Logger: testLogger(&logs)})
	require.NoError(t, r.Register())
	_, err := apply(t, r, "x")
	require.NoError(t, err)
	require.NoError(t, r.Unregister())
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), `Warning: about {\"type\":\"notify\",\"title\":\"x\",\"params\":\"{}\"}`)
}

func TestReceiverRegisterCounting(t *testing.T) {
	r := runner.New(runner.Options{Command: script(t, "echo '{\"ready\":true}'\n"+echoLoop)})
	require.ErrorContains(t, r.Unregister(), "without a matching Register")

	require.NoError(t, r.Register())
	pid := r.Pid()
	require.NoError(t, r.Register())
	assert.Equal(t, pid, r.Pid(), "the second user shares the child")
	assert.Equal(t, 2, r.Users())

	require.NoError(t, r.Unregister())
	assert.True(t, r.Running(), "still one user")
	_, err := apply(t, r, "x")
	require.NoError(t, err)

	require.NoError(t, r.Unregister())
	requireGone(t, pid)
	assert.False(t, r.Running())
	require.ErrorContains(t, r.Unregister(), "without a matching Register")

	// A new first user gets a new child.
	require.NoError(t, r.Register())
	assert.NotEqual(t, pid, r.Pid())
	require.NoError(t, r.Unregister())
}

func TestReceiverKilledAfterGracePeriod(t *testing.T) {
	// Ignores its closed stdin and SIGTERM: only SIGKILL ends it.
	body := "trap '' TERM\necho '{\"ready\":true}'\nwhile :; do sleep 1; done\n"
	r := runner.New(runner.Options{Command: script(t, body), StopTimeout: 200 * time.Millisecond})
	require.NoError(t, r.Register())
	pid := r.Pid()
	start := time.Now()
	err := r.Unregister()
	require.ErrorContains(t, err, "did not exit within 200ms")
	assert.Less(t, time.Since(start), 3*time.Second)
	requireGone(t, pid)
}

func TestReceiverChildDiesBetweenAndDuringApplies(t *testing.T) {
	// Answers, except that a request titled "die" kills it mid-request.
	body := `echo '{"ready":true}'
while IFS= read -r line; do
  case "$line" in
    *'"title":"die"'*) kill -9 $$ ;;
  esac
  answer "$line"
done
`
	r := runner.New(runner.Options{Command: script(t, body)})
	require.NoError(t, r.Register())
	defer r.Unregister()

	first := r.Pid()
	_, err := apply(t, r, "x")
	require.NoError(t, err)

	// Killed between applies: the next apply gets a new child.
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)
	_, err = apply(t, r, "x")
	require.NoError(t, err)
	second := r.Pid()
	assert.NotEqual(t, first, second)
	requireGone(t, first)

	// Dies during an apply: that apply says so, the next one works.
	_, err = apply(t, r, "die")
	require.ErrorIs(t, err, runner.ErrReceiverDied)
	assert.Contains(t, err.Error(), "Notify[die]: receiver died")
	_, err = apply(t, r, "x")
	require.NoError(t, err)
	assert.NotEqual(t, second, r.Pid())
	requireGone(t, second)
}

func TestReceiverTimeoutReplacesChild(t *testing.T) {
	// Answers "slow" after 3 s (too late), anything else at once.
	body := `echo '{"ready":true}'
while IFS= read -r line; do
  case "$line" in
    *'"title":"slow"'*) sleep 3 ;;
  esac
  answer "$line"
done
`
	r := runner.New(runner.Options{Command: script(t, body)})
	require.NoError(t, r.Register())
	defer r.Unregister()
	first := r.Pid()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "slow"})
	require.ErrorIs(t, err, runner.ErrNoAnswer)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.False(t, r.Running(), "a child that missed its deadline is broken")

	_, err = apply(t, r, "x")
	require.NoError(t, err)
	assert.NotEqual(t, first, r.Pid())
	requireGone(t, first)
}

func TestReceiverCommandResolution(t *testing.T) {
	t.Setenv(runner.EnvReceiver, "puppet yamlresource  receive --color=no")
	argv, err := runner.New(runner.Options{}).Command()
	require.NoError(t, err)
	assert.Equal(t, []string{"puppet", "yamlresource", "receive", "--color=no"}, argv)

	argv, err = runner.New(runner.Options{Command: []string{"ssh", "web1", "receiver"}}).Command()
	require.NoError(t, err)
	assert.Equal(t, []string{"ssh", "web1", "receiver"}, argv, "Options.Command wins over the environment")

	t.Setenv(runner.EnvReceiver, "")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "receiver"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", dir)
	argv, err = runner.New(runner.Options{}).Command()
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "receiver")}, argv)

	t.Setenv("PATH", t.TempDir())
	_, err = runner.New(runner.Options{}).Command()
	require.ErrorContains(t, err, "no receiver command")
}

// getUsed: the process-wide Receiver exists (from an earlier -count run).
var getUsed bool

func TestGetAndConfigure(t *testing.T) {
	if err := runner.Configure(runner.Options{Command: []string{"/bin/false"}}); getUsed {
		require.ErrorIs(t, err, runner.ErrConfigured)
	} else {
		require.NoError(t, err)
	}
	getUsed = true
	var wg sync.WaitGroup
	got := make([]*runner.Receiver, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = runner.Get()
		}()
	}
	wg.Wait()
	for _, r := range got {
		assert.Same(t, got[0], r)
	}
	argv, err := got[0].Command()
	require.NoError(t, err)
	assert.Equal(t, []string{"/bin/false"}, argv, "Get uses the configured options")
	require.ErrorIs(t, runner.Configure(runner.Options{}), runner.ErrConfigured)
}

func TestUnregisterKillsABrokenChildAtOnce(t *testing.T) {
	// Never answers, and would sit out any grace period.
	body := "echo '{\"ready\":true}'\nwhile IFS= read -r line; do sleep 30; done\n"
	r := runner.New(runner.Options{Command: script(t, body), StopTimeout: 5 * time.Second})
	require.NoError(t, r.Register())
	pid := r.Pid()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := runner.Apply(ctx, r, hello)
	require.ErrorIs(t, err, runner.ErrNoAnswer)

	start := time.Now()
	require.NoError(t, r.Unregister())
	assert.Less(t, time.Since(start), 2*time.Second, "no grace period for a broken child")
	requireGone(t, pid)
}

func TestFailedRestartIsReportedAndRetried(t *testing.T) {
	// Starts only while the marker file is absent... after the first start.
	marker := filepath.Join(t.TempDir(), "fail")
	body := `if [ -e ` + marker + ` ]; then echo "Error: cannot start" >&2; exit 1; fi
echo '{"ready":true}'
` + echoLoop
	r := runner.New(runner.Options{Command: script(t, body)})
	require.NoError(t, r.Register())
	defer r.Unregister()
	pid := r.Pid()

	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)
	_, err := apply(t, r, "x")
	require.ErrorIs(t, err, runner.ErrUnavailable)
	assert.Contains(t, err.Error(), "Notify[x]")
	assert.Contains(t, err.Error(), "exited before it was ready (exit status 1); stderr: Error: cannot start")
	assert.Zero(t, r.Pid())

	require.NoError(t, os.Remove(marker))
	changed, err := apply(t, r, "x")
	require.NoError(t, err, "the next apply tries again")
	assert.True(t, changed)
	assert.NotZero(t, r.Pid())
}

func TestReceiverBesideTheExecutable(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	beside := filepath.Join(filepath.Dir(exe), "receiver")
	if _, err := os.Stat(beside); err == nil {
		t.Skipf("%s exists already", beside)
	}
	require.NoError(t, os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755))
	t.Cleanup(func() { os.Remove(beside) })
	onPath := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(onPath, "receiver"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", onPath)
	t.Setenv(runner.EnvReceiver, "")

	argv, err := runner.New(runner.Options{}).Command()
	require.NoError(t, err)
	assert.Equal(t, []string{beside}, argv, "the program's own receiver wins over PATH")
}

func TestReceiverEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "seen")
	body := `printf '%s %s\n' "$PWD" "$PIPPET_TEST_VALUE" > ` + out + `
echo '{"ready":true}'
` + echoLoop
	r := runner.New(runner.Options{Command: script(t, body), Dir: dir, Env: []string{"PIPPET_TEST_VALUE=forty two"}})
	require.NoError(t, r.Register())
	require.NoError(t, r.Unregister())
	seen, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, dir+" forty two\n", string(seen))
}

// TestFailureReasonFromStderr: Puppet's own receiver (`puppet yamlresource
// receive`) answers a failure with no exception and writes the reason to
// stderr as `Error:` lines; the answer then carries those lines of its
// request, not "no reason given". A stand-in script plays Puppet's
// receiver: the yamlresource face is not packaged for Debian, so the real
// one cannot run here.
func TestFailureReasonFromStderr(t *testing.T) {
	body := `echo 'Notice: Receiver ready'
n=0
while read -r line; do
  n=$((n+1))
  case "$line" in
  *fail*)
    echo "Info: applying request $n" >&2
    echo "Error: /Stage[main]/Main/Exec[fail]/returns: change from 'notrun' to ['0'] failed: request $n" >&2
    echo '{"resource":"Exec[fail]","failed":true,"changed":false,"noop":false,"error":false,"exception":null}' ;;
  *quiet*)
    echo '{"resource":"Exec[quiet]","failed":true,"changed":false,"noop":false,"error":false,"exception":null}' ;;
  *)
    echo '{"resource":"Notify[ok]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}' ;;
  esac
done
`
	r := runner.New(runner.Options{Command: script(t, body)})
	require.NoError(t, r.Register())
	defer r.Unregister()
	ctx := context.Background()

	_, err := runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "ok"})
	require.NoError(t, err)
	for _, n := range []string{"2", "3"} {
		res, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "exec", Title: "fail"})
		require.Error(t, err)
		want := "Error: /Stage[main]/Main/Exec[fail]/returns: change from 'notrun' to ['0'] failed: request " + n
		assert.Equal(t, want, res.Exception, "the Error: lines of this request only")
		assert.Contains(t, err.Error(), want)
	}
	// A failure with nothing on stderr still says so.
	_, err = runner.Apply(ctx, r, &runner.Resource{Type: "exec", Title: "quiet"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no reason given")
}
