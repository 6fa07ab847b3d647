package dirsync_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/dirsync"
)

// dirs makes n directories under a temp dir.
func dirs(t *testing.T, n int) []string {
	t.Helper()
	root := t.TempDir()
	out := make([]string, n)
	for i := range out {
		out[i] = filepath.Join(root, string(rune('a'+i)))
		require.NoError(t, os.Mkdir(out[i], 0o755))
	}
	return out
}

// reports collects what Report hears.
type reports struct {
	mu      sync.Mutex
	n       []int
	changes int
	errs    []error
}

func (r *reports) report(n, changes int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n = append(r.n, n)
	r.changes += changes
	r.errs = append(r.errs, err)
}

func (r *reports) get() ([]int, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.n...), append([]error(nil), r.errs...)
}

func TestDirSyncDeferredDedupsAndClears(t *testing.T) {
	d := dirs(t, 2)
	var rep reports
	ds := dirsync.New(dirsync.Options{Deferred: true, Report: rep.report})
	require.True(t, ds.Deferred())
	for _, dir := range []string{d[0], d[1], d[0], d[0]} {
		require.NoError(t, ds.Mark(dir))
	}
	assert.Equal(t, 4, ds.Pending(), "every mark counts")
	n, err := ds.Flush(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, n, "each directory once")
	assert.Equal(t, 0, ds.Pending())

	n, err = ds.Flush(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, n, "nothing left after a flush")
	ns, _ := rep.get()
	assert.Equal(t, []int{2}, ns, "an empty flush reports nothing")
	assert.Equal(t, 4, rep.changes)
}

func TestDirSyncFlushNamesEachFailedDirectory(t *testing.T) {
	d := dirs(t, 4)
	ds := dirsync.New(dirsync.Options{Deferred: true})
	// Marked in the order c, a, d, b; a and c are then removed.
	for _, i := range []int{2, 0, 3, 1} {
		require.NoError(t, ds.Mark(d[i]))
	}
	require.NoError(t, os.Remove(d[0]))
	require.NoError(t, os.Remove(d[2]))
	n, err := ds.Flush(context.Background())
	require.Error(t, err)
	assert.Equal(t, 2, n, "the directories still there are fsynced")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	msg := err.Error()
	assert.Equal(t, []string{
		"fsync directory " + d[2] + ": no such file or directory",
		"fsync directory " + d[0] + ": no such file or directory",
	}, strings.Split(msg, "\n"), "one line per failure, in the order of marking")
	assert.Equal(t, 0, ds.Pending(), "a failed directory is not retried")
}

func TestDirSyncModes(t *testing.T) {
	cases := []struct {
		name string
		ds   func(*reports) *dirsync.Syncer
		// deferred: Mark of a missing directory succeeds and Flush fails.
		deferred bool
	}{
		{"nil is immediate", func(*reports) *dirsync.Syncer { return nil }, false},
		{"immediate", func(r *reports) *dirsync.Syncer {
			return dirsync.New(dirsync.Options{Report: r.report})
		}, false},
		{"deferred", func(r *reports) *dirsync.Syncer {
			return dirsync.New(dirsync.Options{Deferred: true, Report: r.report})
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := dirs(t, 1)
			missing := filepath.Join(d[0], "gone")
			var rep reports
			ds := c.ds(&rep)
			assert.Equal(t, c.deferred, ds.Deferred())

			require.NoError(t, ds.Mark(d[0]))
			err := ds.Mark(missing)
			n, ferr := ds.Flush(context.Background())
			if c.deferred {
				assert.NoError(t, err, "a deferred mark does not touch the disk")
				assert.Equal(t, 1, n)
				require.Error(t, ferr)
				assert.Contains(t, ferr.Error(), "fsync directory "+missing+": ")
			} else {
				require.Error(t, err, "an immediate mark fsyncs at once")
				assert.Contains(t, err.Error(), "fsync directory "+missing+": ")
				assert.Equal(t, 0, n, "nothing is pending in immediate mode")
				assert.NoError(t, ferr)
				assert.Equal(t, 0, ds.Pending())
			}
			ns, errs := rep.get()
			switch {
			case ds == nil:
				assert.Empty(t, ns)
			case c.deferred:
				assert.Equal(t, []int{1}, ns, "one report per flush")
				assert.Error(t, errs[0])
			default:
				assert.Equal(t, []int{1, 0}, ns, "one report per mark")
				assert.NoError(t, errs[0])
				assert.Error(t, errs[1])
			}
		})
	}
}

func TestDirSyncFlushCancelledKeepsPending(t *testing.T) {
	d := dirs(t, 3)
	var rep reports
	ds := dirsync.New(dirsync.Options{Deferred: true, Report: rep.report})
	for _, dir := range d {
		require.NoError(t, ds.Mark(dir))
	}
	require.NoError(t, ds.Mark(d[0]))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err := ds.Flush(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, n)
	assert.Equal(t, 3, ds.Pending(), "what was not fsynced stays pending")
	n, err = ds.Flush(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	ns, errs := rep.get()
	assert.Equal(t, []int{0, 3}, ns)
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.Equal(t, 4, rep.changes, "the cancelled flush's marks are counted once")
}

func TestDirSyncMaxDelayFlushesByItself(t *testing.T) {
	d := dirs(t, 2)
	var rep reports
	ds := dirsync.New(dirsync.Options{Deferred: true, MaxDelay: 20 * time.Millisecond, Report: rep.report})
	for round := 0; round < 2; round++ {
		require.NoError(t, ds.Mark(d[0]))
		require.NoError(t, ds.Mark(d[1]))
		require.Eventually(t, func() bool { return ds.Pending() == 0 }, 5*time.Second, 5*time.Millisecond,
			"round %d: the timer flushes", round)
		require.Eventually(t, func() bool { ns, _ := rep.get(); return len(ns) == round+1 }, 5*time.Second, 5*time.Millisecond)
		ns, errs := rep.get()
		assert.Equal(t, 2, ns[round])
		assert.NoError(t, errs[round])
	}
}

func TestDirSyncConcurrent(t *testing.T) {
	d := dirs(t, 4)
	var rep reports
	ds := dirsync.New(dirsync.Options{Deferred: true, MaxDelay: time.Millisecond, Report: rep.report})
	var wg sync.WaitGroup
	const workers, marks = 8, 50
	var mu sync.Mutex
	flushed := 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range marks {
				assert.NoError(t, ds.Mark(d[(w+i)%len(d)]))
				if i%10 == 9 {
					n, err := ds.Flush(context.Background())
					assert.NoError(t, err)
					mu.Lock()
					flushed += n
					mu.Unlock()
				}
				_ = ds.Pending()
			}
		}()
	}
	wg.Wait()
	n, err := ds.Flush(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, ds.Pending())
	// Every report, from Flush calls and the timer's, adds up.
	ns, errs := rep.get()
	total := 0
	for i := range ns {
		total += ns[i]
		assert.NoError(t, errs[i])
	}
	assert.GreaterOrEqual(t, total, flushed+n)
	assert.GreaterOrEqual(t, total, len(d))
	assert.LessOrEqual(t, total, workers*marks)
	rep.mu.Lock()
	defer rep.mu.Unlock()
	assert.Equal(t, workers*marks, rep.changes, "each mark is covered by exactly one flush")
}
