package assemble

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/report"
)

// Options say how a catalog is applied.
type Options struct {
	// Noop: change nothing; the report says what would have changed.
	Noop bool
	// ShowDiff is Puppet's show_diff setting (applier.Options.ShowDiff)
	// for the native types; the caller gives the run's Puppet the same
	// (ShowDiffSetting).
	ShowDiff bool
	// Tags and SkipTags select the resources applied (--tags, --skip_tags).
	Tags, SkipTags []string
	// StateDir is pippet's state (the filebucket, the schedules' last
	// runs in StateDir/schedules.json, the audited values in
	// StateDir/audit.json).
	StateDir string
	// Log is the handler every line of the apply goes through (kept for
	// the report, printed by the handler it wraps). Nil: kept only.
	Log *catalog.Log
	// Source configures the file type's sources (the agent's puppet://
	// client, a static catalog's inlined metadata).
	Source source.Options
	// TransactionStore keeps what each managed property was left at
	// between runs, so that a change setting back a drifted value is
	// reported corrective, as Puppet's agent does
	// (catalog.Options.TransactionStore); "" keeps none, as puppet apply.
	TransactionStore string
	// Puppet is the run's fallback (NewPuppet), nil for none. The caller
	// made it and closes it: Apply only uses it, and starts it ahead of
	// the walk when the catalog has a resource it takes.
	Puppet *Puppet
	// Sources maps a puppet:/// source to a local file, as puppet apply
	// reads them from its modulepath (catalog.Options.Sources).
	Sources func(url string) (string, bool)
	// Timings, when not nil, receives the apply's phases by the names of
	// Puppet's report metrics: convert_catalog (the catalog made into the
	// graph of resources to apply) and transaction_evaluation (the walk).
	Timings map[string]time.Duration
}

// Apply builds cat's graph and applies it. An error says the catalog
// could not be applied at all (a resource the graph refuses, a forced
// type the fallback lacks): nothing was changed. A resource that fails
// is in the report, not an error.
func Apply(ctx context.Context, cat *catalog.Catalog, o Options) (*report.Report, error) {
	logh := o.Log
	if logh == nil {
		logh = catalog.NewLog(nil)
	}
	convert := time.Now()
	g, err := catalog.BuildAuto(cat, applier.Default, o.Puppet.autoEdges(ctx, cat, slog.New(logh)))
	if err != nil {
		return nil, err
	}
	if o.Timings != nil {
		o.Timings["convert_catalog"] = time.Since(convert)
	}
	r := New(Config{
		Options:    applier.Options{Noop: o.Noop, StateDir: o.StateDir, ShowDiff: o.ShowDiff},
		Log:        logh,
		Durability: Grouped,
		Source:     &o.Source,
		Puppet:     o.Puppet,
	})
	defer r.Flush(context.WithoutCancel(ctx))
	_, app, err := r.Session()
	if err != nil {
		return nil, err
	}
	// No command outlives the apply; the process may apply again (the
	// agent's daemon): KillAll, which refuses new ones, is main's.
	defer command.KillRunning()
	var schedules, audits string
	if o.StateDir != "" {
		schedules = filepath.Join(o.StateDir, "schedules.json")
		audits = filepath.Join(o.StateDir, "audit.json")
	}
	if cat.Version != "" {
		r.Log.Info(fmt.Sprintf("Applying configuration version '%s'", cat.Version))
	}
	rep := catalog.Apply(ctx, g, app, catalog.Options{
		Noop: o.Noop, Tags: o.Tags, SkipTags: o.SkipTags, Log: logh,
		Schedules: schedules, Audits: audits, TransactionStore: o.TransactionStore,
		Sources: o.Sources,
	})
	if o.Timings != nil {
		o.Timings["transaction_evaluation"] = rep.Duration
	}
	return rep, nil
}

// purging reports whether a resources's params purge (purge => true, or
// "true" as a catalog may give it).
func purging(params map[string]any) bool {
	switch v := params["purge"].(type) {
	case bool:
		return v
	case string:
		return strings.EqualFold(v, "true") || strings.EqualFold(v, "yes")
	}
	return false
}

// autoEdges asks the run's Puppet for the autorelationships its types
// declare in Ruby, for the catalog's delegated resources whose type
// declares any (delegate.Fallback.AutoRelations): nil when there are
// none, or no Puppet. Puppet's answer failing, the catalog is walked
// without them and a warning says so.
func (p *Puppet) autoEdges(ctx context.Context, cat *catalog.Catalog, log *slog.Logger) []catalog.AutoEdge {
	fb := p.Fallback()
	if fb == nil {
		return nil
	}
	asked := false
	res := make([]delegate.AutoResource, 0, len(cat.Resources))
	for _, r := range cat.Resources {
		delegated := !r.IsContainer() && !p.Native(applier.Default, r.Type) && fb.Knows(r.Type)
		// A purging resources is asked for the autorelationships of what
		// its purge removes, when their type declares any (firewall's
		// autorequire of its package).
		ask := delegated && (fb.DeclaresAuto(r.Type) || strings.EqualFold(r.Type, "resources") && purging(r.Params) && fb.DeclaresAuto(r.Title))
		asked = asked || ask
		res = append(res, delegate.AutoResource{Type: r.Type, Title: r.Title, Params: r.Params, Ask: ask})
	}
	if !asked {
		return nil
	}
	found, err := fb.AutoRelations(ctx, res)
	if err != nil {
		log.Warn(err.Error())
		return nil
	}
	out := make([]catalog.AutoEdge, len(found))
	for i, e := range found {
		out[i] = catalog.AutoEdge{Source: e.Source, Target: e.Target, Refresh: e.Refresh}
	}
	return out
}
