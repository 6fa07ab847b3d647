// Package applier is what a type's author writes against: the
// declaration of a type (Type, Attr), its providers (ProviderSpec,
// Provider, State), the environment they are given (Env), the in-sync
// helpers, the registry and the run a resource is applied in (Run). The
// engine that drives the types, turning one request into a converged
// resource the way Puppet's transaction does, is package applier/engine;
// no type imports it.
//
// # Types are data
//
// A Type declares its attributes as data: each Attr has a Behaviour
// (namevar, parameter, property, read-only), a value Kind, valid literal
// values and patterns, value aliases, a default, munging, validation and a
// doc string. Generic code in this package validates and munges a request's
// params against the declaration; a type writes code only for what no
// declaration can say (Type.Validate for rules across attributes).
//
// # Providers are small
//
// A ProviderSpec says when a provider is suitable (Confine: facts, commands
// on PATH, files, features) and when it is the default (Defaults, by fact).
// Its New binds a Provider to one Resource. The engine calls Resolve when
// the provider is a Resolver (the one place it may settle desired values
// that depend on the system), then Get, which only reads the current state
// (desired values are frozen: setting one panics), then Set for each
// property whose attribute's InSync finds it out of sync, and Flush when
// the provider is a Flusher. Accessors panic on attribute names the type
// does not declare. A provider that can read many
// instances at once (a parsed file, a package database) prefetches them on
// first use into Env.Cache and drops the entry when it changes the system.
//
// # One transaction
//
// The engine (applier/engine) validates the request into a Resource, selects a provider,
// reads the current state and compares every managed property with its own
// notion of in-sync. When `ensure` is out of sync only `ensure` is synced
// (creating brings every property with it, destroying ends it); otherwise
// each out-of-sync property is synced in declaration order. Each change is
// an Event; in noop mode the events are recorded with status noop and
// nothing is touched.
//
// # From request to resource
//
// Type.NewResource does the validation: the metaparameters every type
// accepts (noop, loglevel; alias, tag, audit and the ordering ones are
// accepted and ignored, ordering belonging to the caller), then each given
// attribute in declaration order through its Kind, Aliases, Values and
// Patterns, Munge and Validate, the title into the namevar (or through
// TitlePatterns), defaults, required attributes and Type.Validate. What it
// needs per type (attributes by name, munged static defaults, the implicit
// `provider` parameter) is computed once, when the type is registered.
//
// A Resource keeps its values in slots, one per declared attribute in
// declaration order, and a provider's Get reports the current values into
// a State with the same slots. The engine recycles both from request to
// request, so an unchanged resource costs no map and no per-attribute
// allocation; Get, Value, Given and Set find a slot by name through a small
// open-addressing table built with the type's index.
//
// A request sent again byte for byte (a converging engine re-sends its
// resources) is validated once: the engine's session keeps the built
// values and copies them into the next Resource (memo.go). So every rule of a declaration — Munge, Validate,
// DefaultFunc, Type.Validate, RefTitle — must depend on the request alone
// or on what is fixed for the process; what depends on the system belongs
// in a provider's Resolve or Get, which run for every request. An
// attribute whose validation must read the system anyway (file's local
// source must exist) is declared Volatile, and a request giving it is
// built afresh every time.
//
// # Errors
//
// Errors are worded as Puppet words them: `no parameter named 'x' on
// File[/a]`, `Parameter mode failed on File[/x]: ...`, `Invalid value
// "x". Valid values are a, b.`. That wording is kept on purpose, capital
// letter and closing full stop included, although Go's convention (and
// linters such as staticcheck's ST1005) want error strings in lower case
// without punctuation: users and controllers read and match Puppet's
// messages, and the answers must say what Puppet says.
//
// # Facts
//
// LoadFacts reads os-release, the kernel and the host names once;
// engine.New does it unless the Env brings its own Facts, so tests inject
// facts to exercise provider selection. Confinement verdicts that depend
// only on facts and features are cached per provider; commands and files
// are checked on every request, since an earlier resource may install
// them.
//
// Error means the request could not be evaluated (bad input, unknown type
// or attribute, no suitable provider); Failed means it was evaluated and
// did not converge.
package applier
