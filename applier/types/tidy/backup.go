package tidy

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/filebucket"
)

// mungeBackup is the file type's reading of backup, which Puppet's tidy
// hands to the file resources that remove its files: false (or "") for
// none, true for the suffix .puppet-bak, any other value starting with
// "." a suffix, any other name the local filebucket.
func mungeBackup(v any) (any, error) {
	switch s, _ := v.(string); s {
	case "false", "":
		return "false", nil
	case "true":
		return ".puppet-bak", nil
	default:
		return s, nil
	}
}

// backup keeps the content of the regular file name (in the directory
// dirfd, at path) before it is removed, as the backup attribute says. The
// file is opened relative to its directory without following a link and
// must be the one the walk examined (device and inode): otherwise nothing
// is kept and the file is not removed. Only regular files are backed up;
// a directory, link or other entry has no content of its own.
func (p *provider) backup(ctx context.Context, dirfd int, name, path string, st *syscall.Stat_t) error {
	how := p.r.String("backup")
	if how == "false" || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil
	}
	fd, err := syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("could not back up %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var now syscall.Stat_t
	if err := syscall.Fstat(fd, &now); err != nil {
		return fmt.Errorf("could not back up %s: %w", path, err)
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		return fmt.Errorf("could not back up %s: it was replaced while being tidied", path)
	}
	if how[0] == '.' {
		opts := atomicfile.Options{Mode: uint32(now.Mode) & 0o7777, UID: -1, GID: -1, Dirs: p.env.Dirs}
		if int(now.Uid) != os.Geteuid() || int(now.Gid) != os.Getegid() {
			opts.UID, opts.GID = int(now.Uid), int(now.Gid)
		}
		err := atomicfile.WriteFunc(ctx, path+how, opts, func(w io.Writer) error {
			_, err := io.Copy(w, f)
			return err
		})
		if err != nil {
			return fmt.Errorf("could not back up %s to %s: %w", path, path+how, err)
		}
		return nil
	}
	b := &filebucket.Bucket{Dir: filebucket.Dir(p.env.Options.StateDir)}
	if _, err := b.BackupFrom(ctx, f, path, how); err != nil {
		return fmt.Errorf("could not back up %s to filebucket %s: %w", path, how, err)
	}
	return nil
}
