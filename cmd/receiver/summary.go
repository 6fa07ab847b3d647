package main

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Typed at a terminal, the receiver talks as `puppet apply` does: notices
// by default (one line per change, `Notice: /File[/tmp/x]/ensure:
// created`) and a summary at the end of input. Read by a controller
// through a pipe, it keeps Puppet's receiver's quiet: warnings and errors
// only, and no summary.

// isTerminal reports whether w is a terminal (a tty or pty), as isatty(3)
// does: the terminal ioctl succeeds on it.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var t syscall.Termios
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	}); err != nil {
		return false
	}
	return errno == 0
}
