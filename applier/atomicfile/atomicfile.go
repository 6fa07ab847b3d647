// Package atomicfile replaces a file's content so that whoever reads it,
// before or after a crash, sees the old content or the new, never a part.
// Every type that writes a file (file, host and mount through their parsed
// files, the filebucket, and the types that manage keys and crontabs)
// writes it here.
//
// # How a file is written
//
// Write (bytes) and WriteFunc (a stream) make the new content in a temp
// file in the target's directory (or Options.TempDir): an unnamed
// O_TMPFILE inode where the file system allows it, else a hidden named
// file. The temp file gets its owner and mode on the open descriptor
// before any data is written (so the data is never readable by anyone
// the final mode excludes), is filled, fsynced, optionally checked
// (Options.Validate) and then put in place: when no file exists at the
// target, the unnamed inode is linked as the target itself; otherwise it
// is given a hidden name and renamed over the target. rename(2) replaces
// a symlink at the target instead of writing through it (unless
// Options.FollowLinks).
//
// On any error the target is untouched and the temp file is gone.
//
// # Durability
//
// The data is durable before the rename or link, so after a crash the
// target holds the old content or the new. The new name is durable once
// the directory is fsynced, which Options.Dirs decides: nil fsyncs it
// before Write returns, a deferred dirsync.Syncer at its owner's next
// Flush.
package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier/dirsync"
)

// Options say how the new file is made. The zero value writes a file of
// mode 0000 owned by root (UID and GID 0): set Mode, and UID and GID to
// -1 to leave the owner as the writing process's.
type Options struct {
	// Mode is the new file's twelve permission bits (0o644, 0o4755, ...).
	Mode uint32
	// UID and GID are the new file's owner and group; -1 leaves the
	// writing process's.
	UID, GID int
	// KeepExisting: when a regular file exists at the target, the new
	// one gets its mode, owner and group instead of Mode, UID and GID
	// (which then apply only to a file that did not exist).
	KeepExisting bool
	// FollowLinks: a symlink at the target is followed and the file it
	// points to replaced (the temp file is made beside that file). Without
	// it the link itself is replaced.
	FollowLinks bool
	// Exists is a hint that a file is known to exist at the target (the
	// caller has just lstat'ed it): the new file goes straight to a temp
	// name and a rename, saving a link attempt.
	Exists bool
	// TempDir is where the temp file is made; "" is the target's
	// directory. Only a temp file on the target's file system can be
	// renamed into place.
	TempDir string
	// MTime, when not zero, is given to the new file as its access and
	// modification time before it is put in place.
	MTime time.Time
	// Validate, when set, is called with the temp file's name after the
	// data is fsynced and before it replaces the target; an error keeps
	// the old file and is returned.
	Validate func(ctx context.Context, tempPath string) error
	// Dirs hears of the changed directory; nil fsyncs it before Write
	// returns.
	Dirs *dirsync.Syncer
	// InPlaceFallback: when the target cannot be replaced by rename (it is
	// a mount point, as a bind-mounted /etc/hosts is in a container:
	// EBUSY, or across file systems: EXDEV), rewrite it in place instead
	// of failing.
	InPlaceFallback bool
}

