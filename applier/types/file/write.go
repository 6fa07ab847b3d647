package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
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
	// exists: the target is known to be there, so the new file goes
	// straight to a temp name and a rename.
	exists bool
}

// writeAtomic installs the bytes fill writes at ws.path through package
// atomicfile (temp file with its owner and mode, fsync, validate_cmd,
// link or rename; see there).
func writeAtomic(ctx context.Context, ws writeSpec, fill func(io.Writer) error) error {
	o := atomicfile.Options{Mode: ws.mode, UID: ws.uid, GID: ws.gid, Exists: ws.exists,
		MTime: ws.mtime, Dirs: ws.dirs}
	if ws.dir != filepath.Dir(ws.path) {
		o.TempDir = ws.dir
	}
	if ws.validate != "" {
		o.Validate = func(ctx context.Context, tmp string) error {
			return runValidate(ctx, ws.validate, ws.placeholder, tmp)
		}
	}
	return atomicfile.WriteFunc(ctx, ws.path, o, fill)
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
