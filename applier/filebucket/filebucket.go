// Package filebucket is pippet's local content-addressed store of the
// content it replaces or removes: the file type's backup attribute naming
// a bucket, and the parsed files (host, mount) before each rewrite, put
// the old content here; `receiver filebucket` lists, prints and restores
// it.
//
// Each content is stored once under <dir>/<aa>/<sha256>/contents, and
// every backup of it appends one line (original path, time, checksum,
// bucket name) to the entry's "paths" file. Contents are written through
// package atomicfile and their directories fsynced before Backup returns,
// so a change is never kept while the backup it depends on is lost.
package filebucket

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/dirsync"
)

// Bucket is a local content-addressed filebucket rooted at Dir.
type Bucket struct {
	Dir string
}

// Dir is the bucket's directory under a state directory ("":
// applier.DefaultStateDir()).
func Dir(stateDir string) string {
	if stateDir == "" {
		stateDir = applier.DefaultStateDir()
	}
	return filepath.Join(stateDir, "bucket")
}

// Entry describes one backup.
type Entry struct {
	Checksum string    `json:"checksum"`
	Path     string    `json:"path"`
	Time     time.Time `json:"time"`
	// Bucket is the name the resource's backup attribute gave.
	Bucket string `json:"bucket,omitempty"`
}

func (b *Bucket) entryDir(sum string) string { return filepath.Join(b.Dir, sum[:2], sum) }

// Backup stores the content of the regular file at path and records it;
// it returns the content's sha256. The backup is durable when Backup
// returns (its directories are fsynced at once whatever the process's
// dirsync.Syncer mode), so it is never lost while the change it protects is
// kept.
func (b *Bucket) Backup(ctx context.Context, path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return b.BackupFrom(ctx, f, path, name)
}

// BackupFrom is Backup of content the caller has opened (as the file type
// does, checking that what it opened is the file it examined), recorded
// under path.
func (b *Bucket) BackupFrom(ctx context.Context, f io.Reader, path, name string) (string, error) {
	if err := os.MkdirAll(b.Dir, 0o750); err != nil {
		return "", fmt.Errorf("filebucket %s: %w", b.Dir, err)
	}
	// Stream into a temp file in the bucket while hashing, then move it
	// to its content address.
	h := sha256.New()
	var sum string
	// Named as atomicfile names temps, so a later process sweeps it away
	// if this one dies before moving it.
	incoming := filepath.Join(b.Dir, atomicfile.TempName("incoming-"+strconv.FormatInt(time.Now().UnixNano(), 36), 0))
	dirs := dirsync.New(dirsync.Options{Deferred: true})
	err := atomicfile.WriteFunc(ctx, incoming, atomicfile.Options{Mode: 0o640, UID: -1, GID: -1, Dirs: dirs},
		func(w io.Writer) error {
			if _, err := io.Copy(io.MultiWriter(w, h), f); err != nil {
				return fmt.Errorf("read %s: %w", path, err)
			}
			return nil
		})
	if err != nil {
		return "", fmt.Errorf("filebucket: %w", err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	dir := b.entryDir(sum)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		os.Remove(incoming)
		return "", fmt.Errorf("filebucket: %w", err)
	}
	if err := os.Rename(incoming, filepath.Join(dir, "contents")); err != nil {
		os.Remove(incoming)
		return "", fmt.Errorf("filebucket: %w", err)
	}
	// The entry's directory may be new, in a new <aa> directory.
	dirs.Mark(filepath.Dir(dir))
	dirs.Mark(dir)
	line, _ := json.Marshal(Entry{Checksum: sum, Path: path, Time: time.Now().UTC(), Bucket: name})
	pf, err := os.OpenFile(filepath.Join(dir, "paths"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return "", fmt.Errorf("filebucket: %w", err)
	}
	defer pf.Close()
	if _, err := pf.Write(append(line, '\n')); err != nil {
		return "", fmt.Errorf("filebucket: %w", err)
	}
	if err := pf.Sync(); err != nil {
		return "", fmt.Errorf("filebucket: %w", err)
	}
	if _, err := dirs.Flush(context.WithoutCancel(ctx)); err != nil {
		return "", fmt.Errorf("filebucket: %w", err)
	}
	return sum, nil
}

// List returns every backup, newest first.
func (b *Bucket) List() ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(b.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == b.Dir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || d.Name() != "paths" {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e Entry
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				out = append(out, e)
			}
		}
		return sc.Err()
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, err
}

// Open returns the stored content for a checksum (a unique prefix of at
// least 6 hex digits will do).
func (b *Bucket) Open(sum string) (*os.File, error) {
	full, err := b.resolve(sum)
	if err != nil {
		return nil, err
	}
	return os.Open(filepath.Join(b.entryDir(full), "contents"))
}

func (b *Bucket) resolve(sum string) (string, error) {
	sum = strings.ToLower(strings.TrimPrefix(sum, "{sha256}"))
	if len(sum) < 6 {
		return "", fmt.Errorf("checksum %q is too short", sum)
	}
	if _, err := hex.DecodeString(sum[:len(sum)/2*2]); err != nil {
		return "", fmt.Errorf("checksum %q is not hex", sum)
	}
	matches, _ := filepath.Glob(filepath.Join(b.Dir, sum[:2], sum+"*"))
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no backup with checksum %s: %w", sum, fs.ErrNotExist)
	case 1:
		return filepath.Base(matches[0]), nil
	}
	return "", fmt.Errorf("checksum %s is ambiguous (%d backups)", sum, len(matches))
}

// Restore writes the stored content for sum to path atomically (mode 0644
// for a new file; an existing file keeps its mode and owner).
func (b *Bucket) Restore(ctx context.Context, sum, path string) error {
	src, err := b.Open(sum)
	if err != nil {
		return err
	}
	defer src.Close()
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("restore: %s is a directory", path)
	}
	o := atomicfile.Options{Mode: 0o644, UID: -1, GID: -1, KeepExisting: true}
	return atomicfile.WriteFunc(ctx, path, o, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}
