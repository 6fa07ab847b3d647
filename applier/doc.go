// Package applier is pippet's resource abstraction layer: it turns one
// request into a converged resource the way Puppet's types and providers do.
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
// Its New binds a Provider to one Resource. The Provider reads the current
// state (Get) and moves one property at a time (Set); it may also implement
// Flusher to apply collected changes once.
//
// # One transaction
//
// Engine.Apply validates the request into a Resource, selects a provider,
// reads the current state and compares every managed property with its own
// notion of in-sync. When `ensure` is out of sync only `ensure` is synced
// (creating brings every property with it, destroying ends it); otherwise
// each out-of-sync property is synced in declaration order. Each change is
// an Event; in noop mode the events are recorded with status noop and
// nothing is touched.
//
// Error means the request could not be evaluated (bad input, unknown type
// or attribute, no suitable provider); Failed means it was evaluated and
// did not converge.
package applier
