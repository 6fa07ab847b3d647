package sysfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular: a path read as a file names something else (a FIFO, a
// device, a socket, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ReadRegular reads the regular file at path (following symlinks), never
// waiting on what is not one. The path is stat'ed first, then opened
// without waiting (O_NONBLOCK: a FIFO with no writer opens at once
// instead of blocking the process until one comes), and the open
// descriptor is checked again, so a FIFO, device or socket swapped in
// between is refused as well: "PATH: not a regular file" (wrapping
// ErrNotRegular), nothing read. A user who can put a FIFO where root's
// run reads a file can thus not stall the run. A missing file is an
// error matching fs.ErrNotExist. max bounds the bytes read (0: no
// bound; more is an error).
func ReadRegular(path string, max int64) ([]byte, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(b)) > max {
		return nil, fmt.Errorf("%s: over %d bytes", path, max)
	}
	return b, nil
}
