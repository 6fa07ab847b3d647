package file

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// statInfo is an fs.FileInfo over a Stat_t the provider keeps, so that
// reading a file's state allocates nothing (os.Lstat allocates a FileInfo
// and a copy of the name on every call: the most frequent request, an
// unchanged file, reads one).
type statInfo struct {
	path string
	sys  syscall.Stat_t
}

// lstatInto fills st from lstat(2), or stat(2) when follow; errors are
// os.Lstat's and os.Stat's.
func lstatInto(path string, follow bool, st *statInfo) error {
	op := "lstat"
	if follow {
		op = "stat"
	}
	for {
		var err error
		if follow {
			err = syscall.Stat(path, &st.sys)
		} else {
			err = syscall.Lstat(path, &st.sys)
		}
		switch err {
		case nil:
			st.path = path
			return nil
		case syscall.EINTR:
			continue
		}
		return &os.PathError{Op: op, Path: path, Err: err}
	}
}

func (s *statInfo) Name() string       { return filepath.Base(s.path) }
func (s *statInfo) Size() int64        { return s.sys.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.sys.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.sys.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (s *statInfo) Sys() any           { return &s.sys }

// Mode converts st_mode as package os does.
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.sys.Mode & 0o777)
	switch s.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if s.sys.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.sys.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.sys.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
