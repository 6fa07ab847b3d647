package file

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/filebucket"
)

// backup keeps the current content of path before it is replaced or
// removed, as the backup attribute says. Only regular files are backed up
// (a directory or a link has no content of its own).
func (p *posix) backup(ctx context.Context) error {
	if p.kind != "file" {
		return nil
	}
	return backupFile(ctx, p.env, p.r.String("backup"), p.path, p.fi, p.follow())
}

// backupFile copies the regular file at path beside it (how starts with
// ".": the suffix) or into the local filebucket (any other name); "false"
// or "" does nothing. A failed backup stops the change.
//
// The file is opened without following a symlink (unless follow) and must
// be the one fi describes (device and inode): a file swapped since it was
// examined is not backed up, and the change fails.
func backupFile(ctx context.Context, env *applier.Env, how, path string, fi fs.FileInfo, follow bool) error {
	if how == "" || how == "false" {
		return nil
	}
	src, err := openCheckedLimit(ctx, path, fi, follow, -1)
	if err != nil {
		return fmt.Errorf("could not back up %s: %w", path, err)
	}
	defer src.Close()
	if strings.HasPrefix(how, ".") {
		ws := writeSpec{path: path + how, dir: filepath.Dir(path), mode: statMode(fi), uid: -1, gid: -1}
		if uid, gid := statOwner(fi); uid != os.Geteuid() || gid != os.Getegid() {
			ws.uid, ws.gid = uid, gid
		}
		err = writeAtomic(ctx, ws, func(w io.Writer) error {
			_, err := io.Copy(w, src)
			return err
		})
		if err != nil {
			return fmt.Errorf("could not back up %s to %s: %w", path, path+how, err)
		}
		return nil
	}
	dir := ""
	if env != nil {
		dir = env.Options.StateDir
	}
	b := &filebucket.Bucket{Dir: filebucket.Dir(dir)}
	if _, err := b.BackupFrom(ctx, src, path, how); err != nil {
		return fmt.Errorf("could not back up %s to filebucket %s: %w", path, how, err)
	}
	return nil
}
