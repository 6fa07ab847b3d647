// Package parsedfile is the record provider shared by the types that
// manage one record of a line-oriented file (host, mount, sshkey,
// ssh_authorized_key, cron), the way Puppet's ParsedFile providers do. A
// type keeps only its record format and its rules; this package owns the
// mechanics: reading a target into records, finding a resource's record,
// creating, changing and deleting it, and writing the target back once.
//
// A Format is data: how one line becomes a record (or stays text, or is
// refused), how a record becomes its line again, and the key a resource
// finds its record by. Read turns a Target into Records: every line in
// order, records parsed, comments, blank lines and lines no record matches
// kept verbatim. An Entry is one resource's record in its target: Load
// binds it (prefetch and find), Change carries out one property change,
// Flush writes the target when anything changed.
//
// What Puppet does, and this package does too:
//   - lines starting "# HEADER" (Puppet's own header) are dropped on reading,
//     and a fresh header with the current time (the Format's, by default
//     Puppet's three lines) is written at the top whenever the file is written;
//   - trailing blank lines are dropped and the file ends in one newline;
//   - every record is rendered again from its fields when the file is
//     written; text lines are written back byte for byte;
//   - a resource is bound to the last record of its key;
//   - a new file is created with mode 0600 (the Format's Mode when set); an
//     existing file keeps its mode and owner, and its old content is first
//     backed up to the filebucket.
//
// Unlike Puppet, which copies over the file in place, the default write
// puts a temporary file in the same directory, fsyncs it and renames it
// over the target, so a crash never leaves a half-written file. Only when
// the target cannot be replaced by rename (a bind-mounted file such as
// /etc/hosts in a container) does it fall back to rewriting the file in
// place, from the complete temp file, putting the old bytes back if the
// rewrite fails. A symbolic link is followed: the file it points to is
// written. A Target may bring its own writer instead (a user's
// authorized_keys written with the user's rights, a crontab installed by
// crontab(1)), and its own reading rules (a guard that the file read is
// the one the user may read, a fallback when it can't be read directly).
//
// Parsed files are cached in the Env's Cache keyed by format and path, and
// reused while the file's identity (device, inode, size, modification and
// change times) is unchanged, so an unchanged resource costs one stat; a
// write drops the entry. A change never edits the cached records: the
// first change of an Entry reads its target afresh and edits that private
// copy. The cache is bounded: files over MaxCachedSize are never kept,
// and a format keeps at most MaxCachedFiles.
package parsedfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/applier/filebucket"
	"github.com/pippet/pippet/applier/sysfile"
)

// Kind is what a line of a file is.
type Kind uint8

const (
	// Text is a line kept verbatim: a comment, a blank line, a line no
	// record matches.
	Text Kind = iota
	// Record is a line parsed into a record.
	Record
	// Bad is a line the format refuses: the whole file is refused, as
	// Puppet refuses an authorized_keys file or crontab it cannot parse.
	Bad
)

// Format describes one file format. R is a record, copied by value: a
// change of a record's slice field must assign a new slice.
type Format[R any] struct {
	// Name identifies the format in cache keys, e.g. "host".
	Name string
	// Parse reads one line (without its newline).
	Parse func(line string) (R, Kind)
	// ParseLines, when set, reads all the lines instead of Parse, for
	// records that span several lines (a crontab's name comment and
	// variables belong to the job after them). It returns the first Bad
	// line (1-based), 0 if none.
	ParseLines func(lines []string) (out []Line[R], bad int)
	// Render turns a record into its line(s), without the final newline.
	Render func(R) (string, error)
	// Key is the identity a resource finds its record by; "" is a record
	// no resource can be bound to.
	Key func(R) string
	// Header is the header written at the top (nil: Header).
	Header func(now time.Time) string
	// Finish, when set, reworks the rendered lines before the header is
	// put on top.
	Finish func(body string) string
	// Mode is the mode of a file the default writer creates (0: 0600); an
	// existing file keeps its own. Puppet's sshkey provider creates
	// known_hosts 0644.
	Mode fs.FileMode

	keyOnce sync.Once
	key     string // the store's key in an Env's cache
}

// Line is one line of a file: a record, or text kept verbatim.
type Line[R any] struct {
	// Text is the line as read.
	Text string
	// Rec is the parsed record, when IsRecord.
	Rec R
	// IsRecord: the line is a record (else text).
	IsRecord bool
}

