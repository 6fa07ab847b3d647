package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/catalog"
)

// CachePath is where the catalog of certname is cached below the
// client data directory, as Puppet's agent keeps it
// (client_datadir/catalog/CERTNAME.json).
func CachePath(dir, certname string) (string, error) {
	if certname == "" || certname == "." || certname == ".." || strings.ContainsAny(certname, "/\\\x00") {
		return "", fmt.Errorf("invalid certname %q for the catalog cache", certname)
	}
	return filepath.Join(dir, "catalog", certname+".json"), nil
}

// SaveCache keeps raw, a catalog the server sent, as the catalog of
// certname: written through applier/atomicfile (a temporary file in the
// same directory, synced, renamed over the old one, the directory
// synced), so that a crash leaves the old catalog or the new one, never
// part of one. raw is parsed first: what is not a
// whole catalog is refused and the cache left as it was. The directory
// is made 0750 (Puppet's client_datadir) and a new file 0660 (Puppet's
// mode for it); an existing file's mode is kept.
func SaveCache(dir, certname string, raw []byte) error {
	path, err := CachePath(dir, certname)
	if err != nil {
		return err
	}
	if _, err := catalog.Parse(bytes.NewReader(raw)); err != nil {
		return fmt.Errorf("not caching the catalog for %s: %w", certname, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("caching the catalog: %w", err)
	}
	mode := uint32(0o660)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		mode = uint32(fi.Mode().Perm())
	}
	// Owned by the writer, as a new file.
	err = atomicfile.Write(context.Background(), path, raw, atomicfile.Options{Mode: mode, UID: -1, GID: -1})
	if err != nil {
		return fmt.Errorf("caching the catalog: %w", err)
	}
	return nil
}

// ErrNoCache is wrapped by LoadCache's error when no catalog is cached.
var ErrNoCache = errors.New("no cached catalog")

// LoadCache reads the cached catalog of certname and returns it parsed,
// with its bytes. A missing cache wraps ErrNoCache (and fs.ErrNotExist);
// one that cannot be read or parsed is an error naming the file. A
// symbolic link is not followed.
func LoadCache(dir, certname string) (*catalog.Catalog, []byte, error) {
	path, err := CachePath(dir, certname)
	if err != nil {
		return nil, nil, err
	}
	// Opened without following a link, then checked on the descriptor:
	// nothing swapped in between is read.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w for %s (%s): %w", ErrNoCache, certname, path, err)
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, fmt.Errorf("Could not read JSON data for catalog %s: %s is a symbolic link", certname, path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("Could not read JSON data for catalog %s: %w", certname, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("Could not read JSON data for catalog %s: %w", certname, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("Could not read JSON data for catalog %s: %s is not a regular file", certname, path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, catalog.MaxSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("Could not read JSON data for catalog %s: %w", certname, err)
	}
	if len(raw) > catalog.MaxSize {
		return nil, nil, fmt.Errorf("Could not read JSON data for catalog %s: %s is over %d bytes", certname, path, catalog.MaxSize)
	}
	c, err := catalog.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("Could not parse JSON data for catalog %s: %w", certname, err)
	}
	if _, err := c.Static(); err != nil {
		return nil, nil, fmt.Errorf("Could not parse JSON data for catalog %s: %w", certname, err)
	}
	return c, raw, nil
}
