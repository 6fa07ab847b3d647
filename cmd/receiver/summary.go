package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/pippet/pippet/protocol"
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

// tally counts the answers for the summary line and --detailed-exitcodes.
// A nil *tally counts nothing, so the loop pays nothing for it unless one
// of them is wanted.
type tally struct {
	resources, changed, failed int
	busy                       time.Duration // time spent decoding and applying
}

// add counts one answer; start is when its line was taken up.
func (t *tally) add(res *protocol.Result, start time.Time) {
	if t == nil {
		return
	}
	t.resources++
	if res.Changed {
		t.changed++
	}
	if res.Failed || res.Error {
		t.failed++
	}
	t.busy += time.Since(start)
}

// summary is the line logged at notice at the end of input, like
// `puppet apply`'s "Applied catalog in 0.05 seconds".
func (t *tally) summary() string {
	noun := "resources"
	if t.resources == 1 {
		noun = "resource"
	}
	return fmt.Sprintf("Applied %d %s in %.2f s: %d changed, %d failed", t.resources, noun, t.busy.Seconds(), t.changed, t.failed)
}

// detailedExitCode is `puppet apply --detailed-exitcodes`'s status: 0
// nothing changed and nothing failed, 2 changes, 4 failures, 6 both.
func (t *tally) detailedExitCode() int {
	code := 0
	if t.changed > 0 {
		code |= 2
	}
	if t.failed > 0 {
		code |= 4
	}
	return code
}