// Records is a target's contents. Records a Read returns may be shared
// with the cache: read them, never change them.
type Records[R any] struct {
	// Lines in file order.
	Lines []Line[R]
	// Exists: the file was there.
	Exists bool
	// Bad is the first line the format refused (1-based), 0 if none.
	Bad int

	index map[string]int // the last line of each key
	keyOf func(R) string // the Format's Key
}

// Find returns the index of the last record of key, or -1.
func (rs *Records[R]) Find(key string) int {
	if i, ok := rs.index[key]; ok {
		return i
	}
	return -1
}

// Each calls fn with every record in file order; bound says whether the
// record is the one Find returns for its key (the last of its key), the
// one a resource is bound to.
func (rs *Records[R]) Each(fn func(line int, rec *R, bound bool)) {
	for i := range rs.Lines {
		if l := &rs.Lines[i]; l.IsRecord {
			fn(i, &l.Rec, rs.Find(rs.key(l.Rec)) == i)
		}
	}
}

// key is rec's key, "" when the records were built without a Format.
func (rs *Records[R]) key(rec R) string {
	if rs.keyOf == nil {
		return ""
	}
	return rs.keyOf(rec)
}

// Target is one file of records: where it is read, and any rules of its
// own for reading and writing it.
type Target struct {
	// Path is the file read; its identity keys the cache.
	Path string
	// Rules, when set, may implement any of Namer, Decoder, Guard,
	// Fallback and Writer; nil is a plain file. A provider usually
	// implements those it needs itself, so binding its target costs no
	// allocation.
	Rules any
}

// The rules a Target's Rules may implement, for a file that is not read
// and written as a plain file.
type (
	// Namer names the target in messages (default: its path), e.g.
	// "bob's crontab".
	Namer interface{ TargetName() string }
	// Decoder turns the file's bytes into the text parsed (a crontab's
	// spool file without crontab(1)'s own header).
	Decoder interface{ Decode(data []byte) string }
	// Guard runs before and after the file is read and returns the
	// identity of the file it checked (the user may read it): an error
	// refuses the file, and so do two identities that differ (the file
	// read is not the one checked).
	Guard interface{ Guard() ([2]uint64, error) }
	// Fallback reads the text when the file can't be read for lack of
	// permission (`crontab -l`); found false is an empty target.
	Fallback interface {
		ReadFallback(ctx context.Context) (text string, found bool, err error)
	}
	// Writer replaces the file's content (default: the atomic write of
	// the package doc, through the Env's filebucket and DirSync).
	Writer interface {
		WriteTarget(ctx context.Context, data []byte) error
	}
)

func (t *Target) name() string {
	if n, ok := t.Rules.(Namer); ok {
		return n.TargetName()
	}
	return t.Path
}

// HeaderTimeLayout is how Puppet (Ruby's Time#to_s) prints the time in the header.
const HeaderTimeLayout = "2006-01-02 15:04:05 -0700"

// Header returns the three comment lines Puppet writes at the top of a file
// it generates, stamped with now.
func Header(now time.Time) string {
	return "# HEADER: This file was autogenerated at " + now.Format(HeaderTimeLayout) + "\n" +
		"# HEADER: by puppet.  While it can still be managed manually, it\n" +
		"# HEADER: is definitely not recommended.\n"
}

// CutHeader returns what follows the header Header writes at the start of
// b, and whether b starts with exactly such a header (any valid time).
func CutHeader(b []byte) ([]byte, bool) {
	const prefix = "# HEADER: This file was autogenerated at "
	if len(b) < len(prefix)+len(HeaderTimeLayout) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	stamp := string(b[len(prefix) : len(prefix)+len(HeaderTimeLayout)])
	when, err := time.Parse(HeaderTimeLayout, stamp)
	if err != nil {
		return nil, false
	}
	return bytes.CutPrefix(b, []byte(Header(when)))
}

// headerRe is what Puppet strips when it reads a file: from "# HEADER" to
// the end of that line.
var headerRe = regexp.MustCompile(`# HEADER[^\n]*\n`)

// parse reads a file's text: Puppet's header lines dropped, lines split as
// Ruby's String#split("\n") splits them (trailing empty lines dropped),
// each a record or text.
func (f *Format[R]) parse(text string) *Records[R] {
	rs := &Records[R]{keyOf: f.Key}
	if strings.Contains(text, "# HEADER") {
		text = headerRe.ReplaceAllString(text, "")
	}
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return rs
	}
	raw := strings.Split(text, "\n")
	if f.ParseLines != nil {
		rs.Lines, rs.Bad = f.ParseLines(raw)
	} else {
		rs.Lines = make([]Line[R], len(raw))
		for i, s := range raw {
			l := &rs.Lines[i]
			l.Text = s
			var k Kind
			l.Rec, k = f.Parse(s)
			l.IsRecord = k == Record
			if k == Bad && rs.Bad == 0 {
				rs.Bad = i + 1
			}
		}
	}
	rs.reindex()
	return rs
}

