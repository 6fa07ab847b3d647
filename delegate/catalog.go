package delegate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// Any of Puppet's types may look at its catalog: concat_file gathers its
// concat_fragments, `resources { purge => true }` removes the instances
// the catalog does not manage, a datacat_collector finds its File and sets
// its content. Sent alone to the bridge they would see a catalog of one.
// So every delegated resource of a run (applier.RunFrom, as package
// catalog gives every resource of a catalog, or a controller's declared
// set) is applied, by the bridge, in a Puppet catalog that holds the run's
// other resources too, whatever its type: seen, found by Puppet's lookups
// (catalog.resource, catalog.resources, resource_refs), never applied
// there (their own requests apply them, in their place). The resources
// Puppet generated are answered as events whose property names them
// (File[/etc/motd]/content). The run's resources go to the bridge once per
// run and process ({"op":"catalog"}), and each request names them
// (CatalogMember). A parameter the resource's type sets on one of them
// (Puppet::Type#[]=) comes back in the answer's run_changes
// (protocol.Result.RunChanges), which the caller's catalog takes before it
// applies that resource, as Puppet's catalog holds the change.

// carriedBy lists the delegated types that are only data for another
// type's catalog: a concat_fragment is read by its concat_file, and
// answered unchanged itself (Puppet's concat_fragment does nothing).
var carriedBy = map[string]string{"concat_fragment": "concat_file"}

// carried answers a request its carrier applies (a concat_fragment whose
// run has a delegated concat_file): unchanged here, read there.
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

// CatalogMember is the params member naming, to the bridge, the catalog
// of the run a request is applied in: the token of the catalog the
// bridge was sent. The bridge takes it out before Puppet sees the params.
const CatalogMember = "__pippet_catalog"

// sentCatalog is the catalog the bridge holds: the run's, sent to the
// process whose pid is pid, under token.
type sentCatalog struct {
	run   applier.Run
	pid   int
	token string
}

var catalogSeq atomic.Uint64

// needsCatalog reports whether the run ctx carries must be sent to the
// bridge before a request of it.
func (f *Fallback) needsCatalog(ctx context.Context) bool {
	run, ok := applier.RunFrom(ctx).(applier.RunLister)
	if !ok || f.command {
		return false
	}
	f.catMu.Lock()
	defer f.catMu.Unlock()
	return !f.holds(run)
}

// holds reports whether the bridge holds run: sent to the process running
// now (one that died is replaced before the next request, which then
// needs the run again). The caller holds catMu.
func (f *Fallback) holds(run applier.Run) bool {
	return f.cat.run == run && f.cat.pid != 0 && f.recv.Running() && f.cat.pid == f.recv.Pid()
}

// catalogFor returns the token under which the bridge holds the run ctx
// carries, sending the run's resources first when it does not hold them
// (a new run, or a process that replaced the one sent to); "" when there
// is no run, or it could not be sent (the resource then sees only its own
// request's catalog, as before, and a warning says why).
func (f *Fallback) catalogFor(ctx context.Context) string {
	run, ok := applier.RunFrom(ctx).(applier.RunLister)
	if !ok || f.command {
		return ""
	}
	f.catMu.Lock()
	defer f.catMu.Unlock()
	if f.holds(run) {
		return f.cat.token
	}
	all := run.All()
	list := make([]map[string]any, 0, len(all))
	for _, r := range all {
		list = append(list, map[string]any{"type": r.Type, "title": r.Title, "params": r.Params})
	}
	token := "catalog-" + strconv.FormatUint(catalogSeq.Add(1), 10)
	if _, err := f.ask(ctx, map[string]any{"op": "catalog", "token": token, "resources": list, "id": token}, token, "left_out"); err != nil {
		if f.log != nil {
			f.log.Warn(fmt.Sprintf("the run's catalog not sent to %s (its types see a catalog of their own resource): %v", f.desc, err))
		}
		f.cat = sentCatalog{}
		return ""
	}
	f.cat = sentCatalog{run: run, pid: f.recv.Pid(), token: token}
	return token
}

// withMember returns params with member k set to v (params itself is not
// changed: it may be the caller's).
func withMember(params map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(params)+1)
	for key, x := range params {
		out[key] = x
	}
	out[k] = v
	return out
}
