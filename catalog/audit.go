package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/report"
)

// audits is the walk's audit state: per resource, the values its audited
// properties had when it was last applied (Puppet keeps them in
// state.yaml; pippet in its own state directory).
type audits struct {
	file    string
	rec     map[string]map[string]any // ref → property → value
	changed bool
}

// loadAudits reads the audit state file ("" keeps none: every audited
// value is newly recorded on every run).
func loadAudits(file string, log *slog.Logger) *audits {
	a := &audits{file: file, rec: map[string]map[string]any{}}
	if file == "" {
		return a
	}
	data, err := sysfile.ReadRegular(file, 0)
	if err != nil {
		if !os.IsNotExist(err) {
			log.Warn(fmt.Sprintf("audit state %s is not readable (%v): starting afresh", file, err))
		}
		return a
	}
	if err := json.Unmarshal(data, &a.rec); err != nil {
		log.Warn(fmt.Sprintf("audit state %s is not readable (%v): starting afresh", file, err))
		a.rec = map[string]map[string]any{}
	}
	return a
}

// save writes the state file when a run recorded something.
func (a *audits) save(log *slog.Logger) {
	if a.file == "" || !a.changed {
		return
	}
	saveState(a.file, "audit state", a.rec, log)
}

// auditNames reads a resource's audit metaparameter: a name or a list of
// names, "all" meaning every property the resource reports.
func auditNames(v any) []string {
	var out []string
	add := func(x any) {
		if s, ok := x.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			add(e)
		}
	case []string:
		for _, e := range x {
			add(e)
		}
	default:
		add(x)
	}
	return out
}

// auditCheck validates the audited names against the type's declaration
// (a type pippet delegates is checked against what its find reports):
// Puppet refuses an attribute the type lacks.
func auditCheck(v *vertex, names []string) error {
	if v.typ == nil {
		return nil
	}
	for _, n := range names {
		if n == "all" {
			continue
		}
		if a := v.typ.Attr(n); a == nil || a.Behaviour != applier.Property && a.Behaviour != applier.ReadOnly {
			return fmt.Errorf("Cannot audit %s: not a valid attribute for %s", n, v.res.Ref())
		}
	}
	return nil
}

// auditBefore reads the resource's current values of its audited
// properties (before anything is synced: what Puppet compares and
// records).
func auditBefore(ctx context.Context, app protocol.Applier, v *vertex, names []string) (map[string]any, []string, error) {
	// The resource is read where its parameters say (a host's target, an
	// ini_setting's path and section, a file titled apart from its path),
	// not by its title alone; its properties are what is read, not given.
	var params map[string]any
	if v.typ != nil {
		params = map[string]any{}
		for k, x := range v.res.Params {
			if a := v.typ.Attr(k); a != nil && a.Behaviour != applier.Property && a.Behaviour != applier.ReadOnly || k == "provider" {
				params[k] = x
			}
		}
	}
	res := app.Apply(ctx, &protocol.Request{Type: strings.ToLower(v.res.Type), Title: v.res.Title, Params: params, Op: protocol.OpFind})
	if res.Failed {
		return nil, nil, fmt.Errorf("could not read the audited values: %s", res.Exception)
	}
	cur := make(map[string]any, len(res.State))
	var order []string
	all := false
	for _, n := range names {
		all = all || n == "all"
	}
	for _, p := range res.State {
		cur[p.Name] = p.Value
		if all {
			order = append(order, p.Name)
		}
	}
	if !all {
		order = names
	}
	return cur, order, nil
}

// audit records the audited values and adds Puppet's audit events to the
// resource's status: a synced property's change notes the value recorded
// before it; an unmanaged one that differs from the recorded value gets
// an event of status audit (which, as in Puppet, refreshes subscribers);
// a first sighting is logged as newly recorded.
func (a *audits) audit(s *report.Status, v *vertex, names []string, cur map[string]any, log *slog.Logger) {
	ref := v.res.Ref()
	hist, seen := a.rec[ref]
	synced := map[string]int{}
	for i, e := range s.Events {
		if e.Property != "" {
			synced[e.Property] = i
		}
	}
	quote := func(n string, x any) string {
		var attr *applier.Attr
		if v.typ != nil {
			attr = v.typ.Attr(n)
		}
		return applier.QuoteValue(attr, x)
	}
	rec := make(map[string]any, len(names))
	for _, n := range names {
		c := cur[n]
		rec[n] = c
		h, had := hist[n]
		had = had && seen
		same := had && reflect.DeepEqual(h, c)
		if i, ok := synced[n]; ok {
			e := &s.Events[i]
			e.Audited = true
			if had {
				e.Historical = h
				if !same {
					e.Message += " (previously recorded value was " + quote(n, h) + ")"
				}
			}
			continue
		}
		if !had {
			log.Log(context.Background(), applier.LevelNotice, fmt.Sprintf("%s/%s: audit change: newly-recorded value %s", v.path, n, applier.FormatValue(c)))
			continue
		}
		if same {
			continue
		}
		msg := fmt.Sprintf("audit change: previously recorded value %s has been changed to %s", quote(n, h), quote(n, c))
		log.Log(context.Background(), applier.LevelNotice, v.path+"/"+n+": "+msg)
		s.Events = append(s.Events, report.Event{Property: n, Previous: c, Historical: h, Audited: true,
			Message: msg, Status: report.StatusAudit, Name: eventName(v.res.Type, n, nil)})
	}
	a.rec[ref] = rec
	a.changed = true
}
