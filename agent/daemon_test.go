package agent

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loop starts Loop in the background; the returned channel gives its
// exit status.
func loop(o LoopOptions, run func(context.Context) int) <-chan int {
	done := make(chan int, 1)
	go func() { done <- Loop(context.Background(), o, run) }()
	return done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLoopRunsEveryIntervalAndStopsOnTERM: a run at once, then one each
// interval; TERM between runs ends the loop with 0.
func TestLoopRunsEveryIntervalAndStopsOnTERM(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var runs atomic.Int32
	done := loop(LoopOptions{Interval: 30 * time.Millisecond, Signals: sigs}, func(context.Context) int {
		runs.Add(1)
		return 0
	})
	waitFor(t, "three runs", func() bool { return runs.Load() >= 3 })
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not stop on TERM")
	}
	n := runs.Load()
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, n, runs.Load(), "no run after the stop")
}

// TestLoopTERMCancelsTheRunInProgress: the run's context is cancelled and
// the loop waits for the run to return before it ends.
func TestLoopTERMCancelsTheRunInProgress(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	started := make(chan struct{})
	var finished atomic.Bool
	done := loop(LoopOptions{Interval: time.Hour, Signals: sigs}, func(ctx context.Context) int {
		close(started)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // the resource in progress, the report
		finished.Store(true)
		return 0
	})
	<-started
	sigs <- syscall.SIGINT
	require.Equal(t, 0, <-done)
	assert.True(t, finished.Load(), "the loop ended before its run")
}

// TestLoopUSR1RunsNow: with a long interval, USR1 starts the next run at
// once; USR1 during a run does not queue another.
func TestLoopUSR1RunsNow(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var runs atomic.Int32
	release := make(chan struct{})
	done := loop(LoopOptions{Interval: time.Hour, Signals: sigs}, func(context.Context) int {
		if runs.Add(1) == 2 {
			<-release
		}
		return 0
	})
	waitFor(t, "the first run", func() bool { return runs.Load() == 1 })
	sigs <- syscall.SIGUSR1
	waitFor(t, "the run USR1 asked for", func() bool { return runs.Load() == 2 })
	sigs <- syscall.SIGUSR1 // during the run: "Not triggering already-running agent"
	close(release)
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, int32(2), runs.Load())
	sigs <- syscall.SIGTERM
	assert.Equal(t, 0, <-done)
}

// TestLoopSplaysTheFirstRunOnly: with splay, the first run waits a time
// within splaylimit; the later ones keep the interval.
func TestLoopSplaysTheFirstRunOnly(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var waits []time.Duration
	after := func(d time.Duration) <-chan time.Time {
		waits = append(waits, d)
		c := make(chan time.Time, 1)
		c <- time.Now()
		return c
	}
	var runs atomic.Int32
	done := loop(LoopOptions{Interval: time.Hour, Splay: true, Splaylimit: 10 * time.Minute, Signals: sigs, After: after},
		func(context.Context) int {
			if runs.Add(1) == 2 {
				sigs <- syscall.SIGTERM
			}
			return 0
		})
	require.Equal(t, 0, <-done)
	require.Len(t, waits, 2)
	assert.LessOrEqual(t, waits[0], 10*time.Minute)
	assert.Greater(t, waits[1], 59*time.Minute, "the next run an interval after the first")
}

// TestLoopHUPRestarts: HUP replaces the process (Restart) once the run
// in progress is over.
func TestLoopHUPRestarts(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	restarted := make(chan struct{})
	var runs atomic.Int32
	done := loop(LoopOptions{Interval: time.Hour, Signals: sigs, Restart: func() error {
		close(restarted)
		select {} // syscall.Exec does not return
	}}, func(context.Context) int {
		runs.Add(1)
		return 0
	})
	waitFor(t, "the first run", func() bool { return runs.Load() == 1 })
	sigs <- syscall.SIGHUP
	select {
	case <-restarted:
	case <-done:
		t.Fatal("the loop ended instead of restarting")
	case <-time.After(10 * time.Second):
		t.Fatal("no restart on HUP")
	}
	assert.Equal(t, int32(1), runs.Load())
}
