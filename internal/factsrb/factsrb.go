// Package factsrb holds the one Ruby definition of how Facter evaluates
// the custom facts pippet does not resolve natively
// (pippet_custom_facts), shared by the two Ruby processes that run it:
// agent/facts' Facter process of its own and the run's Puppet
// (delegate's bridge). Each prepends Source to its own program.
package factsrb

import _ "embed"

// Source defines the Ruby method pippet_custom_facts(paths, errors,
// skip = []): see custom_facts.rb.
//
//go:embed custom_facts.rb
var Source string
