package applier

import (
	"errors"
	"fmt"
	"sort"

	"github.com/pippet/pippet/protocol"
)

// NewResource validates params against the declaration and returns the
// munged Resource: metaparameters, unknown and read-only attributes,
// each value's kind, aliases, values and patterns, Munge and Validate, the
// title (through TitlePatterns) into the namevar, defaults, required
// attributes and finally the type's own Validate. noop is the global
// setting; the request's noop metaparameter, when given, overrides it.
//
// Every error names the resource, and the attribute when one is at fault.
func (t *Type) NewResource(title string, params map[string]any, noop bool) (*Resource, error) {
	return t.buildResource(nil, title, params, noop, buildApply)
}

// buildMode says what a Resource is built for.
type buildMode uint8

const (
	// buildApply: a resource to converge; every rule applies.
	buildApply buildMode = iota
	// buildRead: a resource to read (find) or a scope to list (search):
	// nothing is required beyond the title, and an empty title does not
	// fill the namevar.
	buildRead
)

// buildResource is NewResource building into reuse, when not nil: a
// Resource nothing refers to any more, whose slots are cleared and reused
// (the engine recycles them).
func (t *Type) buildResource(reuse *Resource, title string, params map[string]any, noop bool, mode buildMode) (*Resource, error) {
	ix, err := t.index()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", protocol.Ref(t.Name, title), err)
	}
	r := reuse
	if r == nil {
		r = &Resource{}
	}
	r.reset(t, ix, title, noop)

	// Unknown attributes and metaparameters first. Report the
	// alphabetically first unknown one so the answer is deterministic.
	// The given declared attributes are collected on the way, to be set in
	// declaration order below (a request names a few of a type's many
	// attributes: sorting those beats a lookup per declared attribute).
	var unknown, nilName string
	var givenBuf [16]givenAttr
	given := givenBuf[:0]
	for name, raw := range params {
		if s := ix.names.find(name); s >= 0 {
			if raw == nil && (nilName == "" || name < nilName) {
				nilName = name
			}
			given = append(given, givenAttr{slot: s, raw: raw})
			continue
		}
		kind, meta := metaparams[name]
		if !meta {
			if unknown == "" || name < unknown {
				unknown = name
			}
			continue
		}
		if raw == nil {
			// Puppet refuses a null for any attribute, metaparameters
			// included, before looking at it.
			if nilName == "" || name < nilName {
				nilName = name
			}
			continue
		}
		switch kind {
		case metaNoop:
			b, err := mungeOne(&noopAttr, raw)
			if err != nil {
				return nil, &ParamError{Resource: r.Ref(), Param: name, Err: err}
			}
			// An explicit value wins over the global setting, both ways, as in Puppet.
			r.Noop = b.(bool)
		case metaLoglevel:
			s, err := mungeOne(&loglevelAttr, raw)
			if err != nil {
				return nil, &ParamError{Resource: r.Ref(), Param: name, Err: err}
			}
			r.LogLevel = logLevels[s.(string)]
		case metaSensitive:
			names, ok := sensitiveNames(raw)
			if !ok {
				return nil, &ParamError{Resource: r.Ref(), Param: name, Err: errors.New("must be a parameter name or a list of them")}
			}
			for _, n := range names {
				r.addSensitive(n)
				for _, m := range t.SensitiveWith[n] {
					r.addSensitive(m)
				}
			}
		case metaList, metaOrdering:
			// Accepted; ordering belongs to the caller.
			r.Ignored = append(r.Ignored, name)
		}
	}
	if unknown != "" {
		return nil, fmt.Errorf("no parameter named '%s' on %s%s", unknown, r.Ref(), t.suggestParam(unknown))
	}
	if nilName != "" {
		return nil, fmt.Errorf("Got nil value for %s on %s", nilName, r.Ref())
	}
	if len(r.Ignored) > 1 {
		sort.Strings(r.Ignored)
	}

	// Given attributes, in declaration order (insertion sort: a few); the
	// implicit provider parameter has the last slot.
	for i := 1; i < len(given); i++ {
		for j := i; j > 0 && given[j].slot < given[j-1].slot; j-- {
			given[j], given[j-1] = given[j-1], given[j]
		}
	}
	for _, g := range given {
		if mode == buildRead && title == "" && ix.attrs[g.slot].Behaviour == ReadOnly {
			// A search filters on read-only values too.
			v, err := mungeAttr(ix.attrs[g.slot], g.raw)
			if err != nil {
				return nil, &ParamError{Resource: r.Ref(), Param: ix.attrs[g.slot].Name, Err: err}
			}
			r.vals[g.slot], r.flags[g.slot] = v, r.flags[g.slot]|slotSet|slotGiven
			continue
		}
		if err := r.setRaw(g.slot, g.raw, true); err != nil {
			return nil, err
		}
	}

	if err := r.fromTitle(ix, title, mode); err != nil {
		return nil, err
	}
	if err := r.defaults(ix); err != nil {
		return nil, err
	}

	for _, s := range ix.requiredSlots {
		if r.flags[s]&slotSet == 0 && mode == buildApply {
			return nil, &ParamError{Resource: r.Ref(), Param: ix.attrs[s].Name, Err: errors.New("a value is required")}
		}
	}

	if t.Validate != nil {
		if err := t.Validate(r); err != nil {
			if err, ok := named(r, err); ok {
				return nil, err
			}
			return nil, fmt.Errorf("Validation of %s failed: %w", r.Ref(), err)
		}
	}
	if t.RefTitle != nil {
		r.ref = ix.display + "[" + t.RefTitle(r) + "]"
	}
	return r, nil
}

