package applier

import (
	"fmt"
	"log/slog"

	"github.com/pippet/pippet/applier/internal/hook"
	"github.com/pippet/pippet/protocol"
)

// Resource is one validated request: its type, title and munged attributes
// (defaults filled in). Providers read their desired state from it.
//
// Values live in slots indexed by the attribute's position in Type.Attrs
// (the implicit `provider` parameter takes the slot after the last one),
// so building a Resource allocates nothing per attribute and reading one
// is a lookup of its name in the type's index.
type Resource struct {
	Type  *Type
	Title string
	// Noop: evaluate only (the request's noop metaparameter or the global flag).
	Noop bool
	// LogLevel is the level of the resource's change messages (the
	// loglevel metaparameter; default notice).
	LogLevel slog.Level
	// Refresh: the request carries a refresh (see Refresher).
	Refresh bool
	// Ignored lists the metaparameters the request gave that the engine
	// accepts and ignores (alias, tag, audit and the ordering ones).
	Ignored []string
	// Sensitive lists the attributes whose values are secrets (the
	// request's sensitive_parameters, with the type's SensitiveWith):
	// their changes say "changed [redacted] to [redacted]", and a type
	// shows nothing derived from them (a diff, a checksum, a command's
	// output). See IsSensitive.
	Sensitive []string

	ix    *typeIndex
	vals  []any   // munged values by slot
	flags []uint8 // by slot: slotSet, slotGiven
	cur   State   // the engine's storage for the provider's Get
	// spec is the provider chosen for the resource (nil when a test
	// drives a provider without the engine's selection).
	spec *ProviderSpec
	// frozen: desired values may not change (the engine sets it while
	// the provider's Get runs and after it: Get only reads).
	frozen bool
	// readAll: the resource is read for find or search (see ReadAll).
	readAll bool

	ref string // cached Ref()
}

const (
	slotSet   = hook.Set   // the slot holds a value (given or default)
	slotGiven = hook.Given // the request set it
)

// reset prepares r (new or recycled) for a request of type t, keeping
// its slot storage.
func (r *Resource) reset(t *Type, ix *typeIndex, title string, noop bool) {
	vals, flags, cur := r.vals, r.flags, r.cur
	n := ix.slots()
	if cap(vals) < n {
		vals, flags = make([]any, n), make([]uint8, n)
	} else {
		vals, flags = vals[:n], flags[:n]
		clear(vals)
		clear(flags)
	}
	*r = Resource{Type: t, Title: title, Noop: noop, LogLevel: LevelNotice, ix: ix, vals: vals, flags: flags, cur: cur}
}

// IsSensitive reports whether the attribute called name holds a secret
// (see Resource.Sensitive).
func (r *Resource) IsSensitive(name string) bool {
	for _, n := range r.Sensitive {
		if n == name {
			return true
		}
	}
	return false
}

// Ref is the reference Puppet prints, e.g. File[/etc/motd] or Ssh_authorized_key[x].
func (r *Resource) Ref() string {
	if r.ref == "" {
		switch ix, err := r.Type.index(); {
		case r.Title == "":
			// A search's scope: the type, as the search's answer names it.
			r.ref = protocol.RefType(r.Type.Name)
		case err == nil:
			r.ref = ix.display + "[" + r.Title + "]"
		default:
			r.ref = protocol.Ref(r.Type.Name, r.Title)
		}
	}
	return r.ref
}

// slot is the slot of the attribute called name, or -1.
func (r *Resource) slot(name string) int {
	if r.ix == nil {
		return -1
	}
	return r.ix.names.find(name)
}

// mustSlot is slot for the accessors: a name the type does not declare is
// a programming error (a typo reads as "unset" otherwise), so it panics;
// the receiver loop turns the panic into an error answer naming the resource.
func (r *Resource) mustSlot(name string) int {
	s := r.slot(name)
	if s < 0 {
		panic(fmt.Sprintf("%s: no attribute named %q: the type does not declare it", r.Ref(), name))
	}
	return s
}

// ReadAll reports whether the resource is read for the find or search
// verb rather than converged: Get must then report every property it can
// read, managed or not (a provider that reads only what the request
// manages, such as file's, reads the rest too), and nothing will be set.
func (r *Resource) ReadAll() bool { return r.readAll }

// Provider is the spec of the provider the engine chose for r (nil before
// the choice, or when a provider is driven without the engine).
func (r *Resource) Provider() *ProviderSpec { return r.spec }

// manages reports whether the chosen provider has every feature attribute
// a needs; without a choice, it does.
func (r *Resource) manages(a *Attr) bool {
	if len(a.Features) == 0 || r.spec == nil {
		return true
	}
	for _, f := range a.Features {
		found := false
		for _, h := range r.spec.Features {
			found = found || h == f
		}
		if !found {
			return false
		}
	}
	return true
}

