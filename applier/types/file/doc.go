// Package file is the `file` type: plain files, directories and symlinks,
// their content, ownership and permissions.
//
// # Schema
//
// The type is a declaration (schema.go): every attribute with its kind,
// values, default and doc. Rules across attributes (content with source,
// a link target given as ensure, checksum kinds that cannot compare inline
// content) live in the type's Validate, which also digests inline content
// once per request. `content` munges to a *Content that prints and encodes
// as its checksum, so content never reaches an answer or a log except as
// the diff show_diff asks for. A source (or a recursion) becomes a
// *Content too, by default: the provider's Resolve fills its checksum from the
// source's metadata, and the engine compares and syncs it like inline
// content.
//
// # Provider
//
// The posix provider follows the engine's order. Resolve settles what the
// system decides of the desired values (posix.go): a source's kind as
// ensure, its permissions with source_permissions, how a source's content
// is compared (its checksum from the metadata or a download, or its
// time), and, with replace: false on an existing file, kind, content and
// target left unmanaged. Inline content needs none of it. Get (read.go)
// does one lstat (stat with links: follow) and reports each current value
// in the form its attribute's InSync compares (compare.go): a regular
// file's bytes when its size is the desired content's (a different size
// is reported as the file's digest, which the message needs), a digest or
// a time for a source, a recursion's entries out of sync, a mode's bits,
// an owner's id. Whether each is in sync is the attribute's decision:
// content byte for byte or by digest, a symbolic mode applied to the
// current bits, an owner's name resolved to its id (as Puppet, ownership
// is in sync when not running as root, with a warning). Set (write.go)
// writes through package atomicfile: an unnamed O_TMPFILE inode (or a
// hidden temp file) in the target's directory or staging_location, fchown
// and fchmod on the descriptor, fsync, validate_cmd, then a name and a
// rename over the target; a failure or a crash leaves the old file and no
// temp file. Renaming replaces a symlink instead of writing through it.
//
// # Durability
//
// The data of a new file is fsynced before its rename, so it is whole or
// absent after a crash. The rename (like every other change to a
// directory's entries: a link, a removal, a mkdir, a recursion's entries)
// becomes durable only when the directory is fsynced, which costs a
// journal commit of its own; the provider marks the directory in
// env.Dirs (dirsync.Syncer) instead of fsyncing it. With a nil or
// immediate dirsync.Syncer the fsync happens before Set returns; the receiver
// uses a deferred one and fsyncs each changed directory once per group of
// changes (see its --sync flag). Backups are the exception: their
// directories are fsynced before the change they protect is made, so a
// kept change never loses its backup.
//
// # Recursion and backups
//
// With recurse, a directory's `content` is its tree (tree.go): Get plans
// what each entry below needs (copied from the source, chowned,
// chmodded, purged) and Set carries the plan out; the resource's one
// event sums the entries up, and a caller that wants each entry's own
// event as Puppet words it (the agent's pluginsync) sets a tree observer
// on the context (WithTreeObserver). Backups go beside the
// file (a ".suffix") or into the local content-addressed bucket under the
// state directory (package filebucket), which `receiver filebucket` lists
// and restores.
package file
