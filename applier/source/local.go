package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Local serves absolute paths and file:// URIs from the local file system.
// Its reads are bounded (MaxSize) and end with the request's context, and
// only regular files are read (see OpenFile).
type Local struct {
	// MaxSize bounds the bytes read of one file (0: DefaultMaxSize).
	MaxSize int64
}

func (l Local) maxSize() int64 {
	if l.MaxSize > 0 {
		return l.MaxSize
	}
	return DefaultMaxSize
}

func localPath(u *url.URL) string {
	p := u.Path
	if p == "" {
		p = "/"
	}
	return p
}

// Stat describes the local entry (lstat unless q.FollowLinks), computing
// the asked digest for regular files.
func (l Local) Stat(ctx context.Context, u *url.URL, q Query) (*Metadata, error) {
	p := localPath(u)
	m, err := statLocal(p, q.FollowLinks)
	if err != nil {
		return nil, err
	}
	if m.Type == TypeFile && IsDigest(q.Checksum) {
		if m.Size > l.maxSize() {
			return nil, fmt.Errorf("source %s is %d bytes: %w (%d bytes)", p, m.Size, ErrTooLarge, l.maxSize())
		}
		sum, err := l.sum(ctx, q.Checksum, p, q.FollowLinks)
		if err != nil {
			return nil, fmt.Errorf("checksum source %s: %w", p, err)
		}
		m.ChecksumType, m.Checksum = q.Checksum, sum
	}
	return m, nil
}

func statLocal(p string, follow bool) (*Metadata, error) {
	var fi fs.FileInfo
	var err error
	if follow {
		fi, err = os.Stat(p)
	} else {
		fi, err = os.Lstat(p)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%s: %w", p, ErrNotFound)
		}
		return nil, err
	}
	m := &Metadata{Size: fi.Size(), Mode: fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), ModTime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		m.UID, m.GID, m.HasOwner = int(st.Uid), int(st.Gid), true
		m.CTime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	switch {
	case fi.Mode().IsRegular():
		m.Type = TypeFile
	case fi.IsDir():
		m.Type = TypeDirectory
	case fi.Mode()&fs.ModeSymlink != 0:
		m.Type = TypeLink
		if m.Target, err = os.Readlink(p); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s is neither a file, a directory nor a link", p)
	}
	return m, nil
}

// sum is the digest of the regular file at p, read through OpenFile.
func (l Local) sum(ctx context.Context, kind, p string, follow bool) (string, error) {
	f, _, err := OpenFile(p, follow)
	if err != nil {
		return "", err
	}
	r := Reader(ctx, f, l.maxSize())
	defer r.Close()
	return SumReader(kind, r)
}

// Open opens the local file (following links), a regular file only; the
// reader ends with ctx and stops at MaxSize.
func (l Local) Open(ctx context.Context, u *url.URL) (io.ReadCloser, error) {
	f, st, err := OpenFile(localPath(u), true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", localPath(u), ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if st.Size > l.maxSize() {
		f.Close()
		return nil, fmt.Errorf("source %s is %d bytes: %w (%d bytes)", localPath(u), st.Size, ErrTooLarge, l.maxSize())
	}
	return Reader(ctx, f, l.maxSize()), nil
}

// maxWalkDepth stops a walk that follows links round a loop.
const maxWalkDepth = 128

// Walk lists the tree at u in lexical order, root first.
func (l Local) Walk(ctx context.Context, u *url.URL, q Query, opts WalkOptions, fn WalkFunc) error {
	root := localPath(u)
	rootMeta, err := l.Stat(ctx, u, Query{Checksum: q.Checksum, FollowLinks: true})
	if err != nil {
		return err
	}
	if err := fn(".", rootMeta); err != nil {
		return err
	}
	if rootMeta.Type != TypeDirectory {
		return nil
	}
	count := 0
	var walk func(dir, rel string, depth int) error
	walk = func(dir, rel string, depth int) error {
		if opts.Limit > 0 && depth > opts.Limit {
			return nil
		}
		if depth > maxWalkDepth {
			return fmt.Errorf("%s: more than %d levels deep (a link loop?)", dir, maxWalkDepth)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("read source directory %s: %w", dir, err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			if ignored(e.Name(), opts.Ignore) {
				continue
			}
			count++
			if opts.MaxFiles > 0 && count > opts.MaxFiles {
				return fmt.Errorf("%s holds more than %d entries: %w", root, opts.MaxFiles, ErrTooManyFiles)
			}
			p := filepath.Join(dir, e.Name())
			r := path.Join(rel, e.Name())
			m, err := l.Stat(ctx, &url.URL{Scheme: "file", Path: p}, q)
			if err != nil {
				return err
			}
			if err := fn(r, m); err != nil {
				return err
			}
			if m.Type == TypeDirectory {
				if err := walk(p, r, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root, "", 1)
}

// Ignored reports whether name matches one of the glob patterns.
func Ignored(name string, patterns []string) bool { return ignored(name, patterns) }

func ignored(name string, patterns []string) bool {
	for _, p := range patterns {
		if strings.Contains(p, "/") {
			continue // Puppet ignores patterns that would descend
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
