package agent

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/internal/puppetlog"
)

// LoopOptions say when Loop runs.
type LoopOptions struct {
	// Interval is runinterval: a run starts this long after the previous
	// one started (at once when a run took longer); 0 runs continuously,
	// as Puppet's agent.
	Interval time.Duration
	// Splay and Splaylimit: the first run waits a random time up to
	// Splaylimit, once, as Puppet's daemon assigns itself a slot.
	Splay      bool
	Splaylimit time.Duration
	// Signals are the process's signals (signal.Notify with SIGTERM,
	// SIGINT, SIGHUP, SIGUSR1): SIGTERM and SIGINT stop the loop (a run
	// in progress is cancelled: the resource being applied finishes, the
	// rest is skipped, the report is sent); SIGUSR1 starts a run now;
	// SIGHUP restarts (Restart) once no run is in progress.
	Signals <-chan os.Signal
	// Restart replaces the process with a new one of the same command
	// line (syscall.Exec), so that changed settings and a new binary are
	// read; nil: SIGHUP only starts a run.
	Restart func() error
	// Log gets Puppet's daemon lines ("Caught TERM; exiting").
	Log *slog.Logger
	// After is the clock's timer (tests); nil: time.After.
	After func(time.Duration) <-chan time.Time
}

// Loop runs run until ctx is done or a signal stops it, as `puppet
// agent` without --onetime does; it returns the process's exit status
// (0 after a stop, 1 when a restart failed).
func Loop(ctx context.Context, o LoopOptions, run func(ctx context.Context) int) int {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	after := o.After
	if after == nil {
		after = time.After
	}
	notice := func(msg string) { log.Log(ctx, applier.LevelNotice, msg) }
	var wait time.Duration
	if o.Splay && o.Splaylimit > 0 {
		wait = time.Duration(rand.Int64N(int64(o.Splaylimit) + 1))
		log.Info(fmt.Sprintf("Sleeping for %d seconds (splay is enabled)", int64(wait/time.Second)))
	}
	restart := false
	for {
		if restart && o.Restart != nil {
			notice("Restarting with '" + commandLine() + "'")
			if err := o.Restart(); err != nil {
				log.Error(fmt.Sprintf("Could not restart: %v", err))
				return ExitFailed
			}
		}
		restart = false
		// Wait for the next run, or a signal.
		timer := after(wait)
	waiting:
		for {
			select {
			case <-ctx.Done():
				return ExitOK
			case sig := <-o.Signals:
				switch sig {
				case syscall.SIGUSR1:
					notice("Caught USR1; storing reload")
					break waiting
				case syscall.SIGHUP:
					notice("Caught HUP; storing restart")
					restart = o.Restart != nil
					break waiting
				default:
					notice(fmt.Sprintf("Caught %s; exiting", puppetlog.SignalName(sig)))
					return ExitOK
				}
			case <-timer:
				break waiting
			}
		}
		if restart {
			continue
		}
		started := time.Now()
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan int, 1)
		go func() { done <- run(runCtx) }()
	running:
		for {
			select {
			case <-done:
				break running
			case sig := <-o.Signals:
				switch sig {
				case syscall.SIGUSR1:
					notice("Not triggering already-running agent")
				case syscall.SIGHUP:
					notice("Caught HUP; storing restart")
					restart = o.Restart != nil
				default:
					notice(fmt.Sprintf("Caught %s; exiting", puppetlog.SignalName(sig)))
					cancel()
					<-done
					return ExitOK
				}
			}
		}
		cancel()
		wait = max(0, o.Interval-time.Since(started))
		if !restart {
			log.Debug(fmt.Sprintf("Next run in %d seconds", int64(wait/time.Second)))
		}
	}
}

func commandLine() string { return strings.Join(os.Args, " ") }
