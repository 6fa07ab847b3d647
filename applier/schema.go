package applier

import (
	"context"
	"regexp"
	"sync"
)

// Behaviour says what an attribute is to the transaction.
type Behaviour int

const (
	// Parameter tunes how the resource is managed; it is never synced.
	Parameter Behaviour = iota
	// Property is state on the system: read by the provider, compared, synced.
	Property
	// Namevar identifies the resource; the title fills it unless given.
	Namevar
	// ReadOnly is state that is reported but can't be set; setting it is an error.
	ReadOnly
)

// Kind is the kind of an attribute's (or an array element's) value, and
// decides the canonical Go type it is munged to.
type Kind int

const (
	// KindString: any scalar, munged to string (numbers and booleans as YAML wrote them).
	KindString Kind = iota
	// KindInteger: an integer or a string of digits, munged to int64.
	KindInteger
	// KindBoolean: true/false (also the strings "true"/"false"/"yes"/"no"), munged to bool.
	KindBoolean
	// KindEnum: one of Values (after Aliases) or matching one of Patterns, munged to string.
	KindEnum
	// KindPath: an absolute path, munged to string with a trailing slash dropped.
	KindPath
	// KindAny: left as decoded (string, int64, float64, bool, []any, map[string]any).
	KindAny
)

// ValueKinds is a set of YAML's kinds of value (a null is refused for
// every attribute, as Puppet refuses it).
type ValueKinds uint8

const (
	// AcceptString: a string ('x', "x", or an unquoted word).
	AcceptString ValueKinds = 1 << iota
	// AcceptInteger: an integer (42, 0644 in YAML 1.1's octal).
	AcceptInteger
	// AcceptFloat: a float (1.5).
	AcceptFloat
	// AcceptBoolean: true or false (also yes, no, on, off).
	AcceptBoolean
	// AcceptMap: a map ({a: b}), for a KindAny attribute.
	AcceptMap
	// AcceptFirstOfList: a list where one value is expected, as Puppet's
	// properties take one: every element must be of an accepted kind and
	// munge, and the first is the value. An empty list is refused.
	AcceptFirstOfList
	// AcceptLastOfList: as AcceptFirstOfList, but the last element is the
	// value (Puppet's file content writes the last element of a list).
	AcceptLastOfList

	// AcceptScalars is every scalar kind.
	AcceptScalars = AcceptString | AcceptInteger | AcceptFloat | AcceptBoolean
)

// Attr declares one attribute of a Type.
type Attr struct {
	// Name as written in params.
	Name string
	// Behaviour: namevar, parameter, property or read-only.
	Behaviour Behaviour
	// Kind of the value (of each element when Array).
	Kind Kind
	// Array: the attribute takes a list; a scalar becomes a one-element
	// list. The munged value is []any of the element kind's Go type.
	Array bool
	// Accepts are the kinds of YAML value the attribute takes, as Puppet's
	// attribute takes them: a value (each element, when Array) of another
	// kind is refused before Kind converts it. Zero keeps the older rule:
	// any scalar, and a list only when Array or KindAny. A KindAny
	// attribute's Munge decides what a list given whole may hold.
	Accepts ValueKinds
	// Values are the literal values allowed (for KindEnum, and as an extra
	// allowance for other kinds, e.g. "absent"). Compared after Aliases.
	Values []string
	// Patterns are regular expressions a value may match instead of Values.
	Patterns []*regexp.Regexp
	// Aliases maps a value the user may write to the canonical one.
	Aliases map[string]string
	// Default is the value when the request gives none (nil: no default).
	Default any
	// DefaultFunc computes a default from the other attributes; it wins over Default.
	DefaultFunc func(r *Resource) any
	// Required: the request must give a value.
	Required bool
	// Munge normalises one (element) value after kind conversion.
	Munge func(v any) (any, error)
	// Validate checks one (element) value after munging.
	Validate func(v any) error
	// Range, when set, bounds a numeric value after Munge and Validate: an
	// integer or float outside it, or a string of digits (a number a Munge
	// kept as written, too large for 64 bits) outside it, is an error
	// naming the bounds. Other values (a name, "absent") are left to the
	// attribute's own rules. `receiver describe` prints it.
	Range *Range
	// InSync compares a property's current value with the desired one; nil
	// means equality (arrays compared in order, unless Unordered).
	InSync func(is, should any) bool
	// Unordered: for arrays, in sync when both hold the same elements.
	Unordered bool
	// Format renders a value for event messages; nil uses the default.
	Format func(v any) string
	// Features are the provider features the attribute needs (Puppet's
	// required_features): with a provider that lacks one, the attribute is
	// accepted and left alone, with a debug message, as Puppet leaves it.
	Features []string
	// StateOnly: find and search report the current value, but a find's
	// params leave it out, its reported form not being a value an apply
	// takes back unchanged (file content reported as a checksum).
	StateOnly bool
	// Volatile: validating a given value reads the system (file's local
	// source must exist), so a request that gives the attribute is built
	// afresh every time, even when re-sent (see Cloner). Every other rule
	// of a declaration (Munge, Validate, DefaultFunc, the Type's Validate
	// and RefTitle) must depend on the request alone, or on what is fixed
	// for the process: what depends on the system belongs in a provider's
	// Resolve or Get.
	Volatile bool
	// Doc is the one-paragraph documentation `receiver describe` prints.
	Doc string
}

