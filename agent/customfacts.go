package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/delegate"
)

// Custom facts and the run's Puppet.
//
// The modules' custom facts are Ruby, and so are the types pippet hands
// to Puppet: a run starts one Puppet for both, as Puppet's agent is one
// process. When the last pluginsync left custom facts (or the last
// catalog had a delegated resource), that Puppet starts with the run,
// and evaluates the custom facts as soon as it is ready, while the run
// asks the server for its environment and syncs the plugins: on a
// converged node the plugins do not change, and the facts are ready when
// the run needs them. When pluginsync changed or removed a file, they are
// evaluated again. With --fallback none, or no Puppet installed, a
// Facter process of their own evaluates them (agent/facts).

// ahead is a custom facts evaluation started before pluginsync.
type ahead struct {
	dirs   []string
	cancel context.CancelFunc
	done   chan struct{}
	out    []byte
	err    error
}

// customFactDirs are the run's custom fact directories that exist.
func (r *run) customFactDirs() []string {
	var o facts.Options
	o.UseVardir(r.s.Vardir)
	var dirs []string
	for _, d := range o.CustomDirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// hasCustomFacts says whether dirs hold a custom fact file (*.rb), as
// Facter loads them.
func hasCustomFacts(dirs []string) bool {
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, "*.rb")); len(m) > 0 {
			return true
		}
	}
	return false
}

// evaluateAhead starts evaluating the custom facts of the last
// pluginsync with fb, in the background.
func (r *run) evaluateAhead(ctx context.Context, fb *delegate.Fallback) {
	dirs := r.customFactDirs()
	if fb == nil || !hasCustomFacts(dirs) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, facts.DefaultCustomTimeout)
	a := &ahead{dirs: dirs, cancel: cancel, done: make(chan struct{})}
	r.ahead = a
	go func() {
		defer close(a.done)
		defer cancel()
		a.out, a.err = fb.CustomFacts(ctx, dirs)
	}()
}

// evaluator is the custom facts' evaluator of the facts gathered now,
// after pluginsync (changed: it changed or removed files): the result of
// the evaluation started ahead when it still holds, else the run's
// Puppet, started now if it is not running yet; nil (a Facter process)
// without one.
func (r *run) evaluator(ctx context.Context, changed bool) facts.Evaluator {
	a := r.ahead
	r.ahead = nil
	if r.fallback == nil && r.o.Fallback != delegate.ModeNone && hasCustomFacts(r.customFactDirs()) {
		r.log.Debug("Starting Puppet for the custom facts")
		r.fallback = r.startPuppet(ctx)
	}
	fb := r.fallback
	if fb == nil {
		return nil
	}
	return func(ctx context.Context, dirs []string) ([]byte, error) {
		if a != nil {
			select {
			case <-a.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if !changed && a.err == nil && slices.Equal(a.dirs, dirs) {
				r.log.Debug(fmt.Sprintf("Custom facts evaluated by Puppet (pid %d) during pluginsync", fb.Pid()))
				return a.out, nil
			}
		}
		out, err := fb.CustomFacts(ctx, dirs)
		if err == nil {
			r.log.Debug(fmt.Sprintf("Custom facts evaluated by Puppet (pid %d)", fb.Pid()))
		}
		return out, err
	}
}
