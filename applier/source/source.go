// Package source is where a file's content and metadata come from: a
// local path or file:// URI, an http(s) URL, or a puppet:// URL served
// by a Puppet Server (puppet.go), with one Backend per scheme.
//
// It keeps the split Puppet calls file_metadata and file_content: Stat
// answers what a source is (its kind, size, mode, owner, modification
// time and a checksum when one is cheaply known) without moving its
// bytes, and Open streams the bytes, never holding a whole file in
// memory. Callers decide from the metadata whether the content is needed
// at all.
//
// Errors are typed: a source that does not exist wraps ErrNotFound (so an
// array of sources can fall through to the next one), an unknown scheme is
// an *UnsupportedSchemeError, and anything else (a refused connection, a
// 500, a timeout) is a plain failure to be reported.
//
// There is no global state: a Fetcher holds the backends and their
// settings (the HTTP client, its timeout and trusted roots); the file type
// keeps one per process in the applier's cache.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"time"
)

// ErrNotFound is wrapped by every error that means "this source does not
// exist" (a missing local file, an HTTP 404 or 410).
var ErrNotFound = errors.New("source not found")

// UnsupportedSchemeError is returned for a source URI whose scheme has no
// backend.
type UnsupportedSchemeError struct{ Scheme string }

func (e *UnsupportedSchemeError) Error() string {
	return fmt.Sprintf("cannot use URLs of type '%s' as source", e.Scheme)
}

// Kinds of source entries, as Puppet's ftype names them.
const (
	TypeFile      = "file"
	TypeDirectory = "directory"
	TypeLink      = "link"
)

// Metadata describes one source entry without its content.
type Metadata struct {
	// Source is the source as the caller wrote it (path or URI).
	Source string
	// Type is file, directory or link.
	Type string
	// Size in bytes; -1 when unknown.
	Size int64
	// Mode holds the permission bits (local sources only; 0 otherwise).
	Mode fs.FileMode
	// UID and GID of the owner (local sources only; HasOwner says so).
	UID, GID int
	HasOwner bool
	// ModTime is the modification time (Last-Modified for HTTP); zero when unknown.
	ModTime time.Time
	// CTime is the status change time (local sources only).
	CTime time.Time
	// ChecksumType and Checksum (hex) describe the content when known:
	// the kind asked for when available, else the strongest offered.
	// Empty when the source offers no digest.
	ChecksumType string
	Checksum     string
	// Target of a link (Type link).
	Target string
	// ContentURI is where a static catalog says the content is served
	// from (Puppet's content_uri: puppet:///modules/MOD/files/PATH, the
	// file's place in the environment); empty otherwise. See Static.
	ContentURI string
}

// Query says what the caller wants to know about a source.
type Query struct {
	// Checksum is the checksum kind the caller compares with (Puppet's
	// `checksum`); backends compute or pick it when they can.
	Checksum string
	// FollowLinks: describe what a link points at rather than the link.
	FollowLinks bool
	// SourcePermissions is the file's source_permissions (use,
	// use_when_creating, ignore), passed to a Puppet Server, which
	// reports its own process's owner and mode 0644 when it is ignore.
	SourcePermissions string
}

// Backend serves one or more URI schemes.
type Backend interface {
	// Stat describes the entry at u. A missing entry wraps ErrNotFound.
	Stat(ctx context.Context, u *url.URL, q Query) (*Metadata, error)
	// Open streams the entry's content. The caller closes it. Errors while
	// reading (a cut connection) surface from Read.
	Open(ctx context.Context, u *url.URL) (io.ReadCloser, error)
}

// WalkFunc is called for each entry below a walked directory, with its
// path relative to the root ("." for the root itself).
type WalkFunc func(rel string, m *Metadata) error

// Walker is a Backend that can list a directory tree (recursive copies).
type Walker interface {
	Walk(ctx context.Context, u *url.URL, q Query, opts WalkOptions, fn WalkFunc) error
}

