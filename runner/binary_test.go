package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/mock"
	"github.com/pippet/pippet/runner"
)

// receiverBin is the receiver built from this module by TestMain. A build
// that fails fails the package: a broken receiver is never a skip.
var receiverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pippet-runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	receiverBin, err = testutil.BuildReceiver(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner tests need the receiver binary:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// realReceiver returns a registered Receiver running the built binary.
func realReceiver(t *testing.T, opts runner.Options) *runner.Receiver {
	t.Helper()
	if opts.Command == nil {
		opts.Command = []string{receiverBin}
	}
	r := runner.New(opts)
	require.NoError(t, r.Register())
	return r
}

func TestBinaryRegisterApplyUnregister(t *testing.T) {
	// The default command, overridden by the environment.
	t.Setenv(runner.EnvReceiver, receiverBin)
	r := runner.New(runner.Options{})
	require.NoError(t, r.Register())
	pid := r.Pid()
	require.NotZero(t, pid)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "notify", Title: "hello", Params: "{message: hi there}"})
	require.NoError(t, err)
	assert.Equal(t, "Notify[hello]", res.Resource)
	assert.True(t, res.Changed)
	assert.False(t, res.Failed)

	_, err = runner.Apply(ctx, r, &runner.Resource{Type: "starship", Title: "enterprise"})
	var re *runner.ResultError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.Result.Error)
	assert.Contains(t, err.Error(), "unknown resource type 'starship'")

	_, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "bad", Params: "{bogus: 1}"})
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "Notify[bad]")
	assert.Contains(t, err.Error(), "bogus")

	// Error answers do not break the child.
	assert.Equal(t, pid, r.Pid())
	assert.True(t, r.Running())

	require.NoError(t, r.Unregister())
	requireGone(t, pid)
	assert.Zero(t, r.Pid())
}

func TestBinaryKilledBetweenApplies(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	ok := func() {
		t.Helper()
		changed, err := apply(t, r, "again")
		require.NoError(t, err)
		assert.True(t, changed)
	}
	ok()
	first := r.Pid()
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !r.Running() }, 5*time.Second, 5*time.Millisecond)
	ok()
	assert.NotEqual(t, first, r.Pid())
	requireGone(t, first)
}

