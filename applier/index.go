package applier

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/pippet/pippet/applier/internal/hook"
	"github.com/pippet/pippet/protocol"
)

// typeIndex is what the engine precomputes once per Type so that building a
// Resource is one map lookup per given attribute: attributes by name and
// by slot, the namevar, the ensure property, the other properties in sync
// order, and the munged static defaults.
//
// A slot is an attribute's position in Type.Attrs; the implicit
// `provider` parameter, when the type has one, takes the slot after them.
// Resource values live in a slice indexed by slot.
type typeIndex struct {
	byName map[string]*Attr
	names  nameTable // slot of each attribute by name, provider included
	attrs  []*Attr   // by slot, provider included
	// namevarSlot and ensureSlot are -1 when the type has none.
	namevar     *Attr
	namevarSlot int
	ensure      *Attr
	ensureSlot  int
	properties  []*Attr // properties other than ensure, in declaration order
	propSlots   []int   // their slots
	// defaults holds each attribute's munged Default, for describe.
	defaults map[string]any
	// staticSlots: the slots of the attributes with a Default and no
	// DefaultFunc, in declaration order, and staticVals[i] the munged
	// default of staticSlots[i]; defaultSlots: those with a DefaultFunc;
	// requiredSlots: the Required ones.
	staticSlots   []int
	staticVals    []any
	defaultSlots  []int
	requiredSlots []int
	// providers by name, for the explicit `provider` parameter.
	providers map[string]*ProviderSpec
	// providerAttr is the implicit `provider` parameter (nil without providers).
	providerAttr *Attr
	// display is the type's name as references print it (Exec).
	display string
	// reportOrder: the slots but ensure's and the namevar's, by name.
	reportOrder []int
	// layout is what the engine walks (hook.Layout).
	layout hook.Layout[*Attr]
}

// index returns the type's precomputed index, building it on first use.
// A declaration error (a duplicate attribute, a default that does not
// munge) is returned on every call.
func (t *Type) index() (*typeIndex, error) {
	t.idxOnce.Do(func() { t.idx, t.idxErr = buildIndex(t) })
	return t.idx, t.idxErr
}

// Check validates the declaration itself: unique attribute names, at most
// one namevar, static defaults that munge. Registry.Add calls it and
// panics on an error, so a bad declaration fails at start-up.
func (t *Type) Check() error {
	_, err := t.index()
	return err
}

func buildIndex(t *Type) (*typeIndex, error) {
	ix := &typeIndex{
		byName:      make(map[string]*Attr, len(t.Attrs)),
		defaults:    map[string]any{},
		display:     protocol.RefType(t.Name),
		namevarSlot: -1,
		ensureSlot:  -1,
	}
	for _, a := range t.Attrs {
		if a.Name == "" {
			return nil, fmt.Errorf("type %s: an attribute has no name", t.Name)
		}
		if _, dup := ix.byName[a.Name]; dup {
			return nil, fmt.Errorf("type %s: attribute %q declared twice", t.Name, a.Name)
		}
		if _, meta := metaparams[a.Name]; meta {
			return nil, fmt.Errorf("type %s: attribute %q is a metaparameter", t.Name, a.Name)
		}
		slot := len(ix.attrs)
		ix.byName[a.Name] = a
		ix.attrs = append(ix.attrs, a)
		switch a.Behaviour {
		case Namevar:
			if ix.namevar != nil {
				return nil, fmt.Errorf("type %s: two namevars, %s and %s", t.Name, ix.namevar.Name, a.Name)
			}
			ix.namevar, ix.namevarSlot = a, slot
		case Property:
			if a.Name == "ensure" {
				ix.ensure, ix.ensureSlot = a, slot
			} else {
				ix.properties = append(ix.properties, a)
				ix.propSlots = append(ix.propSlots, slot)
			}
		}
		if a.Default != nil {
			v, err := mungeAttr(a, a.Default)
			if err != nil {
				return nil, fmt.Errorf("type %s: default of %s: %w", t.Name, a.Name, err)
			}
			ix.defaults[a.Name] = v
			if a.DefaultFunc == nil {
				ix.staticSlots = append(ix.staticSlots, slot)
				ix.staticVals = append(ix.staticVals, v)
			}
		}
		if a.DefaultFunc != nil {
			ix.defaultSlots = append(ix.defaultSlots, slot)
		}
		if a.Required {
			ix.requiredSlots = append(ix.requiredSlots, slot)
		}
	}
	if len(t.Providers) == 1 && t.Providers[0].Name == "" {
		// The type's built-in implementation: no provider parameter.
	} else if len(t.Providers) > 0 {
		ix.providers = make(map[string]*ProviderSpec, len(t.Providers))
		names := make([]string, 0, len(t.Providers))
		for _, p := range t.Providers {
			if p.Name == "" {
				return nil, fmt.Errorf("type %s: a provider has no name", t.Name)
			}
			if _, dup := ix.providers[p.Name]; dup {
				return nil, fmt.Errorf("type %s: provider %q declared twice", t.Name, p.Name)
			}
			ix.providers[p.Name] = p
			names = append(names, p.Name)
		}
		if _, clash := ix.byName["provider"]; !clash {
			ix.providerAttr = &Attr{
				Name:      "provider",
				Behaviour: Parameter,
				Kind:      KindEnum,
				Values:    names,
				Doc: "The specific backend to use for this resource, one of " +
					strings.Join(names, ", ") + ". Normally chosen from the facts.",
			}
			ix.attrs = append(ix.attrs, ix.providerAttr)
		}
	}
	names := make([]string, len(ix.attrs))
	for i, a := range ix.attrs {
		names[i] = a.Name
	}
	ix.names = newNameTable(names)
	// The order find and search report attributes in, as `puppet
	// resource` prints them: ensure, then the rest by name (the provider
	// among them).
	for s := range ix.attrs {
		if s != ix.ensureSlot && s != ix.namevarSlot {
			ix.reportOrder = append(ix.reportOrder, s)
		}
	}
	sort.Slice(ix.reportOrder, func(i, j int) bool {
		return ix.attrs[ix.reportOrder[i]].Name < ix.attrs[ix.reportOrder[j]].Name
	})
	ix.layout = hook.Layout[*Attr]{Attrs: ix.attrs, Ensure: ix.ensureSlot, Namevar: ix.namevarSlot, Provider: -1,
		Props: ix.propSlots, Report: ix.reportOrder, Defaults: ix.defaults, Display: ix.display}
	if ix.providerAttr != nil {
		ix.layout.Provider = len(ix.attrs) - 1
	}
	return ix, nil
}

