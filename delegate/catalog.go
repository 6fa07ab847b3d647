package delegate

import (
	"context"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// Some of Puppet's types look at their catalog: concat_file gathers its
// concat_fragments, `resources { purge => true }` removes the instances
// the catalog does not manage, and both generate resources Puppet then
// applies. Sent alone to the bridge they would see a catalog of one. When
// the request comes with a run (applier.RunFrom, as package catalog gives
// every resource of a catalog), the bridge gets the resources they need
// with it, under RunMember, and applies them together as one catalog; the
// resources Puppet generated are answered as events whose property names
// them (File[/etc/motd]/content).

// RunMember is the params member that carries, to the bridge, the
// resources of the run a catalog-aware request needs: a list of
// {"type", "title", "params"}. The bridge takes it out before Puppet
// sees the params.
const RunMember = "__pippet_run"

// KeepMember marks, in the params of a resource of RunMember, one the
// bridge only names in its catalog (its title and name): a purge leaves
// it, nothing applies it there.
const KeepMember = "__pippet_keep"

// catalogAware lists the delegated types that need their run, and what of
// it they need.
var catalogAware = map[string]func(title string, run applier.Run) []applier.RunResource{
	// concat_file reads every concat_fragment of its catalog.
	"concat_file": func(_ string, run applier.Run) []applier.RunResource {
		return run.Resources("concat_fragment")
	},
	// resources { purge => true } leaves the instances its catalog holds:
	// they go as names only (KeepMember), known to the purge and never
	// applied there (their own requests apply them, in their place).
	"resources": func(title string, run applier.Run) []applier.RunResource {
		var out []applier.RunResource
		for _, r := range run.Resources(strings.ToLower(title)) {
			params := map[string]any{KeepMember: true}
			if n, ok := r.Params["name"].(string); ok {
				params["name"] = n
			}
			out = append(out, applier.RunResource{Type: r.Type, Title: r.Title, Params: params})
		}
		return out
	},
}

// carriedBy lists the delegated types that are only data for another
// type's catalog: a concat_fragment is applied with its concat_file.
var carriedBy = map[string]string{"concat_fragment": "concat_file"}

// withRun returns params with the run's resources the type needs, when it
// is catalog-aware and ctx carries a run; params unchanged otherwise.
func withRun(ctx context.Context, typ, title string, params map[string]any) map[string]any {
	need, ok := catalogAware[strings.ToLower(typ)]
	if !ok {
		return params
	}
	run := applier.RunFrom(ctx)
	if run == nil {
		return params
	}
	var list []any
	for _, r := range need(title, run) {
		list = append(list, map[string]any{"type": r.Type, "title": r.Title, "params": r.Params})
	}
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		out[k] = v
	}
	out[RunMember] = list
	return out
}

// carried answers a request its carrier applies (a concat_fragment whose
// run has a delegated concat_file): unchanged here, applied there.
func (a *Applier) carried(ctx context.Context, req *protocol.Request) (protocol.Result, bool) {
	carrier, ok := carriedBy[strings.ToLower(req.Type)]
	if !ok {
		return protocol.Result{}, false
	}
	run := applier.RunFrom(ctx)
	if run == nil || len(run.Resources(carrier)) == 0 || a.NativeKnow(carrier) {
		return protocol.Result{}, false
	}
	return protocol.Result{Resource: protocol.Ref(req.Type, req.Title)}, true
}

// Prestart starts Puppet now, in the background of the caller's own work,
// so that a run that will delegate does not wait for Puppet's start when
// it first needs it (a catalog's walk calls it when some resource of the
// catalog is delegated). The start's error is the first request's.
func (a *Applier) Prestart(ctx context.Context) {
	if a.Fallback != nil {
		_ = a.Fallback.register(ctx)
	}
}