// WalkOptions bound a walk.
type WalkOptions struct {
	// Limit is the recursion depth (0: unlimited; 1: the direct children).
	Limit int
	// Ignore holds glob patterns matched against each entry's base name;
	// a matching entry (and what is below it) is skipped.
	Ignore []string
	// MaxFiles stops the walk with ErrTooManyFiles after this many entries (<=0: no bound).
	MaxFiles int
}

// ErrTooManyFiles is returned by a walk that went past WalkOptions.MaxFiles.
var ErrTooManyFiles = errors.New("too many files")

// Options configure a Fetcher's network backends.
type Options struct {
	// HTTPTimeout bounds idle time in HTTP and puppet:// requests (0:
	// 60s): connecting, the TLS handshake, the wait for the headers and
	// every wait for more of the body; not a whole transfer (idle.go).
	HTTPTimeout time.Duration
	// CAFile is a PEM bundle HTTPS servers are verified against instead
	// of the system roots.
	CAFile string
	// MaxRedirects bounds the redirects followed (0: 10).
	MaxRedirects int
	// MaxSize bounds the bytes one HTTP body may bring, decoded (0:
	// DefaultMaxSize): a body that promises more fails before it is read,
	// one that sends more fails when it passes the bound. It bounds what
	// is read of a local source too.
	MaxSize int64
	// Puppet, when set, adds the puppet:// backend.
	Puppet *PuppetOptions
	// Static, when set, is what a static catalog inlined about its File
	// resources' sources: their metadata is taken from it rather than
	// asked of the server, and their content is read through
	// static_file_content when it gives a code_id (static.go).
	Static *Static
}

// DefaultMaxSize is the bound on one HTTP body when Options gives none.
const DefaultMaxSize = 4 << 30

// ErrTooLarge is wrapped by the error of a body past Options.MaxSize.
var ErrTooLarge = errors.New("larger than the maximum source size (--max-source-size)")

// Fetcher maps URI schemes to backends.
type Fetcher struct {
	backends map[string]Backend
	static   *Static
}

// New returns a Fetcher with the local (file) and http(s) backends.
func New(opts Options) (*Fetcher, error) {
	h, err := NewHTTP(opts)
	if err != nil {
		return nil, err
	}
	f := &Fetcher{backends: map[string]Backend{}, static: opts.Static}
	f.Register("file", Local{MaxSize: opts.MaxSize})
	f.Register("http", h)
	f.Register("https", h)
	if opts.Puppet != nil {
		f.Register("puppet", NewPuppet(*opts.Puppet, opts))
	}
	return f, nil
}

// Register adds (or replaces) the backend for scheme.
func (f *Fetcher) Register(scheme string, b Backend) { f.backends[strings.ToLower(scheme)] = b }

// Parse turns a source as written (an absolute path or a URI) into a URL.
// Absolute paths become file URLs. A relative path is an error.
//
// A puppet:// source's path is taken literally, as Puppet takes it: '#',
// '?', '%' and spaces are part of a file's name, never a fragment, a
// query or an escape (the request to the server escapes them).
func Parse(src string) (*url.URL, error) {
	if strings.HasPrefix(src, "/") {
		return &url.URL{Scheme: "file", Path: src}, nil
	}
	if len(src) >= len("puppet://") && strings.EqualFold(src[:len("puppet://")], "puppet://") {
		return parsePuppet(src)
	}
	u, err := url.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("could not understand source %s: %w", src, err)
	}
	if !u.IsAbs() {
		return nil, fmt.Errorf("cannot use relative URLs '%s'", src)
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("cannot use opaque URLs '%s'", src)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme == "file" && u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("file source %s names a host; only local files are supported", src)
	}
	return u, nil
}