// Declares reports whether the resource's type declares an attribute
// called name (the implicit `provider` parameter included). Code shared by
// several types asks this before reading an attribute only some declare.
func (r *Resource) Declares(name string) bool { return r.slot(name) >= 0 }

// at returns slot s's value and whether it has one.
func (r *Resource) at(s int) (any, bool) {
	if r.flags[s]&slotSet == 0 {
		return nil, false
	}
	return r.vals[s], true
}

// Name is the namevar's value (the title when the type has no namevar).
func (r *Resource) Name() string {
	if r.ix != nil && r.ix.namevar != nil {
		s, _ := r.vals[r.ix.namevarSlot].(string)
		return s
	}
	return r.Title
}

// Get returns the attribute's value and whether it has one. Every
// accessor (Get, Value, Has, Given, String, Bool, Int, Strings, Set)
// panics on a name the type does not declare.
func (r *Resource) Get(name string) (any, bool) { return r.at(r.mustSlot(name)) }

// Value returns the attribute's value, nil when it has none.
func (r *Resource) Value(name string) any { v, _ := r.Get(name); return v }

// Has reports whether the attribute has a value (given or default).
func (r *Resource) Has(name string) bool { _, ok := r.Get(name); return ok }

// Given reports whether the request itself set the attribute (a default
// or a value derived from the title does not count).
func (r *Resource) Given(name string) bool { return r.flags[r.mustSlot(name)]&slotGiven != 0 }

// GivenAnyProperty reports whether the request gave a value for any
// property: what Puppet calls a managed resource, the condition for the
// defaults of ensurable types (see WhenManaged).
func (r *Resource) GivenAnyProperty() bool {
	for _, a := range r.Type.Attrs {
		if a.Behaviour == Property && r.Given(a.Name) {
			return true
		}
	}
	return false
}

// WhenManaged returns a DefaultFunc that defaults an attribute to v when
// the request manages any property (GivenAnyProperty), and leaves it
// unmanaged otherwise: Puppet's `defaultto { :present if @resource.managed? }`
// for ensure, and the like for other attributes.
func WhenManaged(v any) func(r *Resource) any {
	return func(r *Resource) any {
		if r.GivenAnyProperty() {
			return v
		}
		return nil
	}
}

// Set stores an already munged value for a declared attribute: in a
// type's Validate, or in a provider's Resolve (see Resolver) when a desired
// value depends on the system. Setting an attribute the type does not
// declare, or setting one once the provider's Get has started (Get only
// reads), is a programming error and panics (the engine turns it into an
// error answer).
func (r *Resource) Set(name string, v any) { r.set(name, v, 0) }

// SetGiven is Set for a value that counts as given by the request, as
// when a type rewrites one attribute the user wrote into another.
func (r *Resource) SetGiven(name string, v any) { r.set(name, v, slotGiven) }

// Unset drops an attribute's desired value, so the property is not
// managed (Given still reports what the request gave). Like Set, only a
// type's Validate and a provider's Resolve may call it: a file with
// replace: false that already exists leaves its kind and content
// unmanaged.
func (r *Resource) Unset(name string) {
	if r.frozen {
		panic(fmt.Sprintf("%s: %q unset after desired values were resolved: only Type.Validate and Resolver.Resolve may change them", r.Ref(), name))
	}
	s := r.mustSlot(name)
	r.vals[s] = nil
	r.flags[s] &^= slotSet
}

func (r *Resource) set(name string, v any, given uint8) {
	if r.frozen {
		panic(fmt.Sprintf("%s: %q set after desired values were resolved: only Type.Validate and Resolver.Resolve may set them", r.Ref(), name))
	}
	s := r.mustSlot(name)
	r.vals[s] = v
	r.flags[s] |= slotSet | given
}

// String returns a string attribute, "" when unset.
func (r *Resource) String(name string) string { s, _ := r.Value(name).(string); return s }

// Bool returns a boolean attribute, false when unset.
func (r *Resource) Bool(name string) bool { b, _ := r.Value(name).(bool); return b }

// Int returns an integer attribute and whether it is set.
func (r *Resource) Int(name string) (int64, bool) { i, ok := r.Value(name).(int64); return i, ok }

// Strings returns an array attribute as strings (a scalar as one element).
func (r *Resource) Strings(name string) []string { return StringList(r.Value(name)) }

// StringList is a value as a list of strings: nil none, a string or any
// other scalar one, a list each element formatted as FormatValue does.
func StringList(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return []string{v}
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			out = append(out, FormatValue(e))
		}
		return out
	default:
		return []string{FormatValue(v)}
	}
}
