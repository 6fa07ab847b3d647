// Package native resolves the custom facts of the fact files pippet
// knows, in Go, as Facter resolves their Ruby: the same values of the
// same kinds (string, integer, boolean, array, hash, absent).
//
// A file is known by its content: Files lists, per module's
// lib/facter file, the sha256 digests of the versions whose code the Go
// reproduces: Debian's packages (File.Digests) and the module's recent
// Forge releases (File.Forge, each a Release with its digest and, where
// its code differs from Debian's, its own resolution). Recognise
// splits the custom fact files an agent found into the known ones and
// the others; an edited, newer or unknown file is not known, and Facter
// evaluates it (only it), as before. A file whose code asks Puppet
// (stdlib's package_provider asks which provider Puppet would choose, its
// puppet_settings reads Puppet's settings) is known only where the caller
// can answer that (Options.DefaultProvider, Options.Puppet).
//
// Resolve resolves each known file in its own goroutine; a fact that asks
// for another (Facter.value) waits for it, whichever file defines it,
// and asks the caller (Lookup: core, external and Facter's custom facts)
// for the rest. When a file Facter evaluates defines a known file's fact
// too (Options.Rival), Facter.value is the resolution Facter would
// choose (Rival.Wins). The commands a fact runs are still run (apt-get -s
// upgrade, sshd -V, apache2 -V, ...), as Facter runs them (/bin/sh, the
// first word looked up in PATH, /sbin and /usr/sbin, LC_ALL=C, the exit
// status ignored), concurrently, the same command line once per
// resolution, and each bounded in time and output: a command that hangs
// or floods is killed, its facts are absent, and one error names the
// fact, its file and the command. A fact whose Ruby would raise (sshd
// missing for ssh's facts) is absent, with one error, as Facter logs it.
//
// One file per module holds that module's facts, each documented where
// it is resolved; the comparison tests (agent/facts) run `facter -p`
// on every known file and compare.
package native
