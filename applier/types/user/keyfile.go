package user

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/pippet/pippet/applier/types/internal/accounts"
)

// Key files are read and written as Puppet's purge (ssh_authorized_key
// resources, applied as the user) reads and writes them, with the
// guarantee its dropped privileges give, while the receiver stays root:
//
//   - The path is walked one component at a time from /, each directory
//     held open, every step relative to the one before: nothing swapped
//     in the path afterwards can redirect the read or the write.
//   - A symbolic link along the path is followed only when nobody but root
//     could have made it (owned by root, in a directory only root may
//     write); any other (the user's ~/.ssh pointing at another account's
//     .ssh, or at /root/.ssh) makes the file no key file: nothing is read
//     through it, listed or removed.
//   - Each directory must be one the user may pass through, and the file
//     one the user may read, or the file is no key file, as it would not be
//     to the user; replacing it needs a directory the user may write.
//   - Only a regular file is a key file; it is replaced by a temporary file
//     in the directory held open (mode, owner and group kept), fsynced and
//     renamed over it, after checking it is still the file read.

// maxLinks bounds the links followed while walking one path.
const maxLinks = 40

// keyFile is one key file as purge_ssh_keys found it.
type keyFile struct {
	path  string
	dir   string // the directory the file is in, as walked
	dirfd int    // that directory, held open
	name  string
	st    syscall.Stat_t
	data  []byte
}

func (k *keyFile) close() {
	if k != nil && k.dirfd >= 0 {
		syscall.Close(k.dirfd)
		k.dirfd = -1
	}
}

// notKeyFile says why a path is no key file for the user; it is logged,
// not an error.
type notKeyFile struct{ reason string }

func (e *notKeyFile) Error() string { return e.reason }

// perms decides what the user could do, as the kernel decides it.
type perms struct {
	u      *accounts.User
	groups []int64
}

func newPerms(u *accounts.User) (*perms, error) {
	p := &perms{u: u, groups: []int64{u.GID}}
	if u.UID == 0 {
		return p, nil
	}
	all, err := accounts.LoadGroups()
	if err != nil {
		return nil, err
	}
	for _, name := range all.MemberOf(u.Name) {
		if g := all.Lookup(name); g != nil {
			p.groups = append(p.groups, g.GID)
		}
	}
	return p, nil
}

// may reports whether the user has the access bit (4 read, 2 write,
// 1 search) on something of this owner, group and mode.
func (p *perms) may(st *syscall.Stat_t, bit uint32) bool {
	if p.u.UID == 0 {
		return true
	}
	if int64(st.Uid) == p.u.UID {
		return st.Mode&(bit<<6) != 0
	}
	for _, g := range p.groups {
		if int64(st.Gid) == g {
			return st.Mode&(bit<<3) != 0
		}
	}
	return st.Mode&bit != 0
}

// rootsOnly: a link owned by root, in a directory owned by root that no
// one else may write.
func rootsOnly(link, dir *syscall.Stat_t) bool {
	return link.Uid == 0 && dir.Uid == 0 && dir.Mode&0o022 == 0
}

// openKeyFile finds path as the user would; (nil, *notKeyFile) when it is
// no key file for the user (missing, hidden from the user, behind a link
// the user could have made, not a regular file).
func openKeyFile(path string, p *perms) (*keyFile, error) {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return nil, &notKeyFile{path + " is not an absolute path"}
	}
	links := 0
