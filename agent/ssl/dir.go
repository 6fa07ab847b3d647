package ssl

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The ssldir's layout and modes, as Puppet's settings declare them
// (ssldir, certdir, privatekeydir, ... in defaults.rb).
const (
	certsDir    = "certs"
	keysDir     = "private_keys"
	pubKeysDir  = "public_keys"
	requestsDir = "certificate_requests"
	privateDir  = "private"

	caFile  = "ca.pem"  // in certs
	crlFile = "crl.pem" // in the ssldir itself

	modeSSLDir  fs.FileMode = 0o771
	modeKeysDir fs.FileMode = 0o750
	modePubDir  fs.FileMode = 0o755
	modeKey     fs.FileMode = 0o640
	modePublic  fs.FileMode = 0o644
)

// subdirs are the directories Puppet makes below the ssldir, with their
// modes.
var subdirs = []struct {
	name string
	mode fs.FileMode
}{
	{certsDir, modePubDir},
	{keysDir, modeKeysDir},
	{pubKeysDir, modePubDir},
	{requestsDir, modePubDir},
	{privateDir, modeKeysDir},
}

// maxPEM bounds what is read from the ssldir or a server: a CRL of a
// large site (hundreds of thousands of revocations) is tens of MiB at
// most; a key or certificate is a few KiB.
const maxPEM = 64 << 20

// dir is an open directory of the ssldir. Every file below it is reached
// relative to its descriptor, never through a symbolic link: a link
// planted in place of a file or a subdirectory (a private key pointing at
// another file, certs/ pointing elsewhere) is refused, and one swapped in
// between a check and a use is refused by the kernel (O_NOFOLLOW).
type dir struct {
	fd   int
	path string
}

func (d *dir) close() {
	if d != nil && d.fd >= 0 {
		syscall.Close(d.fd)
		d.fd = -1
	}
}

// openSSLDir opens the ssldir (the configured path itself may go through
// links, as an administrator may have set it up) and, with create, makes
// it and its subdirectories with Puppet's modes.
func openSSLDir(path string, create bool) (*dir, error) {
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("making the parent of the ssldir: %w", err)
		}
		if err := syscall.Mkdir(path, uint32(modeSSLDir)); err == nil {
			if err := os.Chmod(path, modeSSLDir); err != nil {
				return nil, fmt.Errorf("ssldir %s: %w", path, err)
			}
		} else if !errors.Is(err, syscall.EEXIST) {
			return nil, fmt.Errorf("making the ssldir %s: %w", path, err)
		}
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ssldir %s: %w", path, err)
	}
	return &dir{fd: fd, path: path}, nil
}

// sub opens the subdirectory name, making it with mode when create is
// set; an existing one gets Puppet's mode too (as Puppet's settings
// enforce it), where the process may change it.
func (d *dir) sub(name string, mode fs.FileMode, create bool) (*dir, error) {
	p := filepath.Join(d.path, name)
	if create {
		if err := syscall.Mkdirat(d.fd, name, uint32(mode)); err != nil && !errors.Is(err, syscall.EEXIST) {
			return nil, fmt.Errorf("making %s: %w", p, err)
		}
	}
	fd, err := syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			// O_DIRECTORY answers ENOTDIR for a link too: say which.
			if st, lerr := os.Lstat(p); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
				err = syscall.ELOOP
			}
		}
		return nil, pathError(p, "directory", err)
	}
	s := &dir{fd: fd, path: p}
	if create {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err == nil && fs.FileMode(st.Mode&0o7777) != mode {
			if err := syscall.Fchmod(fd, uint32(mode)); err != nil && !errors.Is(err, syscall.EPERM) {
				s.close()
				return nil, fmt.Errorf("setting the mode of %s: %w", p, err)
			}
		}
	}
	return s, nil
}

// pathError words a refused open: a symbolic link (ELOOP with
// O_NOFOLLOW) or something that is not what was expected.
func pathError(p, what string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%s is a symbolic link: refused (the ssldir's files and directories must be real ones)", p)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s is not a %s", p, what)
	case errors.Is(err, syscall.ENOENT):
		return &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}

// read returns the content of the regular file name, or an error
// satisfying errors.Is(err, fs.ErrNotExist) when there is none.
func (d *dir) read(name string) ([]byte, error) {
	p := filepath.Join(d.path, name)
	// O_NONBLOCK: a FIFO planted in place of a file does not hang the
	// open; the type check below refuses it.
	fd, err := syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathError(p, "file", err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: refused", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("%s is larger than %d bytes: refused", p, maxPEM)
	}
	return b, nil
}

// write replaces name with data, whole or not at all: a temporary file
// in the same directory (created exclusively, never through a link) is
// written, given mode, synced and renamed over name, and the directory
// is synced. A link at name is replaced, never followed.
func (d *dir) write(name string, data []byte, mode fs.FileMode) (err error) {
	p := filepath.Join(d.path, name)
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := "." + name + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := syscall.Openat(d.fd, tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(mode&0o600))
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(d.path, tmp))
	defer func() {
		if err != nil {
			f.Close()
			_ = syscall.Unlinkat(d.fd, tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err = chownService(f); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	// The mode is set on the descriptor once the content is written: the
	// umask plays no part, and a key is never readable by others.
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err = syscall.Renameat(d.fd, tmp, d.fd, name); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := syscall.Fsync(d.fd); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("syncing %s: %w", d.path, err)
	}
	return nil
}

// remove deletes name if it is there (a link is removed, not followed).
func (d *dir) remove(name string) error {
	if err := syscall.Unlinkat(d.fd, name); err != nil && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("removing %s: %w", filepath.Join(d.path, name), err)
	}
	return nil
}

// mtime is the modification time of the regular file name, ok false
// when there is none.
func (d *dir) mtime(name string) (t time.Time, ok bool) {
	fd, err := syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return time.Time{}, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return time.Time{}, false
	}
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec), true
}

// touch sets the modification time of the regular file name to t.
func (d *dir) touch(name string, t time.Time) error {
	p := filepath.Join(d.path, name)
	fd, err := syscall.Openat(d.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return pathError(p, "file", err)
	}
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(t.UnixNano())
	if err := syscall.Futimes(fd, []syscall.Timeval{tv, tv}); err != nil {
		return fmt.Errorf("touching %s: %w", p, err)
	}
	return nil
}
