package applier

import (
	"errors"
	"fmt"
	"sort"
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
	return t.buildResource(nil, title, params, noop)
}

// buildResource is NewResource building into reuse, when not nil: a
// Resource nothing refers to any more, whose maps are cleared and reused
// (the engine recycles them: Values with its defaults is most of what a
// request allocates).
func (t *Type) buildResource(reuse *Resource, title string, params map[string]any, noop bool) (*Resource, error) {
	r := reuse
	if r != nil {
		values, given := r.Values, r.Given
		clear(values)
		clear(given)
		*r = Resource{Type: t, Title: title, Noop: noop, LogLevel: LevelNotice, Values: values, Given: given}
	} else {
		r = &Resource{Type: t, Title: title, Noop: noop, LogLevel: LevelNotice}
	}
	ix, err := t.index()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Ref(), err)
	}
	if r.Values == nil {
		r.Values = make(map[string]any, len(params)+len(ix.staticDefaults)+len(ix.defaultFuncs)+1)
		r.Given = make(map[string]bool, len(params))
	}

	// Unknown attributes and metaparameters first. Report the
	// alphabetically first unknown one so the answer is deterministic.
	// The given declared attributes are collected on the way, to be set in
	// declaration order below (a request names a few of a type's many
	// attributes: sorting those beats a lookup per declared attribute).
	var unknown string
	var givenBuf [16]givenAttr
	given := givenBuf[:0]
	for name, raw := range params {
		if a := ix.attr(name); a != nil {
			if pos, declared := ix.order[a]; declared && raw != nil {
				given = append(given, givenAttr{pos: pos, a: a, raw: raw})
			}
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
		case metaList, metaOrdering:
			// Accepted; ordering belongs to the caller.
			r.Ignored = append(r.Ignored, name)
		}
	}
	if unknown != "" {
		return nil, fmt.Errorf("no parameter named '%s' on %s", unknown, r.Ref())
	}
	if len(r.Ignored) > 1 {
		sort.Strings(r.Ignored)
	}

	// Given attributes, in declaration order (insertion sort: a few).
	for i := 1; i < len(given); i++ {
		for j := i; j > 0 && given[j].pos < given[j-1].pos; j-- {
			given[j], given[j-1] = given[j-1], given[j]
		}
	}
	for _, g := range given {
		if err := r.setRaw(g.a, g.raw, true); err != nil {
			return nil, err
		}
	}
	if ix.providerAttr != nil {
		if raw, ok := params["provider"]; ok && raw != nil {
			if err := r.setRaw(ix.providerAttr, raw, true); err != nil {
				return nil, err
			}
		}
	}

	// The title fills what the request left out.
	for _, tp := range t.TitlePatterns {
		m := tp.Re.FindStringSubmatch(title)
		if m == nil {
			continue
		}
		for i, name := range tp.Re.SubexpNames() {
			if name == "" || i >= len(m) {
				continue
			}
			a := ix.byName[name]
			if a == nil || r.Given[name] {
				continue
			}
			if err := r.setRaw(a, m[i], false); err != nil {
				return nil, err
			}
		}
		break
	}
	if nv := ix.namevar; nv != nil {
		if _, ok := r.Values[nv.Name]; !ok {
			if err := r.setRaw(nv, title, false); err != nil {
				return nil, err
			}
		}
	}

	// Defaults: static ones first, then computed ones (which may read them).
	for _, a := range ix.staticDefaults {
		if _, ok := r.Values[a.Name]; !ok {
			r.Values[a.Name] = ix.defaults[a.Name]
		}
	}
	for _, a := range ix.defaultFuncs {
		if _, ok := r.Values[a.Name]; ok {
			continue
		}
		raw := a.DefaultFunc(r)
		if raw == nil {
			continue
		}
		v, err := mungeAttr(a, raw)
		if err != nil {
			return nil, &ParamError{Resource: r.Ref(), Param: a.Name, Err: fmt.Errorf("default: %w", err)}
		}
		r.Values[a.Name] = v
	}

	for _, a := range ix.required {
		if _, ok := r.Values[a.Name]; !ok {
			return nil, &ParamError{Resource: r.Ref(), Param: a.Name, Err: errors.New("a value is required")}
		}
	}

	if t.Validate != nil {
		if err := t.Validate(r); err != nil {
			var pe *ParamError
			if errors.As(err, &pe) {
				if pe.Resource == "" {
					pe.Resource = r.Ref()
				}
				return nil, err
			}
			return nil, fmt.Errorf("Validation of %s failed: %w", r.Ref(), err)
		}
	}
	return r, nil
}

// givenAttr is a declared attribute a request gives, with its position in
// the declaration.
type givenAttr struct {
	pos int
	a   *Attr
	raw any
}

// setRaw munges raw for a and stores it.
func (r *Resource) setRaw(a *Attr, raw any, given bool) error {
	if given && a.Behaviour == ReadOnly {
		return &ParamError{Resource: r.Ref(), Param: a.Name, Err: errors.New("is read-only and cannot be set")}
	}
	v, err := mungeAttr(a, raw)
	if err != nil {
		return &ParamError{Resource: r.Ref(), Param: a.Name, Err: err}
	}
	r.Values[a.Name] = v
	if given {
		r.Given[a.Name] = true
	}
	return nil
}

var (
	noopAttr     = Attr{Name: "noop", Kind: KindBoolean}
	loglevelAttr = Attr{Name: "loglevel", Kind: KindEnum,
		Values: []string{"debug", "info", "notice", "warning", "err", "alert", "emerg", "crit", "verbose"}}
)
