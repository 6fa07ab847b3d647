package sshauthkey

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/applier/types/internal/accounts"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// atFDCWD is Linux's AT_FDCWD (the syscall package leaves it out).
const atFDCWD = -0x64

// Puppet's modes for what it creates.
const (
	dirPerm  = 0o700
	filePerm = 0o600
)

// writer replaces one authorized_keys file (see the package doc).
type writer struct {
	path   string
	user   *accounts.User
	asUser bool // drop_privileges: act only where the user may
	env    *applier.Env
	groups []int64 // the user's groups, read when first needed
}

// mayWrite reports whether the user could write to something of this
// owner, group and mode, as the kernel decides it.
func (w *writer) mayWrite(st *syscall.Stat_t) (bool, error) {
	return w.may(st, 0o200, 0o020, 0o002)
}

// mayRead reports whether the user could read it.
func (w *writer) mayRead(st *syscall.Stat_t) (bool, error) {
	return w.may(st, 0o400, 0o040, 0o004)
}

// may checks the permission bit of the class (owner, group, other) the
// user falls in.
func (w *writer) may(st *syscall.Stat_t, owner, group, other uint32) (bool, error) {
	u := w.user
	if u.UID == 0 {
		return true, nil
	}
	if int64(st.Uid) == u.UID {
		return st.Mode&owner != 0, nil
	}
	if w.groups == nil {
		all, err := accounts.LoadGroups()
		if err != nil {
			return false, err
		}
		w.groups = []int64{u.GID}
		for _, name := range all.MemberOf(u.Name) {
			if g := all.Lookup(name); g != nil {
				w.groups = append(w.groups, g.GID)
			}
		}
	}
	for _, g := range w.groups {
		if int64(st.Gid) == g {
			return st.Mode&group != 0, nil
		}
	}
	return st.Mode&other != 0, nil
}

// checkDir fails unless the user may write in the directory open as fd.
func (w *writer) checkDir(fd int, dir string) error {
	if !w.asUser {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	ok, err := w.mayWrite(&st)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s is not writable by %s: %w", dir, w.user.Name, os.ErrPermission)
	}
	return nil
}

// trusted is Puppet's check for drop_privileges false: each directory
// from the target's up to (not including) the one below the root is owned
// by us and writable by nobody else; symbolic links are resolved.
func trusted(dir string) error {
	for p := dir; filepath.Dir(p) != "/" && p != "/"; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(real, &st); err != nil {
			return &os.PathError{Op: "stat", Path: real, Err: err}
		}
		if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
			return errors.New("drop_privileges is false but the target path is not trusted")
		}
	}
	return nil
}

func openDir(dirfd int, path string, nofollow bool) (int, error) {
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_CLOEXEC
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	return syscall.Openat(dirfd, path, flags, 0)
}

// write replaces the file's content with data, owned by the user, mode
// 0600: a temporary file in the directory held open, fsynced, renamed
// over the file. The directory is created (one level, 0700, the user's)
// when missing.
func (w *writer) write(ctx context.Context, data []byte) error {
	if err := w.writeAt(ctx, w.path, data, 0); err != nil {
		return fmt.Errorf("writing %s: %w", w.path, err)
	}
	return nil
}

func (w *writer) writeAt(ctx context.Context, path string, data []byte, depth int) error {
	dir, name := filepath.Dir(path), filepath.Base(path)
	if !w.asUser {
		if err := trusted(dir); err != nil {
			return err
		}
	}
	dfd, err := openDir(atFDCWD, dir, false)
	if errors.Is(err, syscall.ENOENT) {
		if dfd, err = w.mkdir(dir); err != nil {
			return err
		}
	} else if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(dfd)
	if err := w.checkDir(dfd, dir); err != nil {
		return err
	}

	// The file as it is, never through a link: open (no follow, no
	// blocking on a fifo) and fstat.
	var st syscall.Stat_t
	ffd, err := syscall.Openat(dfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err == nil {
		err = syscall.Fstat(ffd, &st)
		syscall.Close(ffd)
	}
	exists := err == nil
	switch {
	case errors.Is(err, syscall.ENOENT):
	case errors.Is(err, syscall.ELOOP):
		// A symbolic link.
		if w.asUser && w.user.UID != 0 || depth > 0 {
			return fmt.Errorf("refusing to write through the symbolic link %s", path)
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		return w.writeAt(ctx, real, data, depth+1)
	case err != nil:
		return &os.PathError{Op: "open", Path: path, Err: err}
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return fmt.Errorf("%s is not a regular file", path)
	case w.asUser:
		ok, err := w.mayWrite(&st)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s is not writable by %s: %w", path, w.user.Name, os.ErrPermission)
		}
	}
	if exists && w.env != nil {
		if err := parsedfile.Backup(ctx, w.env, path); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = "." + name + ".pippet-" + strconv.FormatInt(time.Now().UnixNano()+int64(i), 36)
		fd, err = syscall.Openat(dfd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, filePerm)
		if err == nil || !errors.Is(err, syscall.EEXIST) || i >= 16 {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	done := false
	defer func() {
		if !done {
			f.Close()
			syscall.Unlinkat(dfd, tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if w.user.UID != int64(os.Geteuid()) || w.user.GID != int64(os.Getegid()) {
		if err := f.Chown(int(w.user.UID), int(w.user.GID)); err != nil {
			return err
		}
	}
	if err := f.Chmod(filePerm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		done = true
		syscall.Unlinkat(dfd, tmp)
		return err
	}
	if err := syscall.Renameat(dfd, tmp, dfd, name); err != nil {
		done = true
		syscall.Unlinkat(dfd, tmp)
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	done = true
	var dirs *dirsync.Syncer
	if w.env != nil {
		dirs = w.env.Dirs
	}
	return dirs.Mark(dir)
}

// mkdir makes the missing directory dir (its parent must exist), 0700,
// owned by the user, and returns it open.
func (w *writer) mkdir(dir string) (int, error) {
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	pfd, err := openDir(atFDCWD, parent, false)
	if err != nil {
		return -1, &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	defer syscall.Close(pfd)
	if err := w.checkDir(pfd, parent); err != nil {
		return -1, err
	}
	if err := syscall.Mkdirat(pfd, base, dirPerm); err != nil && !errors.Is(err, syscall.EEXIST) {
		return -1, &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	fd, err := openDir(pfd, base, true)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if int64(st.Uid) != w.user.UID || int64(st.Gid) != w.user.GID {
		if int(st.Uid) != os.Geteuid() {
			syscall.Close(fd)
			return -1, fmt.Errorf("%s appeared, owned by uid %d", dir, st.Uid)
		}
		if err := syscall.Fchown(fd, int(w.user.UID), int(w.user.GID)); err != nil {
			syscall.Close(fd)
			return -1, err
		}
	}
	var dirs *dirsync.Syncer
	if w.env != nil {
		dirs = w.env.Dirs
	}
	if err := dirs.Mark(parent); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}