// TitlePattern splits a title into attributes: each named group of Re sets
// the attribute of that name (when the request doesn't give it).
type TitlePattern struct {
	Re *regexp.Regexp
}

// Type declares one resource type.
type Type struct {
	// Name in lower case, e.g. "file".
	Name string
	// Doc is the type's documentation.
	Doc string
	// Attrs in the order properties are synced and documented. Properties
	// other than ensure are synced in this order.
	Attrs []*Attr
	// TitlePatterns are tried in order; the first match fills attributes.
	// None (or no match): the title fills the namevar.
	TitlePatterns []TitlePattern
	// Validate checks rules across attributes, after munging and defaults.
	Validate func(r *Resource) error
	// RefTitle, when set, is the title the resource's reference shows once
	// the request is validated, where Puppet names a resource by more than
	// its title: an sshkey titled "h1" of type ssh-rsa answers
	// Sshkey[h1@ssh-rsa]. Errors found while validating keep the request's
	// title.
	RefTitle func(r *Resource) string
	// Providers, in order of preference when several are suitable.
	Providers []*ProviderSpec
	// Auto lists the relationships a resource of this type has with
	// other resources of its run that the manifest need not write, as
	// Puppet's autorequire and autobefore: a file after the directory
	// holding it, an exec after its user. A catalog's graph reads them
	// (package catalog); a request applied alone has none.
	Auto []AutoRel
	// Refreshes: the type's providers act on a refresh event (they are
	// Refreshers: an exec runs, a service restarts). A catalog delivers
	// events along notify and subscribe edges only to such types, as
	// Puppet does to the types that have a refresh method.
	Refreshes bool
	// ReportAs, when set, names the resource a catalog's report gives this
	// one's events to, as Puppet reports them on the resource its type
	// generates (a concat_file's changes belong to File[path]); the
	// resource itself is then reported unchanged. title and params are
	// the catalog's, not validated.
	ReportAs func(title string, params map[string]any) string
	// SensitiveWith names, for a parameter given as Sensitive (the
	// request's sensitive_parameters), the other attributes whose values
	// and output are then secret too, as Puppet's type marks them: a
	// file's content makes its ensure sensitive (an absent file is
	// created by ensure), an exec's command, unless and onlyif are
	// sensitive together.
	SensitiveWith map[string][]string

	// idx is computed once from the declaration (see Type.index).
	idxOnce sync.Once
	idx     *typeIndex
	idxErr  error
}

// AutoRel is one relationship a type declares with other resources of the
// same run, found by the value of one of its attributes (Puppet's
// autorequire, or autobefore): it orders the two when both are in the
// catalog and never makes either one appear. It never carries refresh
// events.
type AutoRel struct {
	// Type is the other resource's type, in lower case ("file", "user").
	Type string
	// Attr names the attribute whose value names the other resource, by
	// title or namevar; "" is the resource's namevar (its title when the
	// type has no namevar attribute given).
	Attr string
	// Titles, when set, turns the attribute's value, as the catalog gives
	// it (not munged), into the titles to look for; otherwise the value is
	// the title, or each string of an array is one.
	Titles func(v any) []string
	// First: only the first of Titles that names a resource of the run
	// counts (a file requires its nearest managed ancestor, not each).
	First bool
	// Before: this resource comes before the other (autobefore), where the
	// default is after it (autorequire).
	Before bool
}

