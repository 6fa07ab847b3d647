package applier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/pippet/pippet/protocol"
)

// Engine applies requests against a Registry of types. It is safe for use
// by one goroutine at a time per resource; the receiver applies in order.
type Engine struct {
	reg *Registry
	env *Env
	// prov caches per-provider confinement verdicts (*ProviderSpec → *provInfo).
	prov sync.Map
	// order caches each type's statically suitable providers by preference
	// (*Type → []*ProviderSpec).
	order sync.Map
	// spare holds *Resource values done with, whose slots the next request
	// reuses.
	spare sync.Pool
}

// NewEngine returns an engine over reg; env's zero fields get defaults
// (facts read once, the features of this process, a discarding logger,
// an empty cache, the default state directory). env may be nil.
func NewEngine(reg *Registry, env *Env) *Engine {
	if env == nil {
		env = &Env{}
	}
	if env.Facts == nil {
		env.Facts = LoadFacts()
	}
	if env.Features == nil {
		env.Features = DefaultFeatures()
	}
	if env.Log == nil {
		env.Log = discardLogger
	}
	if env.Cache == nil {
		env.Cache = &Cache{}
	}
	if env.Options.StateDir == "" {
		env.Options.StateDir = DefaultStateDir()
	}
	return &Engine{reg: reg, env: env}
}

// DefaultFeatures are the features of this process: "posix", and "root"
// when running with effective uid 0.
func DefaultFeatures() map[string]bool {
	f := map[string]bool{"posix": true}
	if os.Geteuid() == 0 {
		f["root"] = true
	}
	return f
}

var discardLogger = slog.New(slog.DiscardHandler)

// Logger returns the environment's logger, or one that discards when the
// Env or its Log is nil.
func (env *Env) Logger() *slog.Logger {
	if env == nil || env.Log == nil {
		return discardLogger
	}
	return env.Log
}

// Env returns the engine's environment.
func (e *Engine) Env() *Env { return e.env }

// Registry returns the engine's registry.
func (e *Engine) Registry() *Registry { return e.reg }

// Apply evaluates one request. It never panics: a panic in a type or
// provider becomes an error answer naming the resource (this is the one
// place that recovers; the receiver loop relies on it). The request's id
// is not copied into the answer: the loop echoes it, for any Applier.
func (e *Engine) Apply(ctx context.Context, req *protocol.Request) (res protocol.Result) {
	defer func() {
		if p := recover(); p != nil {
			ref := protocol.Ref(req.Type, req.Title)
			if t, ok := e.reg.Lookup(req.Type); ok {
				ref = protocol.Ref(t.Name, req.Title)
			}
			e.env.Logger().Error("panic while applying "+ref, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res = protocol.ErrorResult(ref, fmt.Sprintf("%s: internal error: %v", ref, p))
		}
	}()
	return e.apply(ctx, req)
}

func (e *Engine) apply(ctx context.Context, req *protocol.Request) protocol.Result {
	if req.Op != protocol.OpApply {
		return e.verb(ctx, req)
	}
	t, ok := e.reg.Lookup(req.Type)
	if !ok {
		return protocol.ErrorResult(protocol.Ref(req.Type, req.Title), fmt.Sprintf("unknown resource type '%s'%s", req.Type, e.reg.suggestType(req.Type)))
	}
	reuse, _ := e.spare.Get().(*Resource)
	r, err := e.memoBuild(t, reuse, req)
	if err != nil {
		return protocol.ErrorResult(protocol.Ref(t.Name, req.Title), err.Error())
	}
	ref := r.Ref()
	for _, m := range r.Ignored {
		e.env.Log.Debug(ref + ": metaparameter '" + m + "' ignored; ordering and tagging belong to the caller")
	}
	spec, err := e.SelectProvider(r)
	if err != nil {
		return protocol.ErrorResult(ref, err.Error())
	}
	r.spec = spec
	r.Refresh = req.Refresh
	p, err := spec.New(r, e.env)
	if err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			if pe.Resource == "" {
				pe.Resource = ref
			}
			return protocol.ErrorResult(ref, err.Error())
		}
		return protocol.ErrorResult(ref, fmt.Sprintf("%s: provider %s: %v", ref, spec.Name, err))
	}
	res := e.Converge(ctx, r, p)
	// Nothing refers to r any more: the result holds values, not the
	// maps, and the provider p is dropped here.
	e.spare.Put(r)
	return res
}

