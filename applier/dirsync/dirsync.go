// Package dirsync makes changes to directory entries durable: the fsync
// of a directory after a rename, a link, an unlink or a mkdir in it, at
// once or grouped (see Syncer). It is shared by every package that
// changes directory entries (atomicfile, filebucket, the types) and the
// receiver that flushes it; it imports nothing of the engine.
package dirsync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// Syncer makes changes to directory entries durable. A new or replaced
// file's data is fsynced before it is renamed into place, so a crash
// leaves the old file or the new one; but the rename itself (or a link,
// an unlink, a mkdir) is durable only once its directory is fsynced,
// which costs a journal commit of its own. Whoever changes a directory's
// entries calls Mark(dir).
//
// In immediate mode (a nil *Syncer, or one made with Deferred false)
// Mark fsyncs the directory at once and returns the error: the change is
// durable before it is reported. In deferred mode Mark only records the
// directory, and Flush fsyncs every directory recorded since the last
// Flush once (group commit): many changes in one directory cost one
// fsync. The owner of a deferred Syncer must call Flush before it tells
// anyone the changes are durable, and before the process exits; with
// MaxDelay set, a Flush also runs by itself that long after the first
// mark that is still pending.
//
// A Syncer is safe for concurrent use.
type Syncer struct {
	opts Options

	mu sync.Mutex
	// dirs are the pending directories in the order of their first
	// mark; pending indexes them.
	dirs    []string
	pending map[string]struct{}
	marks   int
	timer   *time.Timer

	// flushing is held for a whole Flush, so that a Flush that returns
	// has also waited for one already running (in the timer's goroutine).
	flushing sync.Mutex
}

// Options configure a Syncer.
type Options struct {
	// Deferred records marks until Flush instead of fsyncing at once.
	Deferred bool
	// MaxDelay, when positive in deferred mode, bounds how long a mark
	// stays pending: that long after the oldest pending mark a Flush runs
	// in its own goroutine.
	MaxDelay time.Duration
	// Report, when set, is called after every round of fsyncs: after each
	// Mark in immediate mode, after each Flush that had anything to do in
	// deferred mode. dirs is how many directories were fsynced, changes
	// how many marks the round covered; err is nil or names each directory
	// that failed. Report may be called from the timer's goroutine.
	Report func(dirs, changes int, err error)
}

// New returns a Syncer with opts.
func New(opts Options) *Syncer {
	return &Syncer{opts: opts, pending: map[string]struct{}{}}
}

// Deferred reports whether marks wait for Flush; false for nil.
func (d *Syncer) Deferred() bool { return d != nil && d.opts.Deferred }

// Mark records that dir's entries changed. In immediate mode (or on a
// nil Syncer) it fsyncs dir now and returns the error, which names dir;
// in deferred mode it returns nil and the fsync happens at the next Flush.
func (d *Syncer) Mark(dir string) error {
	if !d.Deferred() {
		err := fsyncDir(dir)
		if d != nil && d.opts.Report != nil {
			n := 1
			if err != nil {
				n = 0
			}
			d.opts.Report(n, 1, err)
		}
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.marks++
	if _, ok := d.pending[dir]; ok {
		return nil
	}
	d.pending[dir] = struct{}{}
	d.dirs = append(d.dirs, dir)
	if len(d.dirs) == 1 && d.opts.MaxDelay > 0 {
		if d.timer == nil {
			d.timer = time.AfterFunc(d.opts.MaxDelay, d.flushLate)
		} else {
			d.timer.Reset(d.opts.MaxDelay)
		}
	}
	return nil
}

// flushLate is the timer's Flush; Report hears of its outcome.
func (d *Syncer) flushLate() { d.Flush(context.Background()) }

// Pending is the number of marks (changes, counting each, not only
// distinct directories) made since the last Flush; 0 in immediate mode.
func (d *Syncer) Pending() int {
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.marks
}

// Flush fsyncs every pending directory once, in the order they were first
// marked, and clears the set. It returns how many were fsynced and an
// error joining one error per directory that failed ("fsync directory
// /x: ..."); a failed directory is not retried. When ctx ends, the
// directories not yet fsynced stay pending and ctx's error is returned
// with the others. Flush does nothing in immediate mode.
func (d *Syncer) Flush(ctx context.Context) (int, error) {
	if d == nil {
		return 0, nil
	}
	d.flushing.Lock()
	defer d.flushing.Unlock()
	d.mu.Lock()
	dirs, changes := d.dirs, d.marks
	d.dirs, d.marks = nil, 0
	clear(d.pending)
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
	if len(dirs) == 0 {
		return 0, nil
	}
	var errs []error
	n := 0
	for i, dir := range dirs {
		if err := ctx.Err(); err != nil {
			for _, rest := range dirs[i:] {
				d.Mark(rest)
			}
			changes -= len(dirs) - i
			errs = append(errs, fmt.Errorf("fsync of %d directories not done: %w", len(dirs)-i, err))
			break
		}
		if err := fsyncDir(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	err := errors.Join(errs...)
	if d.opts.Report != nil {
		d.opts.Report(n, changes, err)
	}
	return n, err
}

// fsyncDir fsyncs one directory. A file system that cannot fsync a
// directory (EINVAL) has nothing to make durable: that is no error.
// syscall.Open rather than os.Open: a directory needs no poller
// registration.
func fsyncDir(dir string) error {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	for {
		err = syscall.Fsync(fd)
		if err != syscall.EINTR {
			break
		}
	}
	syscall.Close(fd)
	if err != nil && err != syscall.EINVAL {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