// Provider reads and changes one resource on the system.
//
// The engine drives it in a fixed order: Resolve (when the provider is a
// Resolver), Get, then, for each property the attribute's InSync finds out
// of sync, Set; then Flush (when a Flusher and a Set succeeded). Get only
// reads: desired values are settled before it runs, and setting one from
// Get panics.
type Provider interface {
	// Get reads the current value of the type's properties into cur. A
	// property left unset is unknown and compared as absent. Ensurable
	// types report "ensure"; a resource that does not exist reports
	// "absent". Get decides nothing: whether a value is in sync is the
	// attribute's InSync (a provider may report a value that InSync
	// compares cheaply, such as a handle on a file's content). cur belongs
	// to the engine: don't keep it.
	Get(ctx context.Context, cur *State) error
	// Set moves one property to c.Should. For ensure, creating brings every
	// desired property with it. Set may rewrite c.Message.
	Set(ctx context.Context, c *Change) error
}

// Resolver is a Provider some of whose desired values depend on the
// system and are worked out before the current state is read: a file's
// ensure from its source's kind, its mode from the source's permissions, a
// group given by name resolved to its number. The engine calls Resolve
// once, before Get; it is the one place a provider may Set desired values
// on its resource. An error fails the resource (Could not evaluate ...).
type Resolver interface {
	Resolve(ctx context.Context) error
}

// NoopExplainer is a Provider whose property out of sync stands for other
// changes (concat_file's ensure for its target File's content, mode...):
// in noop, the events recorded are the parts NoopParts returns (each a
// property, its values and its "current_value ..., should be ... (noop)"
// message), as Puppet reports them on the resource it generates; none
// returned, the property's own noop event.
type NoopExplainer interface {
	NoopParts(property string) []Part
}

// Refresher is a Provider that acts on a refresh: the request said a
// notify edge of the caller's graph fired into this resource (the
// protocol's "refresh": true). A service restarts, an exec runs. The
// engine calls Refresh after the resource's changes, unless it failed; the
// message names what was done ("" when there was nothing to do, such as a
// service that is not running or was just started).
type Refresher interface {
	Refresh(ctx context.Context) (message string, err error)
}

// Flusher is a Provider that collects changes in Set and applies them once.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Change is one property to be synced.
type Change struct {
	Property string
	Is       any
	Should   any
	// Message describes the change; preset by the engine, a provider may
	// replace it (e.g. "executed successfully").
	Message string
	// Parts, when Set leaves any, replace the change's one event with one
	// event per part: a change made of many independent actions (tidy
	// removing paths) reports each, successful or not. Set returns an
	// error only when the change as a whole failed; a failed part alone
	// fails the resource too.
	Parts []Part
	// Generated, when Set sets it, says the change was reported as the
	// events of the resources the provider generated (GeneratedObserver):
	// it makes no event or line of its own.
	Generated bool
	// Diff, when Set leaves one, is the change's unified diff (a file's
	// content with show_diff): the pipe's answer carries it in the
	// event's diff member. The provider logs it too, as a record of its
	// own before the change line, as Puppet's; the report's event has
	// none, as Puppet's.
	Diff string
}

// Part is one action of a Change made of many.
type Part struct {
	// Property is the property the part changed; "" is the Change's own.
	// (Syncing ensure may bring another property along, as a service's
	// enable comes with its start.)
	Property          string
	Previous, Desired any
	Message           string
	// Err is why this part failed (nil: it succeeded).
	Err error
}

// Confine says when a provider can work here. Every listed condition must hold.
type Confine struct {
	// Facts: fact name to the values (case-insensitive) any of which it must have.
	Facts map[string][]string
	// Commands that must be found on PATH (or exist, when absolute).
	Commands []string
	// Files that must exist.
	Files []string
	// Features the process must have ("posix", "root").
	Features []string
	// Func is a last check; it returns "" when suitable, or what is missing.
	Func func(env *Env) string
}

// ProviderSpec declares one provider of a Type.
type ProviderSpec struct {
	// Name of the provider. A type that has no providers in Puppet (notify)
	// declares its one implementation with an empty Name: it is always
	// used and the type offers no `provider` parameter.
	Name    string
	Doc     string
	Confine Confine
	// Defaults: fact name to values for which this provider is the default
	// among the suitable ones.
	Defaults map[string][]string
	// Features the provider has (Puppet's provider features, such as
	// "enableable"): attributes that need others are left alone.
	Features []string
	// New binds the provider to one resource.
	New func(r *Resource, env *Env) (Provider, error)
	// Instances, when set, lists every instance the provider can see
	// (Puppet's self.instances), for the search verb. scope is a Resource
	// built from the search's params (validated as an apply's would be,
	// title empty, nothing required): a provider that lists per user or per
	// target reads them from it. For each instance it calls add with the
	// instance's title and fills the returned State exactly as its Get
	// would for that resource. A provider without Instances cannot list,
	// and search of its type answers an error naming the type.
	Instances func(ctx context.Context, env *Env, scope *Resource, add func(title string) *State) error
}