// reindex finds the last line of each key.
func (rs *Records[R]) reindex() {
	if rs.keyOf == nil {
		return
	}
	rs.index = make(map[string]int, len(rs.Lines))
	for i := range rs.Lines {
		if l := &rs.Lines[i]; l.IsRecord {
			if k := rs.keyOf(l.Rec); k != "" {
				rs.index[k] = i
			}
		}
	}
}

// Bytes renders records as a write puts them: the header stamped with now,
// then every line, each ending in a newline.
func (f *Format[R]) Bytes(rs *Records[R], now time.Time) ([]byte, error) {
	var b strings.Builder
	for i := range rs.Lines {
		l := &rs.Lines[i]
		if !l.IsRecord {
			b.WriteString(l.Text)
		} else {
			s, err := f.Render(l.Rec)
			if err != nil {
				return nil, err
			}
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	if len(rs.Lines) == 0 {
		// Puppet joins no records into "" and still adds the separator.
		b.WriteByte('\n')
	}
	body := b.String()
	if f.Finish != nil {
		body = f.Finish(body)
	}
	header := Header
	if f.Header != nil {
		header = f.Header
	}
	return []byte(header(now) + body), nil
}

// What a format keeps in the cache is bounded: a file larger than
// MaxCachedSize is parsed on every Read and never kept, and at most
// MaxCachedFiles files are kept per format (the oldest dropped first), so
// a huge or hostile target costs time, not memory that stays.
const (
	MaxCachedSize  = 4 << 20
	MaxCachedFiles = 16
)

// identity tells one version of a file from another.
type identity struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// store is what an Env's cache holds of one format: the parsed files by
// path, and the paths oldest first (at most MaxCachedFiles).
type store[R any] struct {
	mu    sync.Mutex
	files map[string]*cached[R]
	order []string
}

type cached[R any] struct {
	id   identity
	recs *Records[R]
}

// store is the format's store in cache, made on first use when create
// (nil without a cache).
func (f *Format[R]) store(cache *applier.Cache, create bool) *store[R] {
	if cache == nil {
		return nil
	}
	f.keyOnce.Do(func() { f.key = "parsedfile:" + f.Name })
	if v, ok := cache.Get(f.key); ok {
		if st, ok := v.(*store[R]); ok {
			return st
		}
	}
	if !create {
		return nil
	}
	st := &store[R]{files: map[string]*cached[R]{}}
	cache.Put(f.key, st)
	return st
}

func (st *store[R]) get(path string, id identity) *Records[R] {
	st.mu.Lock()
	defer st.mu.Unlock()
	if c, ok := st.files[path]; ok && c.id == id {
		return c.recs
	}
	return nil
}

// put keeps path's records, dropping the oldest file past MaxCachedFiles.
func (st *store[R]) put(path string, c *cached[R]) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.files[path]; ok {
		st.forget(path)
	}
	st.files[path] = c
	st.order = append(st.order, path)
	for len(st.order) > MaxCachedFiles {
		st.forget(st.order[0])
	}
}

func (st *store[R]) forget(path string) {
	delete(st.files, path)
	for i, p := range st.order {
		if p == path {
			st.order = append(st.order[:i], st.order[i+1:]...)
			break
		}
	}
}

// Drop forgets what cache holds of path: call it after changing the file
// some other way.
func (f *Format[R]) Drop(cache *applier.Cache, path string) {
	if st := f.store(cache, false); st != nil {
		st.mu.Lock()
		st.forget(path)
		st.mu.Unlock()
	}
}

// Read returns t's records: a missing file is empty Records with Exists
// false; a file with a Bad line is refused. cache may be nil; the records
// returned are shared with it (read them, never change them).
func (f *Format[R]) Read(ctx context.Context, t *Target, cache *applier.Cache) (*Records[R], error) {
	guard, _ := t.Rules.(Guard)
	var before [2]uint64
	if guard != nil {
		var err error
		if before, err = guard.Guard(); err != nil {
			return nil, err
		}
	}
	rs, err := f.read(t, cache)
	if fb, ok := t.Rules.(Fallback); ok && errors.Is(err, fs.ErrPermission) {
		text, found, ferr := fb.ReadFallback(ctx)
		if ferr != nil {
			return nil, ferr
		}
		rs, err = f.parse(text), nil
		rs.Exists = found
	}
	if err != nil {
		return nil, err
	}
	if guard != nil {
		// The file read must be the one checked: a link or another file
		// swapped in between is refused, not reported.
		if after, err := guard.Guard(); err != nil {
			return nil, err
		} else if after != before {
			return nil, fmt.Errorf("%s changed while it was read", t.Path)
		}
	}
	if rs.Bad > 0 {
		return nil, fmt.Errorf("could not parse line %d of %s", rs.Bad, t.name())
	}
	return rs, nil
}

// read stats, reads and parses the file, through the cache.
func (f *Format[R]) read(t *Target, cache *applier.Cache) (*Records[R], error) {
	var sys syscall.Stat_t
	if err := syscall.Stat(t.Path, &sys); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return &Records[R]{keyOf: f.Key}, nil
		}
		return nil, fmt.Errorf("reading %s: %w", t.Path, &fs.PathError{Op: "stat", Path: t.Path, Err: err})
	}
	if sys.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, fmt.Errorf("reading %s: not a regular file", t.Path)
	}
	id := identity{uint64(sys.Dev), sys.Ino, sys.Size, sys.Mtim.Nano(), sys.Ctim.Nano()}
	st := f.store(cache, true)
	if st != nil {
		if rs := st.get(t.Path, id); rs != nil {
			return rs, nil
		}
	}
	// Checked again on the open file: a FIFO swapped in since the stat
	// is refused, not waited on.
	data, err := sysfile.ReadRegular(t.Path, 0)
	if errors.Is(err, sysfile.ErrNotRegular) {
		return nil, fmt.Errorf("reading %s: not a regular file", t.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.Path, err)
	}
	text := string(data)
	if d, ok := t.Rules.(Decoder); ok {
		text = d.Decode(data)
	}
	rs := f.parse(text)
	rs.Exists = true
	// What was stat'ed before reading is kept only when the read saw that
	// many bytes; a file changed in between has another identity the next
	// time anyway.
	if st != nil && sys.Size <= MaxCachedSize && int64(len(data)) == sys.Size {
		st.put(t.Path, &cached[R]{id: id, recs: rs})
	}
	return rs, nil
}

