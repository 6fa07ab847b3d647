package applier

import (
	"log/slog"
	"strings"
)

// Resource is one validated request: its type, title and munged attributes
// (defaults filled in). Providers read their desired state from it.
type Resource struct {
	Type  *Type
	Title string
	// Noop: evaluate only (the request's noop metaparameter or the global flag).
	Noop bool
	// Values holds munged attribute values by name, defaults included.
	Values map[string]any
	// Given names the attributes the request set itself (not defaults).
	Given map[string]bool
	// LogLevel is the level of the resource's change messages (the
	// loglevel metaparameter; default notice).
	LogLevel slog.Level
	// Ignored lists the metaparameters the request gave that the engine
	// accepts and ignores (alias, tag, audit and the ordering ones).
	Ignored []string

	ref string // cached Ref()
}

// Ref is the reference Puppet prints, e.g. File[/etc/motd] or Ssh_authorized_key[x].
func (r *Resource) Ref() string {
	if r.ref == "" {
		if ix, err := r.Type.index(); err == nil {
			r.ref = ix.display + "[" + r.Title + "]"
		} else {
			r.ref = Ref(r.Type.Name, r.Title)
		}
	}
	return r.ref
}

// Ref builds Type[title] with the type name capitalised as Puppet does.
func Ref(typ, title string) string {
	if typ == "" {
		return title
	}
	return capitalise(typ) + "[" + title + "]"
}

// capitalise writes a type name as Puppet does: Exec, Ssh_authorized_key.
func capitalise(typ string) string {
	if typ == "" {
		return typ
	}
	return strings.ToUpper(typ[:1]) + strings.ToLower(typ[1:])
}

// Name is the namevar's value (the title when the type has no namevar).
func (r *Resource) Name() string {
	if ix, err := r.Type.index(); err == nil && ix.namevar != nil {
		s, _ := r.Values[ix.namevar.Name].(string)
		return s
	}
	return r.Title
}

// Has reports whether the attribute has a value (given or default).
func (r *Resource) Has(name string) bool { _, ok := r.Values[name]; return ok }

// Get returns the attribute's value and whether it has one.
func (r *Resource) Get(name string) (any, bool) { v, ok := r.Values[name]; return v, ok }

// String returns a string attribute, "" when unset.
func (r *Resource) String(name string) string { s, _ := r.Values[name].(string); return s }

// Bool returns a boolean attribute, false when unset.
func (r *Resource) Bool(name string) bool { b, _ := r.Values[name].(bool); return b }

// Int returns an integer attribute and whether it is set.
func (r *Resource) Int(name string) (int64, bool) { i, ok := r.Values[name].(int64); return i, ok }

// Strings returns an array attribute as strings (a scalar as one element).
func (r *Resource) Strings(name string) []string {
	switch v := r.Values[name].(type) {
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
