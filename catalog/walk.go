package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/report"
)

// Options configure a walk.
type Options struct {
	// Noop: the run is a noop run (the Applier's engine must be in noop
	// too: the walk only reports it).
	Noop bool
	// Tags: when set, only resources with one of these tags are applied
	// (--tags); SkipTags: resources with one of these are not (--skip_tags).
	Tags, SkipTags []string
	// Log is the handler the Applier logs through; the walk sets the
	// resource being applied on it, logs its own lines to it and takes
	// its entries for the report. Nil: a Log that only keeps them.
	Log *Log
	// Schedules is where schedule state is kept between runs (a file);
	// "" keeps none (every schedule allows every run).
	Schedules string
	// Sources, when set, maps a file's puppet:/// source to where it is
	// read from (ModuleFiles: the modulepath, as puppet apply does).
	Sources func(url string) (string, bool)
	// Audits is where the values of audited properties are kept between
	// runs (a file, as Puppet's state.yaml keeps them); "" keeps none.
	Audits string
	// TransactionStore is where what each managed property was left at
	// is kept between runs, so that a change setting back a drifted value
	// is reported corrective (corrective_change), as Puppet's agent does
	// with its transactionstore.yaml; "" keeps none (puppet apply's way:
	// no change is corrective).
	TransactionStore string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// heard is one event a resource heard: its status.
type heard struct{ noop bool }

type vstate struct {
	failed     bool
	failedDeps []*vertex
	queued     []heard
}

// Apply walks the graph, applying each resource through app, and returns
// the run's report. It stops early only when ctx is done: the resources
// not reached are then reported skipped.
func Apply(ctx context.Context, g *Graph, app protocol.Applier, o Options) *report.Report {
	w := newWalk(ctx, g, app, o)
	g.prestart(ctx, app)
	for _, v := range g.order {
		w.visit(v)
	}
	return w.finish()
}

// walk is one Apply: the run's state as the walk goes.
type walk struct {
	ctx    context.Context
	runCtx context.Context // ctx with the run (applier.WithRun)
	g      *Graph
	app    protocol.Applier
	o      Options
	log    *slog.Logger
	start  time.Time
	rep    *report.Report
	sched  *schedules
	store  *transactionStore
	auds   *audits
	// corrective: source and message of each corrective change's line.
	corrective map[string]bool
	st         map[*vertex]*vstate
}

// newWalk sets the run up: the log, the report, and the state kept
// between runs (schedules, audits, the transaction store).
func newWalk(ctx context.Context, g *Graph, app protocol.Applier, o Options) *walk {
	if o.Log == nil {
		o.Log = NewLog(nil)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	w := &walk{ctx: ctx, runCtx: applier.WithRun(ctx, g.run), g: g, app: app, o: o,
		log: slog.New(o.Log), start: o.Now(), corrective: map[string]bool{},
		st: make(map[*vertex]*vstate, len(g.order))}
	w.rep = &report.Report{
		Host: g.Catalog.Name, Environment: g.Catalog.Environment, ConfigurationVersion: g.Catalog.Version,
		CatalogUUID: g.Catalog.UUID, CodeID: g.Catalog.CodeID, Time: w.start, Noop: o.Noop,
	}
	paths := make(map[string]string, len(g.leaves))
	byPath := make(map[string]*Resource, len(g.leaves))
	for _, v := range g.leaves {
		paths[v.res.Ref()] = v.path
		byPath[v.path] = v.res
	}
	o.Log.setPaths(paths, byPath)
	o.Log.holdChanges(o.TransactionStore != "")
	w.sched = loadSchedules(g, o.Schedules, w.log)
	w.store = loadStore(o.TransactionStore, w.log)
	w.auds = loadAudits(o.Audits, w.log)
	return w
}

func (w *walk) state(v *vertex) *vstate {
	s := w.st[v]
	if s == nil {
		s = &vstate{}
		w.st[v] = s
	}
	return s
}

// visit takes one vertex of the walk order: a container's sentinel
// passes on what it heard; a resource is skipped or applied, recorded,
// and sends its events on.
func (w *walk) visit(v *vertex) {
	s := w.state(v)
	w.gatherFailures(v, s)
	if v.kind != leaf {
		w.pass(v, s)
		return
	}
	status := w.newStatus(v)
	if w.skipped(v, s, status) {
		return
	}
	q := s.queued
	s.queued = nil
	ev := w.evaluate(v, status, q)
	w.record(v, s, status, ev, len(q))
	if out, ok := w.outgoing(v, s, status, q); ok {
		w.g.send(w.st, w.state, v, out)
	}
}

// gatherFailures collects the failed resources v depends on, directly or
// through the vertices before it.
func (w *walk) gatherFailures(v *vertex, s *vstate) {
	var seen map[*vertex]bool
	add := func(d *vertex) {
		if seen == nil {
			seen = map[*vertex]bool{}
		}
		if !seen[d] {
			seen[d] = true
			s.failedDeps = append(s.failedDeps, d)
		}
	}
	for _, e := range v.in {
		ds := w.state(e.from)
		for _, d := range ds.failedDeps {
			add(d)
		}
		if ds.failed {
			add(e.from)
		}
	}
}

// pass is a container's sentinel: one event on for whatever it heard,
// none when something it depends on failed (Puppet's whits).
func (w *walk) pass(v *vertex, s *vstate) {
	if len(s.failedDeps) > 0 || len(s.queued) == 0 {
		s.queued = nil
		return
	}
	noop := true
	for _, h := range s.queued {
		noop = noop && h.noop
	}
	if noop && v.kind == completed {
		// Puppet's event manager on a container that heard only noop
		// events: "Class[Main]: Would have triggered 'refresh' from 3
		// events", one noop event passed on.
		w.o.Log.current(nil)
		w.log.Log(w.ctx, applier.LevelNotice, v.res.Ref()+": "+refreshMessage("Would have triggered", len(s.queued)))
	}
	s.queued = nil
	w.g.send(w.st, w.state, v, []heard{{noop: noop}})
}

// newStatus is v's status, added to the report.
func (w *walk) newStatus(v *vertex) *report.Status {
	status := &report.Status{Resource: v.res.Ref(), Type: v.res.Type, Title: v.res.Title, Path: v.path, Containment: v.elems,
		File: v.res.File, Line: v.res.Line, Tags: v.res.Tags, Time: w.o.Now()}
	if v.typ != nil && len(v.typ.Providers) == 1 {
		// Known before anything is applied (Puppet names it for a
		// skipped resource too); else the answer names it.
		status.Provider = v.typ.Providers[0].Name
	}
	w.rep.Statuses = append(w.rep.Statuses, status)
	return status
}

// skipped reports whether v is not applied this run (the run was
// stopped, --tags/--skip_tags, its schedule, a failed dependency), and
// records it so.
func (w *walk) skipped(v *vertex, s *vstate, status *report.Status) bool {
	if w.ctx.Err() != nil {
		status.Skipped = true
		status.Provider = skippedProvider(w.app, v, status.Provider)
		w.rep.Incomplete = true
		w.store.record(status, v)
		return true
	}
	o, log := w.o, w.log
	o.Log.current(v)
	skip := ""
	switch {
	case len(o.SkipTags) > 0 && tagged(v.res, o.SkipTags):
		log.Debug(v.path + ": Skipping with skip tags " + strings.Join(o.SkipTags, ", "))
		skip = "tags"
	case len(o.Tags) > 0 && !tagged(v.res, o.Tags):
		log.Debug(v.path + ": Not tagged with " + strings.Join(o.Tags, ", "))
		skip = "tags"
	case !w.sched.allows(v, o.Now()):
		log.Debug(v.path + ": Not scheduled")
		skip = "schedule"
	case len(s.failedDeps) > 0:
		for _, d := range s.failedDeps {
			if d.kind == leaf {
				log.Log(w.ctx, applier.LevelNotice, v.path+": Dependency "+d.res.Ref()+" has failures: true")
			}
		}
		log.Warn(v.path + ": Skipping because of failed dependencies")
		skip = "failed"
	}
	if skip == "" {
		return false
	}
	status.Skipped = true
	status.Provider = skippedProvider(w.app, v, status.Provider)
	s.queued = nil
	o.Log.current(nil)
	w.store.record(status, v)
	return true
}

// evaluation is what applying one resource gave: its answer, and the
// audited properties' values read before (nil: none).
type evaluation struct {
	res        protocol.Result
	auditNames []string
	auditCur   map[string]any
}

// evaluate applies v (its audited values read first), the resources it
// generates reported into status as statuses of their own.
func (w *walk) evaluate(v *vertex, status *report.Status, q []heard) evaluation {
	status.Scheduled = true
	t0 := time.Now()
	w.o.Log.heard(len(q))
	var ev evaluation
	if a, ok := v.res.Params["audit"]; ok {
		ev.auditNames = auditNames(a)
	}
	if err := auditCheck(v, ev.auditNames); err != nil {
		w.log.Error(v.path + ": " + err.Error())
		ev.res = protocol.Result{Resource: v.res.Ref(), Failed: true, Error: true, Exception: err.Error()}
		ev.auditNames = nil
	} else {
		if len(ev.auditNames) > 0 {
			cur, names, err := auditBefore(w.runCtx, w.app, v, ev.auditNames)
			if err != nil {
				w.log.Warn(v.path + ": not audited: " + err.Error())
			}
			ev.auditCur, ev.auditNames = cur, names
		}
		byRef := map[string]*report.Status{} // a large tree reports many children
		ctx := applier.WithGenerated(w.runCtx, func(gen applier.Generated) { addGenerated(status, v, gen, byRef) })
		ev.res = w.g.applyOne(ctx, w.app, v, q, w.o.Sources, w.log)
		w.g.takeChanges(ev.res.RunChanges)
	}
	status.EvaluationTime = time.Since(t0)
	w.o.Log.current(nil)
	return ev
}

// record fills v's status from its evaluation: the events (those of a
// type reported as the resource it generates given to it), the audit,
// the transaction store, the corrective changes; the generated
// resources' statuses follow it in the report.
func (w *walk) record(v *vertex, s *vstate, status *report.Status, ev evaluation, heardN int) {
	res := ev.res
	if v.typ != nil && v.typ.ReportAs != nil {
		// The events belong to the resource Puppet's type generates,
		// reported even when it has none.
		as := v.typ.ReportAs(v.res.Title, v.res.Params)
		generatedStatus(status, as, v)
		for i := range res.Events {
			if _, _, gen := generatedEvent(res.Events[i].Property); !gen {
				res.Events[i].Property = as + "/" + res.Events[i].Property
			}
		}
	}
	s.failed = w.g.record(status, v, res, heardN)
	if res.Provider != "" {
		status.Provider = res.Provider
	}
	for _, gs := range status.Generated {
		if gs.Provider == "" && strings.EqualFold(gs.Type, status.Type) {
			gs.Provider = status.Provider // a child of its own type: its provider
		}
	}
	for i := range status.Events {
		status.Events[i].Time = status.Time.Add(status.EvaluationTime)
	}
	if ev.auditCur != nil && !res.Error {
		w.auds.audit(status, v, ev.auditNames, ev.auditCur, w.log)
	}
	w.store.record(status, v)
	var marks map[string]bool
	for i := range status.Events {
		if e := &status.Events[i]; e.CorrectiveChange {
			key := v.path + "/" + e.Property + "\x00" + e.Message
			w.corrective[key] = true
			if marks == nil {
				marks = map[string]bool{}
			}
			marks[key] = true
			e.Message = withCorrective(e.Message)
		}
	}
	// The change lines held until now are printed, Puppet's suffix on
	// the corrective ones.
	w.o.Log.release(marks)
	w.rep.Statuses = append(w.rep.Statuses, status.Generated...)
	if res.Failed && !loggedFailure(res) {
		msg := res.Exception
		if msg == "" {
			msg = "failed"
		}
		w.log.Error(v.path + ": " + redact(msg, secretStrings(v.res)))
	}
	w.sched.ran(v, w.o.Now())
}

// outgoing are the events v sends along its refresh edges: its changes,
// its generated resources' changes, its refresh (passed on), audit
// events; none (false) when it or a resource it generated failed.
func (w *walk) outgoing(v *vertex, s *vstate, status *report.Status, q []heard) ([]heard, bool) {
	var out []heard
	ownFailed := s.failed && !status.FailedToRestart
	for _, gs := range status.Generated {
		if gs.Failed {
			ownFailed = true
		}
		for _, ev := range gs.Events {
			if ev.Status == protocol.StatusSuccess || ev.Status == protocol.StatusNoop {
				out = append(out, heard{noop: ev.Status == protocol.StatusNoop})
			}
		}
	}
	for _, ev := range status.Events {
		switch {
		case ev.Name == "refresh" || ev.Name == "noop_restart" || ev.Name == "resource_error":
		case ev.Status == protocol.StatusFailure:
			ownFailed = true
		case ev.Status == protocol.StatusSuccess || ev.Status == protocol.StatusNoop:
			out = append(out, heard{noop: ev.Status == protocol.StatusNoop})
		case ev.Status == report.StatusAudit:
			// Puppet queues audit events like changes: subscribers
			// of an audited file hear that it changed behind its back.
			out = append(out, heard{noop: w.o.Noop})
		}
	}
	if ownFailed {
		return nil, false
	}
	if !s.failed {
		live := false
		for _, h := range q {
			live = live || !h.noop
		}
		for _, ev := range status.Events {
			if ev.Name == "refresh" || ev.Name == "noop_restart" {
				out = append(out, heard{noop: ev.Name == "noop_restart"})
			}
		}
		if n := generatedNoops(v, status); n > 0 {
			// Puppet's concat_file hears the noop events of the File it
			// generates: it says so under its path and passes one on.
			w.log.Log(w.ctx, applier.LevelNotice, reportAsPath(v)+": "+refreshMessage("Would have triggered", n))
			out = append(out, heard{noop: true})
		}
		if len(q) > 0 && !live && v.typ != nil && v.typ.Refreshes {
			// Heard noop events only: Puppet says what it would have
			// done and passes a noop event on.
			w.log.Log(w.ctx, applier.LevelNotice, v.path+": "+refreshMessage("Would have triggered", len(q)))
			out = append(out, heard{noop: true})
		}
	}
	if len(out) > 0 {
		for _, e := range v.out {
			if t := e.to; e.refresh && t.kind == leaf && (t.typ == nil || t.typ.Refreshes) {
				// Puppet's event manager says so on the resource that
				// sends the event.
				w.log.Info(v.path + ": Scheduling refresh of " + t.res.Ref())
			}
		}
	}
	return out, true
}

// generatedNoops is, for a resource whose events are reported as those
// of the resource Puppet's type generates (applier.Type.ReportAs), how
// many of them are noop events (none unless all are: a real change is
// not heard by Puppet's generating resource).
func generatedNoops(v *vertex, status *report.Status) int {
	if v.typ == nil || v.typ.ReportAs == nil {
		return 0
	}
	n := 0
	events := status.Events
	for _, gs := range status.Generated {
		events = append(events[:len(events):len(events)], gs.Events...)
	}
	for _, ev := range events {
		switch {
		case ev.Name == "refresh" || ev.Name == "noop_restart" || ev.Status == report.StatusAudit:
		case ev.Status == protocol.StatusNoop:
			n++
		default:
			return 0
		}
	}
	return n
}

// reportAsPath is the name Puppet's log gives a generating resource: its
// path parameter, else its title (a concat_file's target).
func reportAsPath(v *vertex) string {
	if p, ok := v.res.Params["path"].(string); ok && p != "" {
		return p
	}
	return v.res.Title
}

// finish saves the state kept between runs, logs the run's last line and
// completes the report.
func (w *walk) finish() *report.Report {
	w.o.Log.release(nil)
	w.sched.save(w.log)
	w.auds.save(w.log)
	rep := w.rep
	rep.Duration = w.o.Now().Sub(w.start)
	w.log.Log(w.ctx, applier.LevelNotice, fmt.Sprintf("Applied catalog in %.2f seconds", rep.Duration.Seconds()))
	w.store.save(w.log)
	rep.Logs = w.o.Log.take()
	for i := range rep.Logs {
		// Puppet's line of a corrective change says so.
		if l := &rep.Logs[i]; len(w.corrective) > 0 && w.corrective[l.Source+"\x00"+l.Message] {
			delete(w.corrective, l.Source+"\x00"+l.Message)
			l.Message = withCorrective(l.Message)
		}
	}
	rep.Finish()
	return rep
}

// providerNamer is an Applier that names the provider a request would
// use without applying it (engine.Session, delegate.Applier).
type providerNamer interface {
	ProviderName(*protocol.Request) string
}

// skippedProvider is a skipped resource's provider_used: known is the
// type's only provider, else the one app would choose (Puppet's report
// names the provider of a resource it skips: a package's default apt,
// the provider parameter when given).
func skippedProvider(app protocol.Applier, v *vertex, known string) string {
	n, ok := app.(providerNamer)
	if known != "" || !ok {
		return known
	}
	params := make(map[string]any, len(v.res.Params))
	for k, x := range v.res.Params {
		if !walkOnly[k] {
			params[k] = x
		}
	}
	return n.ProviderName(&protocol.Request{Type: strings.ToLower(v.res.Type), Title: v.res.Title, Params: params, Op: protocol.OpApply})
}

// prestarter is an Applier that delegates some types to a process it can
// start ahead (delegate.Applier).
type prestarter interface {
	Delegates(*protocol.Request) bool
	Prestart(ctx context.Context)
}

// prestart starts the Applier's delegate in the background when some
// resource of the catalog will go to it: Puppet's start overlaps the
// native resources walked before the first delegated one.
func (g *Graph) prestart(ctx context.Context, app protocol.Applier) {
	p, ok := app.(prestarter)
	if !ok {
		return
	}
	seen := map[string]bool{}
	for _, v := range g.leaves {
		t := strings.ToLower(v.res.Type)
		if seen[t] {
			continue
		}
		seen[t] = true
		if p.Delegates(&protocol.Request{Type: t, Title: v.res.Title, Op: protocol.OpApply}) {
			go p.Prestart(context.WithoutCancel(ctx))
			return
		}
	}
}

// send queues events along v's refresh edges: to a container's sentinel,
// or to a resource of a type that refreshes (types the engine does not
// know are given them: their Applier decides).
func (g *Graph) send(st map[*vertex]*vstate, get func(*vertex) *vstate, v *vertex, events []heard) {
	if len(events) == 0 {
		return
	}
	for _, e := range v.out {
		if !e.refresh {
			continue
		}
		t := e.to
		if t.kind == leaf && t.typ != nil && !t.typ.Refreshes {
			continue
		}
		ts := get(t)
		ts.queued = append(ts.queued, events...)
	}
}

// ordering and walk metaparameters: the catalog's, not the engine's.
var walkOnly = map[string]bool{
	"before": true, "require": true, "notify": true, "subscribe": true,
	"schedule": true, "stage": true, "tag": true, "alias": true,
	"audit": true,
}

// applyOne applies one resource, with Refresh when it heard events that
// were not all noop.
func (g *Graph) applyOne(ctx context.Context, app protocol.Applier, v *vertex, q []heard, sources func(string) (string, bool), log *slog.Logger) protocol.Result {
	ref := v.res.Ref()
	if v.res.deferred != "" {
		msg := fmt.Sprintf("%s: parameter %s is a Deferred value, which pippet cannot evaluate: compile the catalog with the values resolved (Puppet's preprocess_deferred) or apply it with puppet", ref, v.res.deferred)
		log.Error(v.path + ": " + msg)
		return protocol.Result{Resource: ref, Failed: true, Error: true, Exception: msg}
	}
	params := make(map[string]any, len(v.res.Params))
	for k, x := range v.res.Params {
		if !walkOnly[k] {
			params[k] = x
		}
	}
	if len(v.res.Secrets) > 0 {
		// The type shows nothing derived from a secret (a diff, a
		// checksum, a command's output), as Puppet's sensitive parameters.
		names := make([]any, len(v.res.Secrets))
		for i, n := range v.res.Secrets {
			names[i] = n
		}
		params["sensitive_parameters"] = names
	}
	if src, ok := params["source"]; ok && sources != nil && strings.EqualFold(v.res.Type, "file") {
		params["source"] = mapSources(src, sources)
	}
	req := &protocol.Request{Type: strings.ToLower(v.res.Type), Title: v.res.Title, Params: params}
	live := false
	for _, h := range q {
		live = live || !h.noop
	}
	if len(q) > 0 && live {
		req.Refresh = true
	}
	return app.Apply(ctx, req)
}

// record fills a resource's status from its answer and reports whether
// the resource failed. heardN is how many events it heard (the count its
// refresh event names).
func (g *Graph) record(s *report.Status, v *vertex, res protocol.Result, heardN int) bool {
	s.Failed = res.Failed
	s.Changed = res.Changed
	if res.Exception != "" && len(res.Events) == 0 && res.Failed {
		s.Events = append(s.Events, report.Event{Status: protocol.StatusFailure, Message: redact(res.Exception, secretStrings(v.res)), Name: "resource_error"})
	}
	secret := map[string]bool{}
	for _, p := range v.res.Secrets {
		secret[p] = true
	}
	secrets := secretStrings(v.res)
	for _, e := range res.Events {
		ev := report.Event{Property: e.Property, Previous: e.Previous, Desired: e.Desired, Message: redact(e.Message, secrets), Status: e.Status}
		if e.Property == "refresh" {
			ev.Property, ev.Previous, ev.Desired = "", nil, nil
			ev.Name = "refresh"
			switch e.Status {
			case protocol.StatusSuccess:
				ev.Message = refreshMessage("Triggered", heardN)
			case protocol.StatusNoop:
				ev.Message = refreshMessage("Would have triggered", heardN)
				ev.Name = "noop_restart"
			case protocol.StatusFailure:
				msg := e.Message
				if i := strings.Index(msg, ", which failed: "); i >= 0 {
					msg = msg[i+len(", which failed: "):]
				}
				// The command's output was logged as it came (returns lines,
				// as Puppet logs it); the event keeps the error alone.
				msg, _, _ = strings.Cut(msg, "; last output:")
				ev.Message = "Failed to call refresh: " + redact(msg, secrets)
				ev.Name = "resource_error"
				s.FailedToRestart = true
			}
		} else if gref, prop, ok := generatedEvent(e.Property); ok {
			// A resource Puppet generated for this one (a concat_file's
			// File): its own status, beside this one's, as Puppet reports it.
			gs := generatedStatus(s, gref, v)
			if prop == "" && e.Status == "unchanged" {
				continue // the bridge's marker of a generated resource with nothing to do
			}
			ev.Property = prop
			if prop == "refresh" || prop == "" {
				ev.Property = ""
			}
			typ, _, _ := parseRef(gref)
			ev.Name = eventName(typ, prop, e.Desired)
			gs.Events = append(gs.Events, ev)
			gs.OutOfSync = true
			switch e.Status {
			case protocol.StatusSuccess:
				gs.Changed = true
			case protocol.StatusFailure:
				gs.Failed = true
			}
			continue
		} else {
			ev.Name = eventName(v.res.Type, e.Property, e.Desired)
			ev.Previous, ev.Desired = reportValues(v.res.Type, e.Property, ev.Previous, ev.Desired)
			if secret[e.Property] {
				ev.Previous, ev.Desired, ev.Redacted = "[redacted]", "[redacted]", true
				if e.Status == protocol.StatusNoop {
					ev.Message = "current_value [redacted], should be [redacted] (noop)"
				} else {
					ev.Message = "changed [redacted] to [redacted]"
				}
			}
		}
		s.Events = append(s.Events, ev)
	}
	s.OutOfSync = len(s.Events) > 0
	if len(s.Generated) > 0 {
		// The changes and failures are the generated resources'; this
		// one failed only if something of its own did.
		s.Changed, s.Failed = false, res.Error
		for _, e := range s.Events {
			s.Changed = s.Changed || e.Status == protocol.StatusSuccess
			s.Failed = s.Failed || e.Status == protocol.StatusFailure
		}
		if res.Failed && !s.Failed {
			failedGen := false
			for _, g := range s.Generated {
				failedGen = failedGen || g.Failed
			}
			s.Failed = !failedGen
		}
	}
	if s.FailedToRestart {
		s.Changed = false
		for _, e := range s.Events {
			if e.Name != "resource_error" && e.Status == protocol.StatusSuccess {
				s.Changed = true
			}
		}
	}
	return s.Failed
}

// loggedFailure: the engine logged the failure itself (a change that
// failed); an error before any change (validation, Get) it did not.
func loggedFailure(res protocol.Result) bool {
	if res.Error {
		return false
	}
	for _, e := range res.Events {
		if e.Status == protocol.StatusFailure {
			return true
		}
	}
	return false
}

// generatedEvent splits a delegated answer's event property naming a
// resource Puppet generated: "File[/etc/motd]/content".
func generatedEvent(prop string) (ref, rest string, ok bool) {
	i := strings.Index(prop, "]/")
	if i <= 0 || prop[0] < 'A' || prop[0] > 'Z' || !strings.Contains(prop[:i], "[") {
		return "", "", false
	}
	return prop[:i+1], prop[i+2:], true
}

// generatedStatus returns the status of a resource generated for v, made on
// first use.
func generatedStatus(s *report.Status, ref string, v *vertex) *report.Status {
	for _, g := range s.Generated {
		if g.Resource == ref {
			return g
		}
	}
	return newGenerated(s, ref, v)
}

// newGenerated adds to s the status of a resource generated for v.
func newGenerated(s *report.Status, ref string, v *vertex) *report.Status {
	typ, title, _ := parseRef(ref)
	elems := append(append([]string{}, v.elems[:len(v.elems)-1]...), ref)
	g := &report.Status{Resource: ref, Type: typ, Title: title, Path: "/" + strings.Join(elems, "/"), Containment: elems,
		Tags: v.res.Tags, Time: s.Time, Scheduled: true}
	s.Generated = append(s.Generated, g)
	return g
}

// addGenerated records what a provider reported of a resource it
// generated for v (a recursive file's child): its status beside v's, as
// Puppet reports it, and the event if any. byRef finds the statuses
// made so far.
func addGenerated(s *report.Status, v *vertex, gen applier.Generated, byRef map[string]*report.Status) {
	ref := protocol.Ref(gen.Type, gen.Title)
	gs := byRef[ref]
	if gs == nil {
		// Every status made while v is applied is in byRef.
		gs = newGenerated(s, ref, v)
		byRef[ref] = gs
	}
	gs.Tags = generatedTags(gen.Type, v.res.Tags)
	if gen.Provider != "" {
		gs.Provider = gen.Provider
	}
	e := gen.Event
	if e == nil {
		return
	}
	ev := report.Event{Property: e.Property, Previous: e.Previous, Desired: e.Desired, Message: redact(e.Message, secretStrings(v.res)),
		Status: e.Status, Name: eventName(gen.Type, e.Property, e.Desired)}
	gs.Events = append(gs.Events, ev)
	gs.OutOfSync = true
	switch e.Status {
	case protocol.StatusSuccess:
		gs.Changed = true
	case protocol.StatusFailure:
		gs.Failed = true
	}
}

func refreshMessage(verb string, n int) string {
	if n == 1 {
		return verb + " 'refresh' from 1 event"
	}
	return fmt.Sprintf("%s 'refresh' from %d events", verb, n)
}

// reportValues are an event's values as Puppet's report gives them: a
// property with no current value was absent (the word the engine's
// messages use too), and exec's exit codes are strings.
func reportValues(typ, prop string, prev, desired any) (any, any) {
	if prev == nil {
		prev = "absent"
	}
	prev, desired = plainValue(prev), plainValue(desired)
	if prop == "returns" && strings.EqualFold(typ, "exec") {
		if list, ok := desired.([]any); ok {
			out := make([]any, len(list))
			for i, c := range list {
				out[i] = fmt.Sprint(c)
			}
			desired = out
		}
	}
	return prev, desired
}

// plainValue is a value as the report writes it: a type's own value (a
// file's content as read: its digest) by its String form, not its
// fields (which the report would write as {}).
func plainValue(v any) any {
	switch v.(type) {
	case nil, string, bool, int, int64, float64, []any, map[string]any, []string:
		return v
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return v
}

// eventName is Puppet's name for a property's event: the name a type
// gives a property's or a value's event (exec's returns:
// executed_command, service's enable: service_enabled, ...); ensure's by
// the value it moved to (file_created, service_started,
// package_installed, TYPE_removed); any other property's
// PROPERTY_changed.
func eventName(typ, prop string, desired any) string {
	t := strings.ToLower(typ)
	d, _ := desired.(string)
	switch {
	case t == "exec" && prop == "returns":
		return "executed_command"
	case t == "service" && prop == "enable":
		switch d {
		case "true":
			return "service_enabled"
		case "false", "mask":
			return "service_disabled"
		case "manual":
			return "service_manual_start"
		case "delayed":
			return "service_delayed_start"
		}
	}
	if prop != "ensure" {
		return prop + "_changed"
	}
	switch t {
	case "file":
		switch d {
		case "file", "present":
			return "file_created"
		case "directory":
			return "directory_created"
		case "link":
			return "link_created"
		case "absent":
			return "file_removed"
		}
	case "service":
		switch d {
		case "running", "true":
			return "service_started"
		case "stopped", "false":
			return "service_stopped"
		}
	case "package":
		switch d {
		case "absent":
			return "package_removed"
		case "purged":
			return "package_purged"
		case "held":
			return "package_held"
		default:
			return "package_installed"
		}
	}
	switch d {
	case "present":
		return t + "_created"
	case "absent":
		return t + "_removed"
	}
	return t + "_changed"
}

// tagged: the resource carries one of tags (compared in lower case).
func tagged(r *Resource, tags []string) bool {
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		for _, rt := range r.Tags {
			if strings.ToLower(rt) == t {
				return true
			}
		}
		if strings.ToLower(r.Type) == t {
			return true
		}
		for _, x := range stringsOf(r.Params["tag"]) {
			if strings.ToLower(x) == t {
				return true
			}
		}
	}
	return false
}
