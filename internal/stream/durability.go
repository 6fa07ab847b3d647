package stream

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pippet/pippet/applier/dirsync"
)

// Durability. A file's data is fsynced before it is renamed into place,
// so an answer always means the change is whole (old or new file after a
// crash, never a part). Making the rename itself durable takes an fsync
// of the directory, a journal commit of its own that costs as much as the
// rest of a small file's creation. By default the receiver answers first
// and fsyncs each changed directory once per group of changes (an
// dirsync.Syncer in deferred mode): when no next line is waiting (the
// controller waits for answers, or the stream paused), once flushMarks
// changes are pending, at the latest flushDelay after the oldest pending
// change, and before exit. --sync is the immediate mode: each change's
// directory is fsynced before its answer.
const (
	// flushMarks is how many changes may wait for their directories'
	// fsync while the stream goes on.
	flushMarks = 64
	// flushDelay bounds how long a change waits for it.
	flushDelay = 100 * time.Millisecond
)

// NewDirSync returns the process's dirsync.Syncer: deferred unless immediate is
// asked for, logging each round of fsyncs at debug level and, in deferred
// mode, a failure at err level (in immediate mode the failure is the
// resource's and is answered and logged with it).
func NewDirSync(log *slog.Logger, deferred bool) *dirsync.Syncer {
	report := func(dirs, changes int, err error) {
		if dirs > 0 {
			log.Debug(fmt.Sprintf("fsynced %d %s for %d %s", dirs, plural(dirs, "directory", "directories"), changes, plural(changes, "change", "changes")))
		}
		if err != nil && deferred {
			log.Error(fmt.Sprintf("could not make changes durable: %v; changes answered earlier may not survive a power loss", err))
		}
	}
	return dirsync.New(dirsync.Options{Deferred: deferred, MaxDelay: flushDelay, Report: report})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// flushDirs fsyncs the pending directories when idle (no next line is
// waiting) or when flushMarks changes are pending. The outcome is logged
// by the dirsync.Syncer's report; the loop goes on either way.
func flushDirs(ctx context.Context, dirs *dirsync.Syncer, idle bool) {
	if n := dirs.Pending(); n > 0 && (idle || n >= flushMarks) {
		dirs.Flush(ctx)
	}
}
