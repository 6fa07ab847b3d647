package tidy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// criteria decide which entries are tidied.
type criteria struct {
	depth    int64 // levels below the root to look at; -1: all
	matches  []string
	age      int64 // seconds; -1: not given
	size     int64 // bytes; -1: not given
	timeKind string
	rmdirs   bool
	now      int64
}

// selected is one entry chosen for removal, known by its identity so that
// the removal touches exactly what was judged.
type selected struct {
	path     string
	dev, ino uint64
	kind     string // file, directory, link, other
}

func kindOf(st *syscall.Stat_t) string {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "file"
	case syscall.S_IFDIR:
		return "directory"
	case syscall.S_IFLNK:
		return "link"
	}
	return "other"
}

// tidy reports whether a candidate meets the criteria (its basename
// already checked against matches).
func (c *criteria) tidy(st *syscall.Stat_t) bool {
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR && !c.rmdirs {
		return false
	}
	if c.age < 0 && c.size < 0 {
		return true
	}
	if c.age >= 0 {
		var t syscall.Timespec
		switch c.timeKind {
		case "mtime":
			t = st.Mtim
		case "ctime":
			t = st.Ctim
		default:
			t = st.Atim
		}
		if c.now-t.Sec >= c.age {
			return true
		}
	}
	return c.size >= 0 && st.Size >= c.size
}

func (c *criteria) nameMatches(name string) bool {
	if len(c.matches) == 0 {
		return true
	}
	for _, m := range c.matches {
		if ok, _ := matchGlob(m, name); ok {
			return true
		}
	}
	return false
}

// matchGlob is Ruby's File.fnmatch with FNM_DOTMATCH | FNM_PATHNAME on a
// basename: `*`, `?`, `[...]` (also `[!...]`), a leading dot matched like
// any character.
func matchGlob(pattern, name string) (bool, error) {
	return path.Match(strings.ReplaceAll(pattern, "[!", "[^"), name)
}

const openDir = syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// errChanged is an entry replaced between its stat and its opening.
var errChanged = errors.New("changed while being read (replaced by another file or a link); not tidying it")

// walker visits the tree through directory descriptors, never following a
// link.
type walker struct {
	ctx     context.Context
	c       *criteria
	root    string
	entries int // entries seen (max_files)
	max     int // refuse past this many entries (0: no limit)
	// visit is called for each candidate judged; dir entries after their
	// contents. emptied reports, for a directory, whether everything in
	// it was tidied. It returns whether the entry is (or was) tidied.
	visit func(dirfd int, name, p string, st *syscall.Stat_t, emptied bool) (bool, error)
}

// errTooMany is max_files exceeded.
type errTooMany struct {
	root      string
	seen, max int
}

func (e *errTooMany) Error() string {
	return fmt.Sprintf("The directory '%s' contains at least %d entries, which exceeds the limit of %d specified by the max_files parameter for this resource. The limit may be increased, but be aware that large number of file resources can result in excessive resource consumption and degraded performance. Consider using an alternate method to manage large directory trees", e.root, e.seen, e.max)
}

// run walks from the root: the root is judged through its parent's
// descriptor like any entry.
func (w *walker) run() error {
	parent, base := path.Split(w.root)
	if base == "" { // the root directory itself: never a candidate
		parent, base = "/", "."
	}
	pfd, err := syscall.Open(parent, openDir&^syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("opening %s: %w", parent, err)
	}
	defer syscall.Close(pfd)
	var st syscall.Stat_t
	if err := fstatat(pfd, base, &st, atSymlinkNofollow); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil // nothing to tidy
		}
		return fmt.Errorf("could not stat %s: %w", w.root, err)
	}
	_, err = w.entry(pfd, base, w.root, &st, 0)
	return err
}

// entry judges one entry at depth d, descending first when it is a
// directory within the depth.
func (w *walker) entry(dirfd int, name, p string, st *syscall.Stat_t, d int64) (bool, error) {
	if err := w.ctx.Err(); err != nil {
		return false, err
	}
	emptied := true
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR && (w.c.depth < 0 || d < w.c.depth) {
		var err error
		emptied, err = w.dir(dirfd, name, p, st, d)
		if err != nil {
			return false, err
		}
	}
	// The root is a candidate whatever its name; entries below it only
	// when their basename matches.
	if d > 0 && !w.c.nameMatches(name) {
		return false, nil
	}
	return w.visit(dirfd, name, p, st, emptied)
}

// dir walks a directory's entries; it reports whether every one of them
// was tidied.
func (w *walker) dir(dirfd int, name, p string, st *syscall.Stat_t, d int64) (bool, error) {
	fd, err := syscall.Openat(dirfd, name, openDir, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			return false, fmt.Errorf("%s: %w", p, errChanged)
		}
		return false, fmt.Errorf("opening %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var got syscall.Stat_t
	if err := syscall.Fstat(fd, &got); err != nil {
		return false, fmt.Errorf("could not stat %s: %w", p, err)
	}
	if got.Dev != st.Dev || got.Ino != st.Ino {
		return false, fmt.Errorf("%s: %w", p, errChanged)
	}
	all := true
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			w.entries++
			if w.max > 0 && w.entries > w.max {
				return false, &errTooMany{root: w.root, seen: w.entries, max: w.max}
			}
			var cst syscall.Stat_t
			if err := fstatat(fd, n, &cst, atSymlinkNofollow); err != nil {
				if errors.Is(err, syscall.ENOENT) {
					continue // gone meanwhile
				}
				return false, fmt.Errorf("could not stat %s: %w", p+"/"+n, err)
			}
			ok, err := w.entry(fd, n, strings.TrimSuffix(p, "/")+"/"+n, &cst, d+1)
			if err != nil {
				return false, err
			}
			all = all && ok
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return false, fmt.Errorf("reading %s: %w", p, err)
		}
		if len(names) == 0 {
			break
		}
	}
	return all, nil
}

// unlinkat removes name in dirfd (a directory with AT_REMOVEDIR).
func unlinkat(dirfd int, name string, dir bool) error {
	flags := 0
	if dir {
		flags = 0x200 // AT_REMOVEDIR
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags))
	if e != 0 {
		return e
	}
	return nil
}

func nowSeconds() int64 { return time.Now().Unix() }

// fstatat is fstatat(2) with AT_SYMLINK_NOFOLLOW as the flags given.
func fstatat(dirfd int, name string, st *syscall.Stat_t, flags int) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

const atSymlinkNofollow = 0x100 // AT_SYMLINK_NOFOLLOW
