package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/agent/pluginsync"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/assemble"
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

// evaluateAhead starts evaluating the custom facts of the last
// pluginsync with fb, in the background.
func (r *run) evaluateAhead(ctx context.Context, fb *delegate.Fallback) {
	dirs := facts.FacterArgs(r.gatherOptions())
	if fb == nil || len(dirs) == 0 {
		return
	}
	// Puppet's start, then the facts.
	ctx, cancel := context.WithTimeout(ctx, delegate.DefaultStartTimeout+facts.DefaultCustomTimeout)
	a := &ahead{dirs: dirs, cancel: cancel, done: make(chan struct{})}
	r.ahead = a
	go func() {
		defer close(a.done)
		defer cancel()
		a.out, a.err = fb.CustomFacts(ctx, dirs)
	}()
}

// coreAhead gathers the core facts in the background of the requests
// that come before the facts (the environment's check, pluginsync):
// none of them depends on what pluginsync brings, and their commands
// (lsblk, augparse) then run while the run waits for the server. Not
// with use_cached_catalog: that run sends no facts.
func (r *run) coreAhead(ctx context.Context) {
	if r.s.UseCachedCatalog {
		return
	}
	c := make(chan *facts.CoreFacts, 1)
	r.coreFacts = c
	o := r.gatherOptions()
	go func() { c <- facts.Core(ctx, o) }()
}

// synced is what a pluginsync did, as the custom facts care.
type synced struct {
	// changed: it changed or removed files (or failed half way): the
	// facts evaluated before it are not this run's.
	changed bool
	// code: among them Ruby that the custom facts may have required
	// (anything but the fact files Facter loads itself, which it reads
	// anew each time): a Puppet that evaluated them holds the old code.
	code bool
}

// syncedOf reads a pluginsync's result (res, err); factDirs are the
// custom fact directories.
func syncedOf(res *pluginsync.Result, err error, factDirs []string) synced {
	if err != nil || res == nil {
		return synced{changed: true, code: true}
	}
	var s synced
	for _, p := range slices.Concat(res.Changed, res.Removed) {
		s.changed = true
		if strings.HasSuffix(p, ".rb") && !slices.Contains(factDirs, filepath.Dir(p)) {
			s.code = true
		}
	}
	return s
}

// gatherOptions are the run's options of facts.Gather: the vardir's
// fact directories, and what the known custom fact files ask of Puppet
// (package agent/facts/native): its settings as the agent has them, and
// the provider the engine would choose, which is Puppet's.
func (r *run) gatherOptions() facts.Options {
	var o facts.Options
	o.UseVardir(r.s.Vardir)
	// As the run's Puppet is given them (puppetSettings).
	host, _ := r.serverAddr()
	o.Puppet = map[string]string{"vardir": r.s.Vardir, "server": host, "environmentpath": r.s.Values["environmentpath"]}
	// The provider choice of an engine of the run's registry without facts
	// (internal/assemble makes every engine).
	run := sync.OnceValue(func() *assemble.Run { return assemble.New(assemble.Config{}) })
	o.DefaultProvider = func(typ string) (string, error) { return run().Engine.DefaultProvider(typ) }
	return o
}

// factDirs are the run's custom fact directories, whether they exist or
// not.
func (r *run) factDirs() []string {
	var o facts.Options
	o.UseVardir(r.s.Vardir)
	return o.CustomDirs
}

// evaluator is the custom facts' evaluator of the facts gathered now,
// after pluginsync (sy): the result of the evaluation started ahead when
// it still holds, else the run's Puppet, started now if it is not
// running yet (or again, when it loaded code pluginsync then changed);
// nil (a Facter process) without one.
func (r *run) evaluator(ctx context.Context, sy synced) facts.Evaluator {
	a := r.ahead
	r.ahead = nil
	if fb := r.puppet.Fallback(); sy.code && fb != nil && (a != nil || fb.Pid() != 0) {
		// Ruby does not load a required file twice: a new Puppet (the
		// one started ahead, or kept from the daemon's last run, may
		// have loaded the old code: custom facts, types, providers).
		if a != nil {
			a.cancel()
			<-a.done
		}
		r.log.Debug("Starting Puppet again: pluginsync changed code it may have loaded")
		r.puppet.Restart(ctx)
		a = nil
	}
	if facts.NeedsFacter(r.gatherOptions()) && r.puppet.Start(ctx) {
		r.log.Debug("Starting Puppet for the custom facts")
	}
	fb := r.puppet.Fallback()
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
			if !sy.changed && a.err == nil && slices.Equal(a.dirs, dirs) {
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
