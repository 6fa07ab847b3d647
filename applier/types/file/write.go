package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/cmdline"
)

// writeSpec says how new content is installed at path.
type writeSpec struct {
	path string
	// dir is where the temp file is made (the target's directory, or staging_location).
	dir  string
	mode uint32
	// uid, gid: -1 leaves the creating process's.
	uid, gid int
	// validate is the validate_cmd with placeholder; "" for none.
	validate, placeholder string
	// mtime, when set, is given to the new file before it is renamed.
	mtime time.Time
	// dirs hears of the changed directory; nil fsyncs it at once.
	dirs *applier.DirSync
}

// writeAtomic installs the bytes fill writes at ws.path: they go to an
// unnamed (O_TMPFILE) or hidden temp file in ws.dir that gets its owner
// and mode on the open descriptor, is fsynced, optionally validated, named
// and renamed over the target (or, when no target exists, linked as the
// target itself: one step, nothing to rename). On any error the target is
// untouched and the temp file is gone; a process killed mid-write leaves
// at most an unnamed inode the kernel reclaims. The data is durable before
// the rename (or link), so a crash leaves the old file or the new one,
// never a part; the new name itself becomes durable when the directory is
// fsynced, which ws.dirs decides (nil: at once, before writeAtomic
// returns; deferred: at its owner's next Flush).
func writeAtomic(ctx context.Context, ws writeSpec, fill func(io.Writer) error) (err error) {
	f, named, err := openTemp(ws.dir, filepath.Base(ws.path))
	if err != nil {
		return fmt.Errorf("create temp file in %s: %w", ws.dir, err)
	}
	tmp := named
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil && tmp != "" {
			os.Remove(tmp)
		}
	}()
	if ws.uid >= 0 || ws.gid >= 0 {
		if err := f.Chown(ws.uid, ws.gid); err != nil {
			return fmt.Errorf("chown temp file: %w", err)
		}
	}
	// After chown, which clears set-id bits.
	if err := f.Chmod(os.FileMode(ws.mode&0o777) | setidBits(ws.mode)); err != nil {
		return fmt.Errorf("chmod temp file: %w", err)
	}
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync temp file: %w", err)
	}
	if tmp == "" && ws.validate == "" && ws.mtime.IsZero() {
		// Nothing left to do to the file before it is in place: when
		// the target does not exist, the unnamed file is linked as the
		// target itself, no temp name nor rename needed (a file that
		// appeared meanwhile, or a symlink, makes it EEXIST: renamed over).
		err := linkTemp(f, ws.path)
		if err == nil {
			cerr := f.Close()
			f = nil
			if cerr != nil {
				return fmt.Errorf("close %s: %w", ws.path, cerr)
			}
			return ws.dirs.Mark(filepath.Dir(ws.path))
		}
		if !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("link temp file to %s: %w", ws.path, err)
		}
	}
	if tmp == "" {
		if tmp, err = nameTemp(f, ws.dir, filepath.Base(ws.path)); err != nil {
			return fmt.Errorf("link temp file into %s: %w", ws.dir, err)
		}
	}
	if err := f.Close(); err != nil {
		f = nil
		return fmt.Errorf("close temp file: %w", err)
	}
	f = nil
	if ws.validate != "" {
		if err := runValidate(ctx, ws.validate, ws.placeholder, tmp); err != nil {
			return err
		}
	}
	if !ws.mtime.IsZero() {
		if err := os.Chtimes(tmp, ws.mtime, ws.mtime); err != nil {
			return fmt.Errorf("set mtime: %w", err)
		}
	}
	if err := os.Rename(tmp, ws.path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	tmp = ""
	return ws.dirs.Mark(filepath.Dir(ws.path))
}

func setidBits(m uint32) os.FileMode {
	var fm os.FileMode
	if m&0o4000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// dirsOf is env's DirSync; nil (immediate) without an env.
func dirsOf(env *applier.Env) *applier.DirSync {
	if env == nil {
		return nil
	}
	return env.Dirs
}

// runValidate runs the validate command with the placeholder replaced by
// the temp file's path, by the rule of package cmdline (through /bin/sh
// only when the string needs a shell); a non-zero exit is an error
// carrying its output.
func runValidate(ctx context.Context, command, placeholder, path string) error {
	if placeholder == "" {
		placeholder = "%"
	}
	args := cmdline.Argv(strings.ReplaceAll(command, placeholder, path))
	if len(args) == 0 {
		return errors.New("validate_cmd is empty")
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		if msg != "" {
			return fmt.Errorf("validate_cmd %s failed: %w: %s", command, err, msg)
		}
		return fmt.Errorf("validate_cmd %s failed: %w", command, err)
	}
	return nil
}
