// Package engine drives pippet's types: it turns one request into a
// converged resource (apply), or reads resources through the same
// providers (find, search), or answers a type's declaration (describe).
// What a type's author writes against is package applier (Type, Attr,
// Provider, State, Env); this package is what runs it, and no type
// imports it.
//
// # One request's way
//
// Engine.Apply is the one entry point and the one place that recovers
// from a panic in a type or provider (the answer is then an error naming
// the resource). Every verb takes the same first steps (prepare): the type
// by name, the request validated into a Resource (applier's declaration
// rules), the provider selected (provider.go) and bound. Then apply and
// find take the same next ones (read): the provider's Resolve settles the
// desired values that depend on the system, the values are frozen, and
// Get reports the current state into a State the engine owns. Apply then
// compares each managed property with its attribute's notion of in-sync
// and syncs what is out of sync (the transaction, Converge); find reports
// the state (verbs.go).
//
// # Sessions
//
// A Session is one stream of request lines through an Engine (a
// receiver's stdin): it owns the decoder, the memo of lines sent again
// and what was built from them, and the spare storage reused from request
// to request (session.go). Nothing outside it keeps a request or its
// resource.
package engine

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/protocol"
)

// Engine applies requests against a Registry of types. It is safe for use
// by one goroutine at a time per resource; the receiver applies in order.
type Engine struct {
	reg *applier.Registry
	env *applier.Env
	// prov caches per-provider confinement verdicts (*ProviderSpec → *provInfo).
	prov sync.Map
	// order caches each type's statically suitable providers by preference
	// (*Type → []*ProviderSpec).
	order sync.Map
	// spare holds *Resource values done with, whose slots the next request
	// reuses.
	spare sync.Pool
}

// New returns an engine over reg; env's zero fields get defaults (facts
// read once, the features of this process, a discarding logger, an empty
// cache, the default state directory). env may be nil.
func New(reg *applier.Registry, env *applier.Env) *Engine {
	if env == nil {
		env = &applier.Env{}
	}
	if env.Facts == nil {
		env.Facts = applier.LoadFacts()
	}
	if env.Features == nil {
		env.Features = applier.DefaultFeatures()
	}
	if env.Log == nil {
		env.Log = env.Logger()
	}
	if env.Cache == nil {
		env.Cache = &applier.Cache{}
	}
	if env.Options.StateDir == "" {
		env.Options.StateDir = applier.DefaultStateDir()
	}
	env.Engine = newApplier
	return &Engine{reg: reg, env: env}
}

// newApplier is Env.Engine: an engine over reg with env.
func newApplier(reg *applier.Registry, env *applier.Env) protocol.Applier { return New(reg, env) }

// Env returns the engine's environment.
func (e *Engine) Env() *applier.Env { return e.env }

// Registry returns the engine's registry.
func (e *Engine) Registry() *applier.Registry { return e.reg }

// Apply answers one request, whatever its op (apply, find, search,
// describe). It never panics: a panic in a type or provider becomes an
// error answer naming the resource (this is the one place that recovers;
// the receiver loop relies on it). The request's id is not copied into
// the answer: the loop echoes it, for any Applier.
func (e *Engine) Apply(ctx context.Context, req *protocol.Request) protocol.Result {
	return e.answer(ctx, req, nil, nil)
}

