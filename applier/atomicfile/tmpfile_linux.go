package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// oTmpFile is Linux's O_TMPFILE (which includes O_DIRECTORY).
const oTmpFile = 0o20000000 | syscall.O_DIRECTORY

const atSymlinkFollow = 0x400

// openTemp opens an unnamed file in dir (O_TMPFILE): nothing is left
// behind if the process dies before it is linked or named. When the file
// system can't, it falls back to a hidden named temp file (TempName),
// returned as the second value.
func openTemp(dir, base string) (*os.File, string, error) {
	fd, err := syscall.Open(dir, oTmpFile|syscall.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), "", nil
	}
	if !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.EINVAL) {
		return nil, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return createNamed(dir, base)
}

// unnamedPath is a path by which another process (a validate command)
// can open the unnamed file f while this process holds it open.
func unnamedPath(f *os.File) string {
	return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.Itoa(int(f.Fd()))
}

// setTimes gives the unnamed file f its access and modification times.
func setTimes(f *os.File, t time.Time) error {
	ts := []syscall.Timespec{syscall.NsecToTimespec(t.UnixNano()), syscall.NsecToTimespec(t.UnixNano())}
	return syscall.UtimesNano("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), ts)
}

// linkTemp gives an unnamed temp file the name path, failing with EEXIST
// if path exists (whatever it is: a dangling symlink is not followed).
func linkTemp(f *os.File, path string) error {
	return linkat("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), path)
}

// nameTemp gives an unnamed temp file a hidden name (TempName) in dir.
func nameTemp(f *os.File, dir, base string) (string, error) {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for i := 0; i < 100; i++ {
		name := filepath.Join(dir, TempName(base, i))
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