walk:
	for {
		fd, err := syscall.Open("/", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: "/", Err: err}
		}
		var dst syscall.Stat_t
		if err := syscall.Fstat(fd, &dst); err != nil {
			syscall.Close(fd)
			return nil, err
		}
		parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
		cur := "/"
		for i, name := range parts {
			last := i == len(parts)-1
			var st syscall.Stat_t
			if err := fstatat(fd, name, &st); err != nil {
				syscall.Close(fd)
				if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
					return nil, &notKeyFile{path + " does not exist"}
				}
				return nil, &os.PathError{Op: "lstat", Path: filepath.Join(cur, name), Err: err}
			}
			here := filepath.Join(cur, name)
			if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
				if !rootsOnly(&st, &dst) {
					syscall.Close(fd)
					return nil, &notKeyFile{fmt.Sprintf("%s is a symbolic link %s could have made: not followed", here, p.u.Name)}
				}
				target, err := readlinkat(fd, name)
				syscall.Close(fd)
				if err != nil {
					return nil, &os.PathError{Op: "readlink", Path: here, Err: err}
				}
				if links++; links > maxLinks {
					return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
				}
				if !filepath.IsAbs(target) {
					target = filepath.Join(cur, target)
				}
				path = filepath.Join(append([]string{target}, parts[i+1:]...)...)
				continue walk
			}
			if last {
				if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
					syscall.Close(fd)
					return nil, &notKeyFile{here + " is not a regular file"}
				}
				k := &keyFile{path: here, dir: cur, dirfd: fd, name: name}
				if err := k.read(p); err != nil {
					k.close()
					return nil, err
				}
				return k, nil
			}
			if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
				syscall.Close(fd)
				return nil, &notKeyFile{here + " is not a directory"}
			}
			next, err := syscall.Openat(fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			syscall.Close(fd)
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: here, Err: err}
			}
			fd = next
			if err := syscall.Fstat(fd, &dst); err != nil {
				syscall.Close(fd)
				return nil, err
			}
			if !p.may(&dst, 1) {
				syscall.Close(fd)
				return nil, &notKeyFile{fmt.Sprintf("%s cannot pass through %s", p.u.Name, here)}
			}
			cur = here
		}
		syscall.Close(fd)
		return nil, &notKeyFile{path + " is not a file"}
	}
}

// read reads the file open in its directory, as the user may.
func (k *keyFile) read(p *perms) error {
	fd, err := syscall.Openat(k.dirfd, k.name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOENT) {
			return &notKeyFile{k.path + " changed while it was read"}
		}
		return &os.PathError{Op: "open", Path: k.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), k.path)
	defer f.Close()
	if err := syscall.Fstat(fd, &k.st); err != nil {
		return err
	}
	if k.st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return &notKeyFile{k.path + " is not a regular file"}
	}
	if !p.may(&k.st, 4) {
		return &notKeyFile{fmt.Sprintf("%s is not readable by %s", k.path, p.u.Name)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", k.path, err)
	}
	if len(data) > maxKeyFile {
		return fmt.Errorf("%s is larger than %d bytes: not a key file", k.path, maxKeyFile)
	}
	k.data = data
	return nil
}

// replace puts data in place of the file, in the directory held open,
// where the user may write, with the file's mode, owner and group; the
// file must still be the one read.
func (k *keyFile) replace(ctx context.Context, p *perms, data []byte) error {
	var dst syscall.Stat_t
	if err := syscall.Fstat(k.dirfd, &dst); err != nil {
		return err
	}
	if !p.may(&dst, 2) {
		return fmt.Errorf("%s is not writable by %s: %w", k.dir, p.u.Name, os.ErrPermission)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var tmp string
	var fd int
	var err error
	for i := 0; ; i++ {
		tmp = "." + k.name + ".pippet-" + strconv.FormatInt(time.Now().UnixNano()+int64(i), 36)
		fd, err = syscall.Openat(k.dirfd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err == nil || !errors.Is(err, syscall.EEXIST) || i >= 16 {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(k.dir, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(k.dir, tmp))
	placed := false
	defer func() {
		f.Close()
		if !placed {
			syscall.Unlinkat(k.dirfd, tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chown(int(k.st.Uid), int(k.st.Gid)); err != nil {
		return err
	}
	if err := f.Chmod(os.FileMode(k.st.Mode & 0o777)); err != nil {
		return err
	}
	if k.st.Mode&0o7000 != 0 {
		if err := syscall.Fchmod(fd, k.st.Mode&0o7777); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	var now syscall.Stat_t
	if err := fstatat(k.dirfd, k.name, &now); err != nil || now.Dev != k.st.Dev || now.Ino != k.st.Ino {
		return fmt.Errorf("%s changed while it was purged; left as it is", k.path)
	}
	if err := syscall.Renameat(k.dirfd, tmp, k.dirfd, k.name); err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: k.path, Err: err}
	}
	placed = true
	return syscall.Fsync(k.dirfd)
}

// fstatat is lstat relative to dirfd.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), atSymlinkNoFollow, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// atSymlinkNoFollow is Linux's AT_SYMLINK_NOFOLLOW.
const atSymlinkNoFollow = 0x100

// readlinkat reads the link name in dirfd.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := readlinkatRaw(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// readlinkatRaw is readlinkat(2) (the syscall package keeps its own
// unexported).
func readlinkatRaw(dirfd int, name string, buf []byte) (int, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 0, err
	}
	n, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