func TestBinaryKilledDuringApply(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	first := r.Pid()

	// An exec that would take 60 s is in flight when the child is killed:
	// killed once the command has started (it creates a file), not after
	// a guessed delay.
	started := filepath.Join(t.TempDir(), "started")
	title := "/bin/sh -c 'touch " + started + "; exec sleep 60'"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(started); err == nil {
				syscall.Kill(first, syscall.SIGKILL)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := runner.Apply(ctx, r, &runner.Resource{Type: "exec", Title: title})
	require.ErrorIs(t, err, runner.ErrReceiverDied, "the apply ends when the child dies, not at its deadline")
	assert.Contains(t, err.Error(), "Exec["+title+"]: receiver died")

	changed, err := apply(t, r, "after")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotEqual(t, first, r.Pid())
	requireGone(t, first)
}

func TestBinaryDeadlineDuringApply(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	first := r.Pid()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := runner.Apply(ctx, r, &runner.Resource{Type: "exec", Title: "/bin/sleep 2"})
	require.ErrorIs(t, err, runner.ErrNoAnswer)

	// The late answer is not taken for this one's.
	res, err := runner.ApplyResult(context.Background(), r, &runner.Resource{Type: "notify", Title: "next"})
	require.NoError(t, err)
	assert.Equal(t, "Notify[next]", res.Resource)
	requireGone(t, first)
}

func TestBinaryConcurrentApplies(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer func() {
		pid := r.Pid()
		require.NoError(t, r.Unregister())
		requireGone(t, pid)
	}()
	pid := r.Pid()
	const workers, each = 8, 1000
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				title := fmt.Sprintf("w%d-%d", w, i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				res, err := runner.ApplyResult(ctx, r, &runner.Resource{Type: "notify", Title: title, Params: "{message: m" + title + "}"})
				cancel()
				if err == nil && (res.Resource != "Notify["+title+"]" || !res.Changed) {
					err = fmt.Errorf("answer %+v to Notify[%s]", res, title)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d applies from %d goroutines in %s", workers*each, workers, time.Since(start))
	assert.Equal(t, pid, r.Pid(), "one child served them all")
}

// Puppet's receiver prints a notice line at start instead of our banner,
// and answers with the six fields only. The built receiver, told to behave
// so behind a wrapper that prints the notice, stands in for it.
func TestBinaryPuppetStyle(t *testing.T) {
	wrapper := script(t, "printf '\\033[mNotice: ready\\033[0m\\n'\nexec "+receiverBin+" --no-banner --compat\n")
	r := realReceiver(t, runner.Options{Command: wrapper})
	pid := r.Pid()
	res, err := runner.ApplyResult(context.Background(), r, &runner.Resource{Type: "notify", Title: "p"})
	require.NoError(t, err)
	assert.Equal(t, runner.Result{Resource: "Notify[p]", Changed: true}, res)
	require.NoError(t, r.Unregister())
	requireGone(t, pid)
}

// The real thing, where the yamlresource module is installed.
func TestPuppetReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: starts Puppet")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "puppet", "help", "yamlresource").CombinedOutput()
	if !strings.Contains(string(out), "receive") {
		t.Skip("puppet has no yamlresource face (module ffrank-yamlresource not installed)")
	}
	r := runner.New(runner.Options{Command: []string{"puppet", "yamlresource", "receive", "--color=no"}})
	require.NoError(t, r.Register())
	pid := r.Pid()
	// No verbs: refused before anything is written.
	_, err := runner.Find(ctx, r, "user", "root")
	assert.ErrorIs(t, err, runner.ErrUnsupported)
	changed, err := runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "from pippet"})
	require.NoError(t, err)
	assert.True(t, changed)
	_, err = runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: "bad", Params: "{bogus: 1}"})
	var re *runner.ResultError
	require.True(t, errors.As(err, &re), "got %v", err)
	require.NoError(t, r.Unregister())
	requireGone(t, pid)
}