// answer is Apply with where what building the request's resource gave
// is kept (nil: nowhere; see build and Session).
// prov, when not nil, is given the name of the provider an apply chose.
func (e *Engine) answer(ctx context.Context, req *protocol.Request, kept *any, prov *string) (res protocol.Result) {
	defer func() {
		if p := recover(); p != nil {
			ref := protocol.Ref(req.Type, req.Title)
			if t, ok := e.reg.Lookup(req.Type); ok {
				ref = protocol.Ref(t.Name, req.Title)
			}
			doing := "applying "
			if req.Op != protocol.OpApply {
				doing = "reading "
			}
			e.env.Logger().Error("panic while "+doing+ref, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res = protocol.ErrorResult(ref, fmt.Sprintf("%s: internal error: %v", ref, p))
		}
	}()
	switch req.Op {
	case protocol.OpApply:
		return e.apply(ctx, req, kept, prov)
	case protocol.OpFind:
		return e.find(ctx, req)
	case protocol.OpSearch:
		return e.search(ctx, req)
	case protocol.OpDescribe:
		return e.describe(req)
	case protocol.OpDeclare:
		// The request loop answers a declaration (internal/stream): it
		// sets the run of the requests that follow, nothing the engine
		// applies.
		return protocol.ErrorResult("", "a declaration is answered by the request loop, not applied (internal/stream)")
	}
	return protocol.ErrorResult(protocol.Ref(req.Type, req.Title), protocol.UnknownOp(req.Op.String()))
}

// lookup finds the request's type, or answers that it is unknown (the
// answer names the request's resource, or with typeOnly its type).
func (e *Engine) lookup(req *protocol.Request, typeOnly bool) (*applier.Type, *protocol.Result) {
	t, ok := e.reg.Lookup(req.Type)
	if !ok {
		ref := protocol.RefType(req.Type)
		if !typeOnly {
			ref = protocol.Ref(req.Type, req.Title)
		}
		res := protocol.ErrorResult(ref, fmt.Sprintf("unknown resource type '%s'%s", req.Type, suggest(e.reg, req.Type)))
		return nil, &res
	}
	return t, nil
}

// ProviderName names the provider an apply of req would use, without
// applying it (SelectProvider on the request's resource); "" when the
// type is unknown, the request invalid, or no provider suitable.
func (e *Engine) ProviderName(req *protocol.Request) string {
	t, bad := e.lookup(req, false)
	if bad != nil || len(t.Providers) == 0 {
		return ""
	}
	r, err := build(t, nil, req.Title, req.Params, e.env.Options.Noop, false)
	if err != nil {
		return ""
	}
	spec, err := e.SelectProvider(r)
	if err != nil {
		return ""
	}
	return spec.Name
}

// notKept marks a kept slot whose resource is not to be kept (see build).
var notKept any = struct{}{}

// build validates a request of type t into a Resource, recycling reuse
// (nil: a new one). With kept not nil, the request is one that comes back
// unchanged (a line sent again): what building it gave is kept in *kept
// the first time, and later Resources are made from that instead of being
// built again. A request found not to be kept is marked so and not looked
// at again; an invalid one is answered afresh each time.
func (e *Engine) build(t *applier.Type, reuse *applier.Resource, title string, params map[string]any, read bool, kept *any) (*applier.Resource, error) {
	if kept != nil && *kept != nil {
		if r := restore(*kept, t, reuse); r != nil {
			return r, nil
		}
	}
	r, err := build(t, reuse, title, params, e.env.Options.Noop, read)
	if err != nil {
		return nil, err
	}
	if kept != nil && *kept == nil {
		if k := keep(r); k != nil {
			*kept = k
		} else {
			*kept = notKept
		}
	}
	return r, nil
}

// prepare makes a request of type t into a resource with its provider
// chosen, and bound unless bind is false (a search's scope): the steps
// every verb but describe takes first. fail is the answer when it can't.
func (e *Engine) prepare(t *applier.Type, title string, params map[string]any, read, bind bool, kept *any) (*applier.Resource, applier.Provider, *protocol.Result) {
	var reuse *applier.Resource
	if !read {
		reuse, _ = e.spare.Get().(*applier.Resource)
	}
	r, err := e.build(t, reuse, title, params, read, kept)
	if err != nil {
		return nil, nil, failure(t, title, nil, read, err.Error())
	}
	if !read {
		for _, m := range r.Ignored {
			e.env.Log.Debug(r.Ref() + ": metaparameter '" + m + "' ignored; ordering and tagging belong to the caller")
		}
	}
	spec, err := e.SelectProvider(r)
	if err != nil {
		return nil, nil, failure(t, title, r, read, err.Error())
	}
	choose(r, spec, read)
	if !bind {
		return r, nil, nil
	}
	p, err := spec.New(r, e.env)
	if err != nil {
		if err, ok := named(r, err); ok {
			return nil, nil, failure(t, title, r, read, err.Error())
		}
		return nil, nil, failure(t, title, r, read, fmt.Sprintf("%s: provider %s: %v", r.Ref(), spec.Name, err))
	}
	return r, p, nil
}

// failure is prepare's error answer: it names the resource (as it names
// itself once built), or for a search the type.
func failure(t *applier.Type, title string, r *applier.Resource, read bool, msg string) *protocol.Result {
	ref := protocol.Ref(t.Name, title)
	switch {
	case r != nil && title != "":
		ref = r.Ref()
	case read && title == "":
		ref = protocol.RefType(t.Name)
	}
	res := protocol.ErrorResult(ref, msg)
	return &res
}

// read settles r's desired values (the provider's Resolve, when it is a
// Resolver), freezes them and reads the current state (Get) into the
// State the engine owns for r: the steps apply and find share. An error
// is the resource's failure: Could not evaluate ...
func read(ctx context.Context, r *applier.Resource, p applier.Provider) (cur *applier.State, curVals []any, err error) {
	if rs, ok := p.(applier.Resolver); ok {
		if err := rs.Resolve(ctx); err != nil {
			return nil, nil, err
		}
	}
	// From here on desired values are settled: Get only reads.
	cur, curVals = freeze(r)
	if err := p.Get(ctx, cur); err != nil {
		return nil, nil, err
	}
	return cur, curVals, nil
}

// couldNotEvaluate is the failure of a resource whose state could not be
// read.
func couldNotEvaluate(res *protocol.Result, err error) {
	res.Failed = true
	res.Exception = fmt.Sprintf("Could not evaluate %s: %v", res.Resource, err)
}

func (e *Engine) apply(ctx context.Context, req *protocol.Request, kept *any, prov *string) protocol.Result {
	t, fail := e.lookup(req, false)
	if fail != nil {
		return *fail
	}
	r, p, fail := e.prepare(t, req.Title, req.Params, false, true, kept)
	if fail != nil {
		return *fail
	}
	r.Refresh = req.Refresh
	if prov != nil && r.Provider() != nil {
		*prov = r.Provider().Name
	}
	res := e.Converge(ctx, r, p)
	// Nothing refers to r any more: the result holds values, not the
	// resource, and the provider p is dropped here.
	e.spare.Put(r)
	return res
}

// Converge runs one resource's transaction with a bound provider: read the
// current state; if ensure is managed and out of sync, sync only ensure;
// else, unless the resource is absent, sync each managed out-of-sync
// property in declaration order. Noop records the events only.
func (e *Engine) Converge(ctx context.Context, r *applier.Resource, p applier.Provider) protocol.Result {
	ref := r.Ref()
	ly, vals, flags := view(r)
	// t (and the Result in it) stays on the stack: no allocation per request.
	t := &txn{e: e, ctx: ctx, r: r, p: p, res: protocol.Result{Resource: ref, Noop: r.Noop}}
	res := &t.res
	_, curVals, err := read(ctx, r, p)
	if err != nil {
		couldNotEvaluate(res, err)
		return *res
	}
	spec := r.Provider()
	synced := false
	if s := ly.Ensure; s >= 0 {
		a := ly.Attrs[s]
		should, managed := vals[s], flags[s]&slotSet != 0
		is := curVals[s]
		if managed && !insync(a, is, should) {
			t.sync(a, is, should)
			synced = true
		} else if s, _ := is.(string); s == "absent" {
			// Nothing to manage: no ensure change and the resource doesn't
			// exist. (An unreported ensure counts as present, as in Puppet.)
			synced = true
		}
	}
	if !synced {
		for _, s := range ly.Props {
			if flags[s]&slotSet == 0 {
				continue
			}
			a, should := ly.Attrs[s], vals[s]
			if !manages(spec, a) {
				if flags[s]&slotGiven != 0 {
					e.env.Log.Debug(fmt.Sprintf("%s: Provider %s does not support features %s; not managing attribute %s",
						ref, spec.Name, strings.Join(a.Features, ", "), a.Name))
				}
				continue
			}
			is := curVals[s]
			if insync(a, is, should) {
				continue
			}
			t.sync(a, is, should)
		}
	}
	if t.applied {
		if f, ok := p.(applier.Flusher); ok {
			if err := f.Flush(ctx); err != nil {
				msg := fmt.Sprintf("could not apply the changes: %v", err)
				for i := range res.Events {
					if res.Events[i].Status == protocol.StatusSuccess {
						res.Events[i].Status = protocol.StatusFailure
						res.Events[i].Message += " (" + msg + ")"
					}
				}
				res.Changed = false
				res.Failed = true
				if res.Exception == "" {
					res.Exception = msg
				}
				e.env.Log.Error(ref + ": " + msg)
			}
		}
	}
	if r.Refresh {
		t.refresh()
	}
	return *res
}

// manages reports whether the provider spec has every feature attribute a
// needs; without a spec (a provider driven without the engine's choice),
// it does.
func manages(spec *applier.ProviderSpec, a *applier.Attr) bool {
	if len(a.Features) == 0 || spec == nil {
		return true
	}
	for _, f := range a.Features {
		if !slices.Contains(spec.Features, f) {
			return false
		}
	}
	return true
}

type txn struct {
	e       *Engine
	ctx     context.Context
	r       *applier.Resource
	p       applier.Provider
	res     protocol.Result
	applied bool // a Set succeeded
}

func (t *txn) sync(a *applier.Attr, is, should any) {
	ref := t.r.Ref()
	ev := protocol.Event{Property: a.Name, Previous: is, Desired: should}
	log := t.e.env.Log
	// A secret's values are shown as Puppet shows a sensitive property's.
	secret := t.r.IsSensitive(a.Name)
	quote := func(v any) string {
		if secret {
			return redacted
		}
		return applier.QuoteValue(a, v)
	}
	if secret {
		ev.Previous, ev.Desired = redacted, redacted
	}
	if t.r.Noop {
		if ex, ok := t.p.(applier.NoopExplainer); ok {
			if parts := ex.NoopParts(a.Name); len(parts) > 0 {
				for _, p := range parts {
					pe := protocol.Event{Property: p.Property, Previous: p.Previous, Desired: p.Desired, Message: p.Message, Status: protocol.StatusNoop}
					if pe.Property == "" {
						pe.Property = a.Name
					}
					t.res.Events = append(t.res.Events, pe)
					t.log(pe.Property, pe.Message)
				}
				return
			}
		}
		ev.Status = protocol.StatusNoop
		ev.Message = "current_value " + quote(is) + ", should be " + quote(should) + " (noop)"
		t.res.Events = append(t.res.Events, ev)
		t.log(a.Name, ev.Message)
		return
	}
	c := &applier.Change{Property: a.Name, Is: is, Should: should, Message: changeMessage(a, is, should)}
	err := t.p.Set(t.ctx, c)
	if len(c.Parts) > 0 {
		t.parts(a, c.Parts)
	}
	if c.Generated && err == nil {
		t.applied = true // the generated resources' events say what changed
		return
	}
	if err != nil {
		ev.Status = protocol.StatusFailure
		ev.Message = "change from " + quote(is) + " to " + quote(should) + " failed: " + err.Error()
		t.res.Failed = true
		if t.res.Exception == "" {
			t.res.Exception = ev.Message
		}
		log.Error("/" + ref + "/" + a.Name + ": " + ev.Message)
	} else if len(c.Parts) == 0 {
		ev.Status = protocol.StatusSuccess
		ev.Message = c.Message
		ev.Diff = c.Diff
		if secret {
			ev.Message = "changed " + redacted + " to " + redacted
			ev.Diff = ""
		}
		t.res.Changed = true
		t.applied = true
		t.log(a.Name, ev.Message)
	} else {
		return // the parts are the events
	}
	t.res.Events = append(t.res.Events, ev)
}

// log logs a change at the resource's level; the line is built only
// when the logger takes that level (a notice is not printed by default,
// and a converging engine's changes should not pay for its string).
// The line is /REF/PROPERTY: MESSAGE, or /REF: MESSAGE without a property.
func (t *txn) log(prop, msg string) {
	log := t.e.env.Log
	if !log.Enabled(t.ctx, t.r.LogLevel) {
		return
	}
	if prop == "" {
		log.Log(t.ctx, t.r.LogLevel, "/"+t.r.Ref()+": "+msg)
		return
	}
	log.Log(t.ctx, t.r.LogLevel, "/"+t.r.Ref()+"/"+prop+": "+msg)
}

// parts records one event per part of a change made of many.
func (t *txn) parts(a *applier.Attr, parts []applier.Part) {
	ref := t.r.Ref()
	log := t.e.env.Log
	for _, p := range parts {
		prop := a.Name
		if p.Property != "" {
			prop = p.Property
		}
		ev := protocol.Event{Property: prop, Previous: p.Previous, Desired: p.Desired, Message: p.Message}
		if p.Err != nil {
			ev.Status = protocol.StatusFailure
			ev.Message += " failed: " + p.Err.Error()
			t.res.Failed = true
			if t.res.Exception == "" {
				t.res.Exception = ev.Message
			}
			log.Error("/" + ref + "/" + prop + ": " + ev.Message)
		} else {
			ev.Status = protocol.StatusSuccess
			t.res.Changed = true
			t.applied = true
			t.log(prop, ev.Message)
		}
		t.res.Events = append(t.res.Events, ev)
	}
}

// refresh delivers the request's refresh to a Refresher, once the
// resource's own changes are made and unless they failed.
func (t *txn) refresh() {
	rf, ok := t.p.(applier.Refresher)
	if !ok || !t.r.Refresh || t.res.Failed {
		return
	}
	ref := t.r.Ref()
	ev := protocol.Event{Property: "refresh"}
	if t.r.Noop {
		ev.Status = protocol.StatusNoop
		ev.Message = "Would have triggered 'refresh' from 1 event"
		t.res.Events = append(t.res.Events, ev)
		t.log("", ev.Message)
		return
	}
	msg, err := rf.Refresh(t.ctx)
	switch {
	case err != nil:
		ev.Status = protocol.StatusFailure
		ev.Message = "Triggered 'refresh' from 1 event, which failed: " + err.Error()
		t.res.Failed = true
		if t.res.Exception == "" {
			t.res.Exception = err.Error()
		}
		t.e.env.Log.Error("/" + ref + ": " + ev.Message)
	case msg == "":
		return
	default:
		ev.Status = protocol.StatusSuccess
		ev.Message = "Triggered 'refresh' from 1 event (" + msg + ")"
		t.res.Changed = true
		t.log("", ev.Message)
	}
	t.res.Events = append(t.res.Events, ev)
}

// redacted stands for a secret's value, as Puppet writes it.
const redacted = "[redacted]"

// changeMessage is Puppet's default wording for a change.
func changeMessage(a *applier.Attr, is, should any) string {
	if a.Name == "ensure" {
		switch {
		case isAbsent(is):
			return "created"
		case isAbsent(should):
			return "removed"
		default:
			return "ensure changed " + applier.QuoteValue(a, is) + " to " + applier.QuoteValue(a, should)
		}
	}
	switch {
	case isAbsent(is):
		return "defined '" + a.Name + "' as " + applier.QuoteValue(a, should)
	case isAbsent(should):
		return "undefined '" + a.Name + "' from " + applier.QuoteValue(a, is)
	default:
		return a.Name + " changed " + applier.QuoteValue(a, is) + " to " + applier.QuoteValue(a, should)
	}
}

// isAbsent: nil or the literal "absent".
func isAbsent(v any) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	return ok && s == "absent"
}

// insync applies the attribute's notion of in-sync.
func insync(a *applier.Attr, is, should any) bool {
	if a.InSync != nil {
		return a.InSync(is, should)
	}
	return applier.ValuesEqual(is, should, a.Unordered)
}
