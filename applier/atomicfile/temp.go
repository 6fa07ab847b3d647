package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Temp names. A temp file or link that needs a name is called
// ".BASE.pippet-PID-N" beside its target: BASE is the target's name, cut
// (at a character boundary) so the whole name stays within NAME_MAX (255
// bytes) however long the target's is; PID is the writing process's, so a
// later process can tell a temp whose writer is dead.

// nameMax is the longest name a directory entry may have (NAME_MAX).
const nameMax = 255

// tempMarker separates the target's name from the writer's identity.
const tempMarker = ".pippet-"

// TempName is the n-th temp name beside a target called base, for this
// process. It is at most NAME_MAX bytes long.
func TempName(base string, n int) string {
	suffix := tempMarker + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(n)
	if room := nameMax - 1 - len(suffix); len(base) > room {
		base = base[:room]
		for len(base) > 0 && !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
	}
	return "." + base + suffix
}

// tempPID reads the writer's pid from a temp name; ok false for a name
// that is not one.
func tempPID(name string) (int, bool) {
	if !strings.HasPrefix(name, ".") {
		return 0, false
	}
	i := strings.LastIndex(name, tempMarker)
	if i < 0 {
		return 0, false
	}
	pidStr, n, found := strings.Cut(name[i+len(tempMarker):], "-")
	if !found || !allDigits(pidStr) || !allDigits(n) {
		return 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// started is when this process began (close enough: when the package was
// initialised); a temp modified since may belong to a live writer this
// process cannot see (another pid namespace) and is left alone.
var started = time.Now()

// swept holds the directories whose stale temps this process removed.
var swept sync.Map

// sweep removes, once per directory per process, the temp files and
// links a killed writer left in dir: entries named as TempName names
// them whose writer's pid is not alive here, last modified before this
// process started, and owned by this process's user (or any, as root).
// It is best effort: what cannot be read or removed stays.
func sweep(dir string) {
	if _, done := swept.LoadOrStore(dir, true); done {
		return
	}
	SweepNow(dir)
}

// SweepNow removes the stale temps in dir now (see sweep), whether or not
// this process swept it before, and reports how many it removed.
func SweepNow(dir string) int {
	d, err := os.Open(dir)
	if err != nil {
		return 0
	}
	defer d.Close()
	removed := 0
	self, euid := os.Getpid(), uint32(os.Geteuid())
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			pid, ok := tempPID(name)
			if !ok || pid == self || alive(pid) {
				continue
			}
			var st syscall.Stat_t
			p := filepath.Join(dir, name)
			if syscall.Lstat(p, &st) != nil {
				continue
			}
			if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFREG && t != syscall.S_IFLNK {
				continue
			}
			if euid != 0 && st.Uid != euid {
				continue
			}
			if !time.Unix(st.Mtim.Sec, st.Mtim.Nsec).Before(started) {
				continue
			}
			if os.Remove(p) == nil {
				removed++
			}
		}
		if err != nil {
			break
		}
	}
	return removed
}

// alive reports whether a process with this pid exists here.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// createNamed creates a new hidden temp file (TempName) in dir.
func createNamed(dir, base string) (*os.File, string, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, TempName(base, i))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, os.ErrExist) || i >= 100 {
			return nil, "", err
		}
	}
}
