// Package facts gathers the facts a Puppet agent sends with its catalog
// request, natively: Facter 4's names, structure and value types for the
// core facts modules rely on (os, kernel, networking, processors, memory,
// identity, system_uptime, timezone, path, ...), the legacy flat names
// (osfamily, ipaddress, fqdn, ...), external facts from facts.d
// directories, which override core facts as they do in Facter, and
// custom Ruby facts (those pluginsync brings to VARDIR/lib/facter),
// evaluated by the real Facter where it is installed (custom.go).
//
// Gather reads /proc, /sys, /etc and the interface table; it runs no
// commands and does no DNS lookups, so the core facts cost well under a
// millisecond of CPU. The only processes it starts are executable external
// facts, each bounded in time (Options.ScriptTimeout, its whole process
// group killed) and in output (Options.MaxOutput), and, only when a custom
// fact directory holds a *.rb file, one Ruby process loading Facter
// (bounded by Options.CustomTimeout).
//
// Facter's fact cache is honoured as Facter 4 honours it (cache.go,
// facterconf.go): facter.conf's facts.ttls (Debian's
// /etc/facter/facter.conf, else the all-in-one agent's; Options.FacterConf,
// CacheDir and NoCache say otherwise) names fact groups, custom facts and
// external fact files; their values are read from and written to
// Facter's own cache files (/var/cache/facter/facts/GROUP, JSON), so that
// pippet and Facter share them. A custom fact file whose facts are all
// cached is not resolved (natively or by Facter), a cached external fact
// file neither read nor run.
//
// The result is a plain map (string, bool, int64, float64, []any,
// map[string]any) that encodes to the JSON `facter --json --show-legacy`
// prints; the parsers of the OS's own files (os-release, resolv.conf)
// are internal/osfacts's, shared with applier's confinement facts
// (applier.LoadFacts), which must not depend on this package. Where a value differs from Facter's on purpose,
// docs/agent.md says which and why.
package facts
