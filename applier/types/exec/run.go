package exec

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier/command"
)

// run runs one command through the shared runner (bounded output tail,
// timeout and cancellation ending the whole process group, nothing left
// behind when the receiver exits).
func run(ctx context.Context, c *command.Cmd) (command.Result, error) { return command.Run(ctx, c) }

// lastLines returns up to n trailing lines of out for a failure message.
func lastLines(out []byte, n int) string { return command.LastLines(out, n) }

// lookPath finds an executable regular file named exe in dirs.
func lookPath(exe string, dirs []string) (string, bool) {
	for _, d := range dirs {
		p := d + "/" + exe
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// checkExe verifies the program exists, as Puppet's posix provider does
// before running anything.
func checkExe(exe string, dirs []string) (string, error) {
	if strings.HasPrefix(exe, "/") {
		fi, err := os.Stat(exe)
		switch {
		case err != nil:
			return "", fmt.Errorf("Could not find command '%s'", exe)
		case !fi.Mode().IsRegular():
			return "", fmt.Errorf("'%s' is a %s, not a file", exe, fileKind(fi.Mode()))
		case fi.Mode()&0o111 == 0:
			return "", fmt.Errorf("'%s' is not executable", exe)
		}
		return exe, nil
	}
	if p, ok := lookPath(exe, dirs); ok {
		return p, nil
	}
	return "", fmt.Errorf("Could not find command '%s'", exe)
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "link"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func formatCodes(codes []any) string {
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = strconv.FormatInt(c.(int64), 10)
	}
	return strings.Join(parts, ",")
}