// parsePuppet splits puppet://HOST[:PORT]/PATH without interpreting the
// path; the authority is checked as a URL's would be.
func parsePuppet(src string) (*url.URL, error) {
	rest := src[len("puppet://"):]
	host, path, _ := strings.Cut(rest, "/")
	if host != "" {
		h, err := url.Parse("puppet://" + host)
		if err != nil || h.Host != host || h.User != nil {
			return nil, fmt.Errorf("could not understand source %s: invalid host %q", src, host)
		}
	}
	return &url.URL{Scheme: "puppet", Host: host, Path: "/" + path}, nil
}

// Backend returns the backend for src and its parsed URL.
func (f *Fetcher) Backend(src string) (Backend, *url.URL, error) {
	u, err := Parse(src)
	if err != nil {
		return nil, nil, err
	}
	b, ok := f.backends[u.Scheme]
	if !ok {
		return nil, nil, &UnsupportedSchemeError{Scheme: u.Scheme}
	}
	return b, u, nil
}

// Stat describes src.
func (f *Fetcher) Stat(ctx context.Context, src string, q Query) (*Metadata, error) {
	b, u, err := f.Backend(src)
	if err != nil {
		return nil, err
	}
	m, err := b.Stat(ctx, u, q)
	if err != nil {
		return nil, err
	}
	m.Source = src
	return m, nil
}

// First describes the first of srcs that exists; when none does the error
// wraps ErrNotFound. Any other failure stops the search.
func (f *Fetcher) First(ctx context.Context, srcs []string, q Query) (*Metadata, error) {
	for _, s := range srcs {
		m, err := f.Stat(ctx, s, q)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("could not retrieve file metadata for %s: %w", s, err)
		}
		return m, nil
	}
	return nil, f.NotFound(srcs)
}

// NotFound is the error for sources none of which exists, worded as
// Puppet words it (naming the environment when one is a puppet:// source).
func (f *Fetcher) NotFound(srcs []string) error {
	env := ""
	for _, s := range srcs {
		if strings.HasPrefix(strings.ToLower(s), "puppet:") {
			if p, ok := f.backends["puppet"].(*Puppet); ok {
				env = "environment " + p.Environment() + " "
			}
		}
	}
	return fmt.Errorf("could not retrieve information from %ssource(s) %s: %w", env, strings.Join(srcs, ", "), ErrNotFound)
}

// Open streams src's content.
func (f *Fetcher) Open(ctx context.Context, src string) (io.ReadCloser, error) {
	b, u, err := f.Backend(src)
	if err != nil {
		return nil, err
	}
	return b.Open(ctx, u)
}

// Static is the static catalog's inlined metadata the Fetcher was given
// (nil without).
func (f *Fetcher) Static() *Static { return f.static }

// OpenMeta streams the content m describes: through the Puppet Server's
// static_file_content endpoint when m came inlined in a static catalog
// that has a code_id (the content of that version of the code, as
// Puppet's agent reads it), else from m.Source.
func (f *Fetcher) OpenMeta(ctx context.Context, m *Metadata) (io.ReadCloser, error) {
	if m.ContentURI != "" && f.static != nil && f.static.CodeID != "" {
		if p, ok := f.backends["puppet"].(*Puppet); ok {
			u, err := Parse(m.ContentURI)
			if err != nil {
				return nil, err
			}
			if u.Scheme == "puppet" {
				return p.OpenStatic(ctx, u, f.static.CodeID)
			}
		}
	}
	return f.Open(ctx, m.Source)
}

// Walk lists the tree at src when its backend can.
func (f *Fetcher) Walk(ctx context.Context, src string, q Query, opts WalkOptions, fn WalkFunc) error {
	b, u, err := f.Backend(src)
	if err != nil {
		return err
	}
	w, ok := b.(Walker)
	if !ok {
		return fmt.Errorf("%s sources cannot be copied recursively", u.Scheme)
	}
	return w.Walk(ctx, u, q, opts, fn)
}

// Join appends a relative path to a source, as written.
func Join(src, rel string) string {
	if rel == "." || rel == "" {
		return src
	}
	return strings.TrimRight(src, "/") + "/" + rel
}