// Write replaces path's content with data (see the package doc).
func Write(ctx context.Context, path string, data []byte, o Options) error {
	return WriteFunc(ctx, path, o, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path's content with what fill writes (see the
// package doc). An error from fill is returned as it is; others name the
// path and the step that failed.
func WriteFunc(ctx context.Context, path string, o Options, fill func(io.Writer) error) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if o.FollowLinks {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			if o.TempDir == filepath.Dir(path) {
				o.TempDir = ""
			}
			path = real
		}
	}
	if o.KeepExisting {
		var st syscall.Stat_t
		err := syscall.Lstat(path, &st)
		switch {
		case err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG:
			o.Mode, o.UID, o.GID, o.Exists = st.Mode&0o7777, int(st.Uid), int(st.Gid), true
			if o.UID == os.Geteuid() && o.GID == os.Getegid() {
				o.UID, o.GID = -1, -1 // already the writer's: no chown
			}
		case err == nil && !o.FollowLinks && st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
			o.Exists = true
		case err == nil:
			return fmt.Errorf("writing %s: not a regular file", path)
		case errors.Is(err, syscall.ENOENT):
		default:
			return fmt.Errorf("writing %s: %w", path, &fs.PathError{Op: "lstat", Path: path, Err: err})
		}
	}
	dir := o.TempDir
	if dir == "" {
		dir = filepath.Dir(path)
	}
	// Temps a killed writer left in the directory go first (once per
	// directory per process).
	sweep(dir)
	f, named, err := openTemp(dir, filepath.Base(path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("writing %s: directory %s does not exist: %w", path, dir, fs.ErrNotExist)
		}
		return fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	tmp := named
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil && tmp != "" {
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return err
	}
	// Owner and mode after the data: a write by a process without
	// CAP_FSETID (any user but root) clears set-id bits, as chown does.
	if o.UID >= 0 || o.GID >= 0 {
		if err := f.Chown(o.UID, o.GID); err != nil {
			return fmt.Errorf("chown temp file: %w", err)
		}
	}
	if err := f.Chmod(FileMode(o.Mode)); err != nil {
		return fmt.Errorf("chmod temp file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync temp file: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if o.Validate != nil {
		// The validator opens the temp file by a path: while it is
		// unnamed, the one /proc gives it (a process killed meanwhile
		// leaves nothing behind).
		vpath := tmp
		if vpath == "" {
			vpath = unnamedPath(f)
		}
		if err := o.Validate(ctx, vpath); err != nil {
			return err
		}
	}
	if !o.MTime.IsZero() {
		if err := setTimes(f, o.MTime); err != nil {
			return fmt.Errorf("set mtime: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if tmp == "" && !o.Exists {
		// When the target does not exist, the unnamed file is linked as
		// the target itself, no temp name nor rename needed (a file that
		// appeared meanwhile, or a symlink, makes it EEXIST: renamed over).
		err := linkTemp(f, path)
		if err == nil {
			cerr := f.Close()
			f = nil
			if cerr != nil {
				return fmt.Errorf("close %s: %w", path, cerr)
			}
			return o.Dirs.Mark(filepath.Dir(path))
		}
		if !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("link temp file to %s: %w", path, err)
		}
	}
	if tmp == "" {
		// Named only now, to be renamed at once.
		if tmp, err = nameTemp(f, dir, filepath.Base(path)); err != nil {
			return fmt.Errorf("link temp file into %s: %w", dir, err)
		}
	}
	if err := f.Close(); err != nil {
		f = nil
		return fmt.Errorf("close temp file: %w", err)
	}
	f = nil
	// rename(2) itself, not os.Rename, which lstats the target first to
	// refuse a directory: the kernel refuses it too (EISDIR).
	if err := syscall.Rename(tmp, path); err != nil {
		if o.InPlaceFallback && (err == syscall.EBUSY || err == syscall.EXDEV) {
			if err := rewriteInPlace(tmp, path); err != nil {
				return fmt.Errorf("writing %s in place: %w", path, err)
			}
			os.Remove(tmp)
			tmp = ""
			return nil
		}
		return fmt.Errorf("rename into place: %w", &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err})
	}
	tmp = ""
	return o.Dirs.Mark(filepath.Dir(path))
}

// Symlink makes path a symbolic link to target, replacing whatever file or
// link is there in one rename (never a directory): the link is made under
// a temp name (TempName) beside path, given its owner (uid, gid; -1
// leaves one as the writer's) and renamed over path; dirs hears of the
// changed directory (nil: fsynced at once).
func Symlink(path, target string, uid, gid int, dirs *dirsync.Syncer) error {
	dir := filepath.Dir(path)
	sweep(dir)
	var tmp string
	for i := 0; ; i++ {
		tmp = filepath.Join(dir, TempName(filepath.Base(path), i))
		err := os.Symlink(target, tmp)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			return fmt.Errorf("create link %s: %w", path, err)
		}
	}
	var err error
	if uid >= 0 || gid >= 0 {
		err = os.Lchown(tmp, uid, gid)
	}
	if err == nil {
		if rerr := syscall.Rename(tmp, path); rerr != nil {
			err = &os.LinkError{Op: "rename", Old: tmp, New: path, Err: rerr}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create link %s: %w", path, err)
	}
	return dirs.Mark(dir)
}

// FileMode converts twelve permission bits (0o4755) to an os.FileMode.
func FileMode(m uint32) os.FileMode {
	fm := os.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// rewriteInPlace copies the complete temp file src over dst's bytes, for
// a target rename cannot replace. The old bytes are read first and, if
// any step fails (a full file system), written back, so the target is
// never left truncated or half-written by an error (a kill during the
// rewrite still can: nothing but rename is atomic).
func rewriteInPlace(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	old, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	put := func(b []byte) error {
		if _, err := f.WriteAt(b, 0); err != nil {
			return err
		}
		if err := f.Truncate(int64(len(b))); err != nil {
			return err
		}
		return f.Sync()
	}
	if err := put(data); err != nil {
		if rerr := put(old); rerr != nil {
			return fmt.Errorf("%w; restoring the old content failed too: %v", err, rerr)
		}
		return fmt.Errorf("%w (old content restored)", err)
	}
	return f.Close()
}