// Converge runs one resource's transaction with a bound provider: read the
// current state; if ensure is managed and out of sync, sync only ensure;
// else, unless the resource is absent, sync each managed out-of-sync
// property in declaration order. Noop records the events only.
func (e *Engine) Converge(ctx context.Context, r *Resource, p Provider) protocol.Result {
	ref := r.Ref()
	ix, err := r.Type.index()
	if err != nil {
		return protocol.ErrorResult(ref, err.Error())
	}
	// t (and the Result in it) stays on the stack: no allocation per request.
	t := &txn{e: e, ctx: ctx, r: r, p: p, res: protocol.Result{Resource: ref, Noop: r.Noop}}
	res := &t.res
	if rs, ok := p.(Resolver); ok {
		if err := rs.Resolve(ctx); err != nil {
			res.Failed = true
			res.Exception = fmt.Sprintf("Could not evaluate %s: %v", ref, err)
			return *res
		}
	}
	// From here on desired values are settled: Get only reads.
	r.frozen = true
	cur := &r.cur
	cur.reset(ix, ref)
	if err := p.Get(ctx, cur); err != nil {
		res.Failed = true
		res.Exception = fmt.Sprintf("Could not evaluate %s: %v", ref, err)
		return *res
	}
	synced := false
	if a := ix.ensure; a != nil {
		should, managed := r.at(ix.ensureSlot)
		is := cur.at(ix.ensureSlot)
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
		for i, a := range ix.properties {
			should, managed := r.at(ix.propSlots[i])
			if !managed {
				continue
			}
			if !r.manages(a) {
				if r.flags[ix.propSlots[i]]&slotGiven != 0 {
					e.env.Log.Debug(fmt.Sprintf("%s: Provider %s does not support features %s; not managing attribute %s",
						ref, r.spec.Name, strings.Join(a.Features, ", "), a.Name))
				}
				continue
			}
			is := cur.at(ix.propSlots[i])
			if insync(a, is, should) {
				continue
			}
			t.sync(a, is, should)
		}
	}
	if t.applied {
		if f, ok := p.(Flusher); ok {
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

type txn struct {
	e       *Engine
	ctx     context.Context
	r       *Resource
	p       Provider
	res     protocol.Result
	applied bool // a Set succeeded
}

func (t *txn) sync(a *Attr, is, should any) {
	ref := t.r.Ref()
	ev := protocol.Event{Property: a.Name, Previous: is, Desired: should}
	log := t.e.env.Log
	if t.r.Noop {
		ev.Status = protocol.StatusNoop
		ev.Message = "current_value " + quoteValue(a, is) + ", should be " + quoteValue(a, should) + " (noop)"
		t.res.Events = append(t.res.Events, ev)
		t.log(a.Name, ev.Message)
		return
	}
	c := &Change{Property: a.Name, Is: is, Should: should, Message: changeMessage(a, is, should)}
	err := t.p.Set(t.ctx, c)
	if len(c.Parts) > 0 {
		t.parts(a, c.Parts)
	}
	if err != nil {
		ev.Status = protocol.StatusFailure
		ev.Message = "change from " + quoteValue(a, is) + " to " + quoteValue(a, should) + " failed: " + err.Error()
		t.res.Failed = true
		if t.res.Exception == "" {
			t.res.Exception = ev.Message
		}
		log.Error("/" + ref + "/" + a.Name + ": " + ev.Message)
	} else if len(c.Parts) == 0 {
		ev.Status = protocol.StatusSuccess
		ev.Message = c.Message
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
func (t *txn) parts(a *Attr, parts []Part) {
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
	rf, ok := t.p.(Refresher)
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

// changeMessage is Puppet's default wording for a change.
func changeMessage(a *Attr, is, should any) string {
	if a.Name == "ensure" {
		switch {
		case isAbsent(is):
			return "created"
		case isAbsent(should):
			return "removed"
		default:
			return "ensure changed " + quoteValue(a, is) + " to " + quoteValue(a, should)
		}
	}
	switch {
	case isAbsent(is):
		return "defined '" + a.Name + "' as " + quoteValue(a, should)
	case isAbsent(should):
		return "undefined '" + a.Name + "' from " + quoteValue(a, is)
	default:
		return a.Name + " changed " + quoteValue(a, is) + " to " + quoteValue(a, should)
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

// quoteValue renders v for a message: scalars in single quotes, arrays as ['a', 'b'].
func quoteValue(a *Attr, v any) string {
	var s string
	if a.Format != nil && v != nil {
		s = a.Format(v)
	} else {
		s = FormatValue(v)
	}
	switch v.(type) {
	case []any, []string, map[string]any:
		return s
	}
	return "'" + s + "'"
}

// insync applies the attribute's notion of in-sync.
func insync(a *Attr, is, should any) bool {
	if a.InSync != nil {
		return a.InSync(is, should)
	}
	return ValuesEqual(is, should, a.Unordered)
}

// ValuesEqual is the default in-sync test: equality of munged values;
// arrays element by element, in order unless unordered. Integers compare
// across int/int64 and strings of digits are not numbers.
func ValuesEqual(is, should any, unordered bool) bool {
	switch s := should.(type) {
	case string:
		i, ok := is.(string)
		return ok && i == s
	case bool:
		i, ok := is.(bool)
		return ok && i == s
	case int64:
		switch i := is.(type) {
		case int64:
			return i == s
		case int:
			return int64(i) == s
		}
		return false
	case nil:
		return is == nil
	case []any:
		il, ok := toList(is)
		if !ok || len(il) != len(s) {
			return false
		}
		if !unordered {
			for k := range s {
				if !ValuesEqual(il[k], s[k], false) {
					return false
				}
			}
			return true
		}
		used := make([]bool, len(il))
	outer:
		for _, sv := range s {
			for k, iv := range il {
				if !used[k] && ValuesEqual(iv, sv, false) {
					used[k] = true
					continue outer
				}
			}
			return false
		}
		return true
	default:
		return reflect.DeepEqual(is, should)
	}
}

func toList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// FoldInSync is an Attr.InSync for values compared case-insensitively
// (host names, hex digests): strings by strings.EqualFold, arrays element
// by element in order.
func FoldInSync(is, should any) bool {
	switch s := should.(type) {
	case string:
		i, ok := is.(string)
		return ok && strings.EqualFold(i, s)
	case []any:
		il, ok := toList(is)
		if !ok || len(il) != len(s) {
			return false
		}
		for k := range s {
			if !FoldInSync(il[k], s[k]) {
				return false
			}
		}
		return true
	}
	return ValuesEqual(is, should, false)
}

// NumericInSync is an Attr.InSync for values that may be read back in
// another numeric form: 3, "3", "03" and 3.0 are all in sync.
func NumericInSync(is, should any) bool {
	a, okA := asNumber(is)
	b, okB := asNumber(should)
	if okA && okB {
		return a == b
	}
	return ValuesEqual(is, should, false)
}

func asNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}
