package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

// oTmpFile is Linux's O_TMPFILE (which includes O_DIRECTORY).
const oTmpFile = 0o20000000 | syscall.O_DIRECTORY

const atSymlinkFollow = 0x400

// openTemp opens an unnamed file in dir (O_TMPFILE): nothing is left
// behind if the process dies before nameTemp. When the file system can't,
// it falls back to a hidden named temp file, returned as the second value.
func openTemp(dir, base string) (*os.File, string, error) {
	fd, err := syscall.Open(dir, oTmpFile|syscall.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), "", nil
	}
	if !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.EINVAL) {
		return nil, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f, err := os.CreateTemp(dir, "."+base+".pippet-*")
	if err != nil {
		return nil, "", err
	}
	return f, f.Name(), nil
}

// linkTemp gives an unnamed temp file the name path, failing with EEXIST
// if path exists (whatever it is: a dangling symlink is not followed).
func linkTemp(f *os.File, path string) error {
	return linkat("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), path)
}

// nameTemp gives an unnamed temp file a hidden name in dir.
func nameTemp(f *os.File, dir, base string) (string, error) {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for i := 0; i < 100; i++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.pippet-%d-%d", base, os.Getpid(), i))
		if err := linkat(src, name); err != nil {
			if errors.Is(err, syscall.EEXIST) {
				continue
			}
			return "", err
		}
		return name, nil
	}
	return "", errors.New("no free temp name")
}

func linkat(oldpath, newpath string) error {
	o, err := syscall.BytePtrFromString(oldpath)
	if err != nil {
		return err
	}
	n, err := syscall.BytePtrFromString(newpath)
	if err != nil {
		return err
	}
	const atFdcwd = -100
	fdcwd := atFdcwd
	_, _, e := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(fdcwd), uintptr(unsafe.Pointer(o)),
		uintptr(fdcwd), uintptr(unsafe.Pointer(n)), atSymlinkFollow, 0)
	if e != 0 {
		return &os.LinkError{Op: "linkat", Old: oldpath, New: newpath, Err: e}
	}
	return nil
}
