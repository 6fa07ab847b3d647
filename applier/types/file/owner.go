package file

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/pippet/pippet/applier"
)

// Ownership and mode: who owns a file (owner, group) and its
// permission bits, set on what is already there, never following a
// link swapped in since the read.

// wantOwner resolves the desired owner and group (-1 when unmanaged).
func (p *posix) wantOwner() (int, int, error) {
	uid, gid := -1, -1
	if s, ok := p.r.Value("owner").(string); ok {
		id, err := lookupID(p.env, s, false)
		if err != nil {
			return 0, 0, err
		}
		uid = id
	}
	if s, ok := p.r.Value("group").(string); ok {
		id, err := lookupID(p.env, s, true)
		if err != nil {
			return 0, 0, err
		}
		gid = id
	}
	return uid, gid, nil
}

func (p *posix) setOwnership(c *applier.Change) error {
	group := c.Property == "group"
	want, _ := c.Should.(string)
	id, err := lookupID(p.env, want, group)
	if err != nil {
		return err
	}
	uid, gid := id, -1
	if group {
		uid, gid = -1, id
	}
	// Lchown unless links follow: a file swapped for a symlink since
	// the lstat must not hand its target to someone else.
	chown := os.Lchown
	if p.follow() {
		chown = os.Chown
	}
	if err := chown(p.path, uid, gid); err != nil {
		return fmt.Errorf("chown %s: %w", p.path, err)
	}
	// Named as Puppet names them: owner changed 'root' to 'puppet'.
	name := want
	if _, numeric, _ := applier.ParseID(want); numeric {
		name = idName(p.env, id, group)
	}
	c.Message = fmt.Sprintf("%s changed '%v' to '%s'", c.Property, c.Is, name)
	return nil
}

func (p *posix) setMode(c *applier.Change) error {
	want, _ := c.Should.(string)
	cur := statMode(p.fi)
	bits, err := applyMode(want, cur, p.kind == "directory")
	if err != nil {
		return err
	}
	if err := chmod(p.path, bits, p.follow()); err != nil {
		return err
	}
	// The message names the mode read before any change of this run (a
	// content change may already have carried the new mode along).
	c.Message = fmt.Sprintf("mode changed '%v' to '%s'", c.Is, formatMode(bits))
	if !isNumericMode(want) {
		c.Message += " (" + want + ")"
	}
	return nil
}

// chmod sets all twelve mode bits. Unless follow, it goes through an
// O_PATH descriptor opened with O_NOFOLLOW (and /proc/self/fd), so a file
// swapped for a symlink since the lstat is refused rather than its target
// changed, and nothing is opened for reading: a device node, a FIFO or a
// socket is chmodded without being opened. Without /proc it falls back to
// a descriptor opened for reading (never a device's).
func chmod(path string, bits uint32, follow bool) error {
	if follow {
		if err := syscall.Chmod(path, bits); err != nil {
			return &os.PathError{Op: "chmod", Path: path, Err: err}
		}
		return nil
	}
	fd, err := openPath(path)
	if err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return &os.PathError{Op: "chmod", Path: path, Err: errSwapped}
	}
	err = syscall.Chmod("/proc/self/fd/"+strconv.Itoa(fd), bits)
	if err == nil {
		return nil
	}
	if err != syscall.ENOENT {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	// No /proc: a descriptor opened for reading, for a file or a directory.
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG, syscall.S_IFDIR:
	default:
		return &os.PathError{Op: "chmod", Path: path, Err: errors.New("cannot change the mode of a special file without /proc")}
	}
	rfd, err := openRead(path, false)
	if err == syscall.EACCES {
		// Not readable by us (not root): fall back to the path.
		if err := syscall.Chmod(path, bits); err != nil {
			return &os.PathError{Op: "chmod", Path: path, Err: err}
		}
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	defer syscall.Close(rfd)
	if err := syscall.Fchmod(rfd, bits); err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	return nil
}

// openPath opens path itself (a symlink too: O_NOFOLLOW) with O_PATH,
// which reads nothing and needs no permission on the file.
func openPath(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// oPath is O_PATH, which package syscall does not name.
const oPath = 0x200000