// BenchmarkApplyNotify is one round trip through the built receiver.
func BenchmarkApplyNotify(b *testing.B) {
	r := runner.New(runner.Options{Command: []string{receiverBin}})
	if err := r.Register(); err != nil {
		b.Fatal(err)
	}
	defer r.Unregister()
	res := &runner.Resource{Type: "notify", Title: "bench", Params: "{message: hi}"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runner.Apply(ctx, r, res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyMock is Apply's own cost, against the scripted runner.
func BenchmarkApplyMock(b *testing.B) {
	m := &mock.Runner{}
	defer m.Close()
	res := &runner.Resource{Type: "notify", Title: "bench", Params: "{message: hi}"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := runner.Apply(ctx, m, res); err != nil {
			b.Fatal(err)
		}
	}
}

// Users come and go while others apply: every apply is answered, and the
// last Unregister leaves no process behind.
func TestBinaryRegisterChurn(t *testing.T) {
	before := len(children(t))
	r := runner.New(runner.Options{Command: []string{receiverBin}})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 5 {
				if err := r.Register(); err != nil {
					errs <- err
					return
				}
				for i := range 20 {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					_, err := runner.Apply(ctx, r, &runner.Resource{Type: "notify", Title: fmt.Sprintf("%d-%d-%d", w, round, i)})
					cancel()
					if err != nil {
						errs <- err
						break
					}
				}
				if err := r.Unregister(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Zero(t, r.Users())
	assert.Zero(t, r.Pid())
	assert.Eventually(t, func() bool { return len(children(t)) <= before }, 5*time.Second, 10*time.Millisecond, "receivers left behind: %v", children(t))
}

// The runner and the receiver spell references alike, for known types,
// unknown ones with "::" segments and any case.
func TestBinaryRefAgrees(t *testing.T) {
	r := realReceiver(t, runner.Options{})
	defer r.Unregister()
	for _, res := range []runner.Resource{
		{Type: "notify", Title: "a"},
		{Type: "NOTIFY", Title: "b"},
		{Type: "ssh_authorized_key", Title: "k", Params: "{bogus: 1}"},
		{Type: "foo::bar", Title: "x"},
		{Type: "Foo::BAR::baz", Title: "y"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := runner.ApplyResult(ctx, r, &res)
		cancel()
		var re *runner.ResultError
		if err != nil {
			require.ErrorAs(t, err, &re)
			assert.Equal(t, res.Ref(), re.Ref)
		}
		assert.Equal(t, res.Ref(), got.Resource, "%s %s", res.Type, res.Title)
	}
}

// A receiver that exits before it is ready: the error quotes its stderr.
func TestBinaryExitsBeforeReady(t *testing.T) {
	r := runner.New(runner.Options{Command: []string{receiverBin, "--bogus-flag"}})
	err := r.Register()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited before it was ready (exit status 2)")
	assert.Contains(t, err.Error(), "stderr: ")
	assert.Contains(t, err.Error(), "flag provided but not defined")
}

// BenchmarkApplyVsRaw sets runner.Apply beside the raw pipe round trip to
// the same receiver process: under the runner's apply lock, write the
// same request line to the child's stdin and read the answer line
// straight from its stdout in the same goroutine (one answer at a time,
// so the raw reader never holds what Apply's reader should read). Each
// iteration does one of each, alternating which goes first, so that both
// see the same load and the same child; the metrics are the median round
// trip of each and their ratio (issue 17: Apply ≤ 1.1 × raw). The context
// is one with a cancel, as an engine passes. With $APPLYVSRAW_ONLY set to
// apply or raw it runs that side only and reports nothing more, for
// counting each side's instructions (BENCHMARKS.md).
//
//	go test -run '^$' -bench ApplyVsRaw -benchtime 10000x ./runner/
func BenchmarkApplyVsRaw(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		res  runner.Resource
		line string
	}{
		{"notify", runner.Resource{Type: "notify", Title: "bench", Params: "{message: hi}"},
			`{"type":"notify","title":"bench","params":"{message: hi}"}`},
		{"file-unchanged", runner.Resource{Type: "file", Title: path, Params: `{ensure: file, mode: '0644', content: "hello\n"}`},
			`{"type":"file","title":"` + path + `","params":"{ensure: file, mode: '0644', content: \"hello\\n\"}"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := runner.New(runner.Options{Command: []string{receiverBin, "--state-dir", dir}})
			if err := r.Register(); err != nil {
				b.Fatal(err)
			}
			defer r.Unregister()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The first Apply starts the child; the raw side then talks
			// to that child through its own reader of the same stdout.
			if _, err := runner.Apply(ctx, r, &bc.res); err != nil {
				b.Fatal(err)
			}
			r.LockApply()
			in, out := r.InputStream(), bufio.NewReader(r.OutputStream())
			r.UnlockApply()
			line := []byte(bc.line + "\n")
			applyOne := func() time.Duration {
				start := time.Now()
				if _, err := runner.Apply(ctx, r, &bc.res); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			rawOne := func() time.Duration {
				r.LockApply()
				defer r.UnlockApply()
				start := time.Now()
				if _, err := in.Write(line); err != nil {
					b.Fatal(err)
				}
				ans, err := out.ReadSlice('\n')
				d := time.Since(start)
				if err != nil || !bytes.Contains(ans, []byte(`"failed":false`)) {
					b.Fatalf("raw answer %q: %v", ans, err)
				}
				return d
			}
			for range 200 { // warm-up
				applyOne()
				rawOne()
			}
			var applied, raws []time.Duration
			i := 0
			only := os.Getenv("APPLYVSRAW_ONLY")
			for b.Loop() {
				if only == "apply" {
					applyOne()
					continue
				}
				if only == "raw" {
					rawOne()
					continue
				}
				if i%2 == 0 {
					applied = append(applied, applyOne())
					raws = append(raws, rawOne())
				} else {
					raws = append(raws, rawOne())
					applied = append(applied, applyOne())
				}
				i++
			}
			if only != "" {
				return
			}
			a, w := medianDuration(applied), medianDuration(raws)
			b.ReportMetric(float64(a.Nanoseconds()), "apply-ns")
			b.ReportMetric(float64(w.Nanoseconds()), "raw-ns")
			b.ReportMetric(float64(a)/float64(w), "apply/raw")
		})
	}
}

func medianDuration(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