// Write replaces t's content with rs rendered, stamped with now: through
// its Writer when it has one, else atomically (see the package doc), an existing
// file first backed up to the filebucket under env's state directory. The
// cache entry is dropped. env may be nil: no backup, no cache.
func (f *Format[R]) Write(ctx context.Context, t *Target, rs *Records[R], now time.Time, env *applier.Env) error {
	if env != nil {
		defer f.Drop(env.Cache, t.Path)
	}
	data, err := f.Bytes(rs, now)
	if err != nil {
		return fmt.Errorf("writing %s: %w", t.Path, err)
	}
	if w, ok := t.Rules.(Writer); ok {
		return w.WriteTarget(ctx, data)
	}
	if env != nil && rs.Exists {
		if err := Backup(ctx, env, t.Path); err != nil {
			return err
		}
	}
	var dirs *dirsync.Syncer
	if env != nil {
		dirs = env.Dirs
	}
	// A new file gets the format's Mode (0600 by default); an existing
	// one keeps its mode and owner; a symlink is followed; a bind-mounted
	// target is rewritten in place.
	mode := f.Mode
	if mode == 0 {
		mode = 0o600
	}
	o := atomicfile.Options{Mode: uint32(mode.Perm()), UID: -1, GID: -1, KeepExisting: true, FollowLinks: true,
		Dirs: dirs, InPlaceFallback: true}
	if err := atomicfile.Write(ctx, t.Path, data, o); err != nil {
		return err
	}
	rs.Exists = true
	return nil
}

// Backup saves path's content in the filebucket under env's state
// directory, as Puppet backs a parsed file up to its clientbucket before
// rewriting it. A missing file is no error.
func Backup(ctx context.Context, env *applier.Env, path string) error {
	b := &filebucket.Bucket{Dir: filebucket.Dir(env.Options.StateDir)}
	if _, err := b.Backup(ctx, path, "puppet"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("could not back up %s to filebucket puppet: %w", path, err)
	}
	return nil
}

// OrText is a Parse for a format that keeps every line it can't read as
// text: parse's record where ok, else Text.
func OrText[R any](parse func(line string) (R, bool)) func(line string) (R, Kind) {
	return func(line string) (R, Kind) {
		if rec, ok := parse(line); ok {
			return rec, Record
		}
		var zero R
		return zero, Text
	}
}
