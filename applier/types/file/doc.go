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
// *Content too, by default: the provider fills its checksum from the
// source's metadata, and the engine compares and syncs it like inline
// content.
//
// # Provider
//
// The posix provider's Get does one lstat (stat with links: follow) and
// reports each property as the desired value itself when it is in sync by
// the type's rules (replace: false, a link's mode, an owner given by name
// or id, the checksum kind), else the current value: the engine's plain
// comparison then does the rest. Inline content is compared byte for byte
// in a stream after a size check; sources by digest (computed for local
// files, taken from X-Checksum-* or Content-MD5 headers over HTTP, or
// from a download when a server offers nothing). Set writes through
// package atomicfile: an unnamed O_TMPFILE inode (or a hidden temp file) in the
// target's directory or staging_location, fchown and fchmod on the
// descriptor, fsync, validate_cmd, then a name and a rename over the
// target; a failure or a crash leaves the old file and no temp file.
// Renaming replaces a symlink instead of writing through it.
//
// # Durability
//
// The data of a new file is fsynced before its rename, so it is whole or
// absent after a crash. The rename (like every other change to a
// directory's entries: a link, a removal, a mkdir, a recursion's entries)
// becomes durable only when the directory is fsynced, which costs a
// journal commit of its own; the provider marks the directory in
// env.Dirs (applier.DirSync) instead of fsyncing it. With a nil or
// immediate DirSync the fsync happens before Set returns; the receiver
// uses a deferred one and fsyncs each changed directory once per group of
// changes (see its --sync flag). Backups are the exception: their
// directories are fsynced before the change they protect is made, so a
// kept change never loses its backup.
//
// # Recursion and backups
//
// With recurse, a directory's `content` is its tree (tree.go): Get plans
// what each entry below needs (copied from the source, chowned,
// chmodded, purged) and Set carries the plan out. Backups go beside the
// file (a ".suffix") or into the local content-addressed bucket under the
// state directory (package filebucket), which `receiver filebucket` lists
// and restores.
package file
