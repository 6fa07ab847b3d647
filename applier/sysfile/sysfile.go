// Package sysfile keeps parsed views of the system's databases
// (/etc/passwd, /etc/shadow, /etc/group, the dpkg status file, crontabs,
// key files) while each file is unchanged.
//
// A provider reads such a file once, parses it, and keeps the result in a
// Cache; later requests reuse it while the file's identity (device, inode,
// size, modification and change times, as lstat(2) reports them after a
// stat) is the same, so an unchanged resource costs one stat, and an edit
// by any other program, which changes the ctime at least, is always seen.
// A change of our own drops the entry (Drop), since a tool such as
// usermod may rewrite a file within the same clock tick.
//
// The parse function gets the file's bytes and returns an immutable value:
// callers share it and must not modify it.
package sysfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// Identity is what tells one version of a file from another.
type Identity struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds
}

// Stat returns path's identity (following symlinks, as readers do).
func Stat(path string) (Identity, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return Identity{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return Identity{
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
	}, nil
}

type entry[T any] struct {
	id  Identity
	val T
}

// Cache holds one parsed value per path. The zero value is ready to use
// and safe for concurrent use.
type Cache[T any] struct {
	mu sync.Mutex
	m  map[string]*entry[T]
	// MaxSize bounds the files cached, in bytes (0: 64 MiB): a larger file
	// is parsed on every Load and never kept.
	MaxSize int64
}

// Load returns path's parsed value: the cached one while the file's
// identity is unchanged, else parse's result on the file's current bytes.
// A missing file is an error satisfying errors.Is(err, fs.ErrNotExist).
func (c *Cache[T]) Load(path string, parse func(data []byte) (T, error)) (T, error) {
	var zero T
	id, err := Stat(path)
	if err != nil {
		c.Drop(path)
		return zero, err
	}
	c.mu.Lock()
	if e, ok := c.m[path]; ok && e.id == id {
		c.mu.Unlock()
		return e.val, nil
	}
	c.mu.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("reading %s: %w", path, err)
	}
	// The file may have changed between the stat and the read: keep the
	// value only if the identity still holds after reading.
	after, err := Stat(path)
	if err != nil {
		return zero, err
	}
	val, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("parsing %s: %w", path, err)
	}
	max := c.MaxSize
	if max == 0 {
		max = 64 << 20
	}
	if after == id && int64(len(data)) == id.Size && id.Size <= max {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*entry[T]{}
		}
		c.m[path] = &entry[T]{id: id, val: val}
		c.mu.Unlock()
	}
	return val, nil
}

// Drop forgets path's value: call it after changing the file.
func (c *Cache[T]) Drop(path string) {
	c.mu.Lock()
	delete(c.m, path)
	c.mu.Unlock()
}

// DropAll forgets every value.
func (c *Cache[T]) DropAll() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// IsNotExist reports whether err says the file is missing.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
