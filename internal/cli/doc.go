// Package cli holds the receiver's command-line subcommands that read
// and show rather than serve a stream: `receiver resource` (find, search
// and apply as `puppet resource` does, printing Puppet's DSL), `receiver
// describe` and `receiver facts` (a type's declaration, this machine's
// facts), `receiver filebucket` (the backups of replaced files), and the
// flag handling every subcommand shares (flags spelled with two dashes,
// help on stdout, a bad flag named on stderr with status 2).
//
// Each subcommand is a function of (ctx, args, stdout, stderr) returning
// the process' exit status; cmd/receiver dispatches its first argument to
// them and keeps only flags, signals and wiring.
package cli