// fromTitle fills from the title what the request left out: the
// attributes of the first of the type's TitlePatterns that matches, then
// the namevar (unless a search's scope, whose title is empty, is built).
func (r *Resource) fromTitle(ix *typeIndex, title string, mode buildMode) error {
	for _, tp := range r.Type.TitlePatterns {
		m := tp.Re.FindStringSubmatch(title)
		if m == nil {
			continue
		}
		for i, name := range tp.Re.SubexpNames() {
			if name == "" || i >= len(m) {
				continue
			}
			s := ix.names.find(name)
			if s < 0 || r.flags[s]&slotGiven != 0 {
				continue
			}
			if err := r.setRaw(s, m[i], false); err != nil {
				return err
			}
		}
		break
	}
	if s := ix.namevarSlot; s >= 0 && r.flags[s]&slotSet == 0 && (title != "" || mode == buildApply) {
		if err := r.setRaw(s, title, false); err != nil {
			return err
		}
	}
	return nil
}

// defaults fills what is still unset with the declared defaults: static
// ones first, then computed ones (which may read them).
func (r *Resource) defaults(ix *typeIndex) error {
	for i, s := range ix.staticSlots {
		if r.flags[s]&slotSet == 0 {
			r.vals[s], r.flags[s] = ix.staticVals[i], r.flags[s]|slotSet
		}
	}
	for _, s := range ix.defaultSlots {
		if r.flags[s]&slotSet != 0 {
			continue
		}
		a := ix.attrs[s]
		raw := a.DefaultFunc(r)
		if raw == nil {
			continue
		}
		v, err := mungeAttr(a, raw)
		if err != nil {
			return &ParamError{Resource: r.Ref(), Param: a.Name, Err: fmt.Errorf("default: %w", err)}
		}
		r.vals[s], r.flags[s] = v, r.flags[s]|slotSet
	}
	return nil
}

// givenAttr is a declared attribute a request gives, by slot.
type givenAttr struct {
	slot int
	raw  any
}

// setRaw munges raw for the attribute in slot s and stores it.
func (r *Resource) setRaw(s int, raw any, given bool) error {
	a := r.ix.attrs[s]
	if given && a.Behaviour == ReadOnly {
		return &ParamError{Resource: r.Ref(), Param: a.Name, Err: errors.New("is read-only and cannot be set")}
	}
	v, err := mungeAttr(a, raw)
	if err != nil {
		return &ParamError{Resource: r.Ref(), Param: a.Name, Err: err}
	}
	r.vals[s] = v
	r.flags[s] |= slotSet
	if given {
		r.flags[s] |= slotGiven
	}
	return nil
}

var (
	noopAttr     = Attr{Name: "noop", Kind: KindBoolean}
	loglevelAttr = Attr{Name: "loglevel", Kind: KindEnum,
		Values: []string{"debug", "info", "notice", "warning", "err", "alert", "emerg", "crit", "verbose"}}
)

// sensitiveNames reads sensitive_parameters: a name or a list of names.
func sensitiveNames(raw any) ([]string, bool) {
	switch x := raw.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// addSensitive adds name to the resource's secret attributes once.
func (r *Resource) addSensitive(name string) {
	if !r.IsSensitive(name) {
		r.Sensitive = append(r.Sensitive, name)
	}
}