// slots is how many value slots a Resource of the type has.
func (ix *typeIndex) slots() int { return len(ix.attrs) }

// attr finds an attribute by name, including the implicit `provider`.
func (ix *typeIndex) attr(name string) *Attr {
	if a, ok := ix.byName[name]; ok {
		return a
	}
	if name == "provider" && ix.providerAttr != nil {
		return ix.providerAttr
	}
	return nil
}

// Attr returns the declared attribute called name, or nil.
func (t *Type) Attr(name string) *Attr {
	ix, err := t.index()
	if err != nil {
		return nil
	}
	return ix.attr(name)
}

// metaKind says how the engine treats a metaparameter.
type metaKind int

const (
	metaNoop metaKind = iota
	metaLoglevel
	metaList      // alias, tag, audit: accepted and kept out of Values
	metaOrdering  // before, require, notify, subscribe, schedule, stage: ignored
	metaSensitive // sensitive_parameters: the attributes holding secrets
)

// metaparams are accepted on every type.
var metaparams = map[string]metaKind{
	"noop":      metaNoop,
	"loglevel":  metaLoglevel,
	"alias":     metaList,
	"tag":       metaList,
	"audit":     metaList,
	"before":    metaOrdering,
	"require":   metaOrdering,
	"notify":    metaOrdering,
	"subscribe": metaOrdering,
	"schedule":  metaOrdering,
	"stage":     metaOrdering,

	"sensitive_parameters": metaSensitive,
}

// logLevels maps Puppet's loglevel values to slog levels.
var logLevels = map[string]slog.Level{
	"debug":   slog.LevelDebug,
	"info":    slog.LevelInfo,
	"verbose": slog.LevelInfo,
	"notice":  LevelNotice,
	"warning": slog.LevelWarn,
	"err":     slog.LevelError,
	"alert":   slog.LevelError,
	"emerg":   slog.LevelError,
	"crit":    slog.LevelError,
}

// metaparamDocs documents the metaparameters for `receiver describe --meta`.
var metaparamDocs = map[string]string{
	"noop": "Evaluate this resource without changing anything: its events are recorded with status noop. " +
		"Given, it overrides the receiver's --noop either way, as in Puppet. Valid values are true, false.",
	"loglevel": "The level the resource's change messages are logged at: debug, info, notice (the default), " +
		"warning, err, alert, emerg, crit, verbose.",
	"alias":     "Other names for the resource. Accepted and ignored: references are the caller's business.",
	"tag":       "Tags for the resource. Accepted and ignored.",
	"audit":     "Attributes to audit. Accepted and ignored.",
	"before":    "Ordering: accepted and ignored (logged at debug); the caller orders requests.",
	"require":   "Ordering: accepted and ignored (logged at debug); the caller orders requests.",
	"notify":    "Ordering and refresh: accepted and ignored (logged at debug); the caller sends the refresh itself, as the request's \"refresh\": true.",
	"subscribe": "Ordering and refresh: accepted and ignored (logged at debug); the caller sends the refresh itself, as the request's \"refresh\": true.",
	"schedule":  "Accepted and ignored: the caller decides when to send a request.",
	"stage":     "Accepted and ignored: the caller orders requests.",
	"sensitive_parameters": "The attributes whose values are secrets (a name or a list), as a Puppet catalog lists " +
		"the parameters given as Sensitive: their changes read `changed [redacted] to [redacted]`, and nothing derived " +
		"from them is shown (a file's diff and checksums, an exec's command and output: `[output redacted]`, " +
		"`[command redacted]`). A type may make more attributes secret with one (a file's content makes its ensure secret; " +
		"an exec's command, unless and onlyif are secret together).",
}

// MetaparamNames lists the metaparameters every type accepts.
func MetaparamNames() []string {
	return []string{"alias", "audit", "before", "loglevel", "noop", "notify", "require", "schedule", "sensitive_parameters", "stage", "subscribe", "tag"}
}
