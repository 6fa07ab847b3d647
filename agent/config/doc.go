// Package config is Puppet's settings as `puppet agent` sees them, and the
// agent's two lock files.
//
// Load resolves every setting Puppet 7 defines the way Puppet's agent does:
// the command line first, then puppet.conf's [agent] section, then its
// [main] section, then Puppet's defaults for the run mode (root: /etc/puppet,
// /var/cache/puppet, /var/lib/puppet/ssl, ... as Debian packages Puppet;
// anyone else: ~/.puppet/...). Values are interpolated ($vardir/state,
// $ssldir/certs/$certname.pem) after that lookup, so a vardir set in
// puppet.conf moves statedir, lastrunreport and the lock files with it, as
// in Puppet. The [server], [master] and [user] sections are for other
// applications and are read past; any other section is an error, as
// Puppet refuses it (environments live in environment.conf).
//
// Every value is checked by its type (boolean, duration, integer, port,
// TTL, enum, certificate_revocation, file path) with Puppet's rules, and a
// bad one is an error naming the setting and where it was set (file:line,
// or the command-line flag). Where Puppet only logs a puppet.conf it cannot
// parse and goes on with its defaults, Load refuses: an agent that silently
// ignores its configuration would talk to the wrong server.
//
// Settings.Values holds every setting as `puppet config print --section
// agent` prints it (booleans true/false, durations in seconds, paths
// interpolated and absolute); the struct's fields are the ones the agent
// run uses, typed.
//
// ParseArgs reads `puppet agent`'s command line: every setting as
// --name value, --name=value, and --name/--no-name for booleans, plus the
// agent's own options (--test, --detailed-exitcodes, --disable ...).
//
// Lock takes the run lock (agent_catalog_run.lock, holding the PID, as
// Puppet's Pidlock); Disable, Enable and Disabled manage
// agent_disabled.lock ({"disabled_message":"..."}), so `puppet agent
// --disable` and `receiver agent` honour each other.
package config
