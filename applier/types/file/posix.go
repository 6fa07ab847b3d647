package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/source"
)

var posixSpec = &applier.ProviderSpec{
	Name:    "posix",
	Doc:     "Manages files with POSIX calls: lstat/open/rename, fchmod/fchown on the open temp file, symlink, lchown.",
	Confine: applier.Confine{Features: []string{"posix"}},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return &posix{r: r, env: env, path: r.Name()}, nil
	},
}

// posix is the provider bound to one file resource. Get records what it
// found (the lstat, the source's metadata, the recursion plan) for Set.
type posix struct {
	r    *applier.Resource
	env  *applier.Env
	path string

	fi   fs.FileInfo // nil: absent
	st   statInfo    // what the first stat fills (fi points to it)
	kind string      // absent, file, directory, link, fifo, socket, ...
	// stale: a Set changed the file since fi was read; the next Set
	// reads it again (most changes are the only one: no lstat after them).
	stale bool

	meta    *source.Metadata // the source chosen, when there is one
	metaErr error
	curSum  string // the current content's {kind}digest once computed
	plan    []treeAction
	planned bool
}

// properties in the order the engine syncs them (ensure first).
var properties = []string{"ensure", "content", "target", "owner", "group", "mode"}

func ftype(fi fs.FileInfo) string {
	if fi == nil {
		return "absent"
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "link"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "characterSpecial"
	case m&fs.ModeDevice != 0:
		return "blockSpecial"
	}
	return "unknown"
}

// copySourcePermissions makes the source's mode (and, as root, its owner
// and group) the desired ones where the resource doesn't give them, as
// Puppet does with source_permissions use, and with use_when_creating for
// a file that doesn't exist yet. They are then managed like given ones: an
// existing file whose content is right gets a mode change.
func (p *posix) copySourcePermissions(ctx context.Context) error {
	if !p.r.Given("source") {
		return nil
	}
	if sp := p.r.String("source_permissions"); !(sp == "use" || sp == "use_when_creating" && p.fi == nil) {
		return nil
	}
	m, err := p.sourceMeta(ctx)
	if err != nil {
		return err
	}
	if !m.HasOwner || m.Type == source.TypeLink {
		return nil // an HTTP source has no permissions to copy
	}
	if !p.r.Has("mode") {
		p.r.Set("mode", formatMode(uint32(m.Mode.Perm())|modeSetid(m.Mode)))
	}
	if os.Geteuid() == 0 {
		if !p.r.Has("owner") {
			p.r.Set("owner", strconv.Itoa(m.UID))
		}
		if !p.r.Has("group") {
			p.r.Set("group", strconv.Itoa(m.GID))
		}
	}
	return nil
}

// kindValue is a kind as an interface value: the constants convert
// without an allocation, which Get would otherwise make twice per file.
func kindValue(k string) any {
	switch k {
	case "absent":
		return "absent"
	case "file":
		return "file"
	case "directory":
		return "directory"
	case "link":
		return "link"
	}
	return k
}

func (p *posix) follow() bool { return p.r.String("links") == "follow" }

// stat reads the file's current state: lstat, or stat when links follow.
func (p *posix) stat() error {
	// The first read fills the provider's own statInfo; a later one (after
	// a change) a new one, so a FileInfo handed out before stays as read.
	st := &p.st
	if p.fi != nil {
		st = new(statInfo)
	}
	var fi fs.FileInfo = st
	err := lstatInto(p.path, p.follow(), st)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		fi = nil
	default:
		return fmt.Errorf("could not stat %s: %w", p.path, err)
	}
	p.fi, p.kind = fi, ftype(fi)
	return nil
}

// Resolve settles the desired values a source decides: without ensure,
// the source's kind is the desired kind (as Puppet's source does on
// retrieve), and source_permissions copies its mode, owner and group.
func (p *posix) Resolve(ctx context.Context) error {
	if !p.r.Given("source") {
		return nil
	}
	if err := p.stat(); err != nil {
		return err
	}
	if !p.r.Given("ensure") && p.r.String("ensure") == "present" {
		m, err := p.sourceMeta(ctx)
		if err != nil {
			return err
		}
		if m.Type == source.TypeFile || m.Type == source.TypeDirectory {
			p.r.Set("ensure", m.Type)
		}
	}
	return p.copySourcePermissions(ctx)
}

func (p *posix) Get(ctx context.Context, cur *applier.State) error {
	if err := p.stat(); err != nil {
		return err
	}
	cur.Set("ensure", kindValue(p.kind))
	// inSync reports a property as already what it should be.
	inSync := func(name string) {
		if v, ok := p.r.Get(name); ok {
			cur.Set(name, v)
		}
	}
	if p.fi == nil {
		// Nothing else can be compared on a missing file: creating it
		// (ensure) brings every property along, and without ensure there
		// is nothing to manage.
		for _, n := range properties[1:] {
			inSync(n)
		}
		return nil
	}
	cur.Set("type", kindValue(p.kind))
	ensureV, managed := p.r.Get("ensure")
	ensure, _ := ensureV.(string)
	if managed && !p.r.Bool("replace") {
		// replace: false never changes an existing file's kind.
		cur.Set("ensure", ensureV)
	} else if managed && !ensureInSync(p.kind, ensure) {
		for _, n := range properties[1:] {
			inSync(n)
		}
		return nil
	}
	if c, ok := p.r.Value("content").(*Content); ok {
		v, err := p.getContent(ctx, c)
		if err != nil {
			return err
		}
		cur.Set("content", v)
	}
	if t, ok := p.r.Get("target"); ok {
		cur.Set("target", t)
		if p.kind == "link" && ensure == "link" && p.r.Bool("replace") {
			now, err := os.Readlink(p.path)
			if err != nil {
				return fmt.Errorf("read link %s: %w", p.path, err)
			}
			if now != t {
				cur.Set("target", now)
			}
		}
	}
	uid, gid := statOwner(p.fi)
	for _, n := range [...]string{"owner", "group"} {
		wantV, ok := p.r.Get(n)
		want, isString := wantV.(string)
		if !ok || !isString {
			continue
		}
		id, err := lookupID(p.env, want, n == "group")
		if err != nil {
			return err
		}
		is := uid
		if n == "group" {
			is = gid
		}
		if id == is {
			cur.Set(n, wantV)
		} else if n == "owner" && os.Geteuid() != 0 {
			// As Puppet: ownership can't be managed unless running as root.
			p.env.Logger().Warn("/" + p.r.Ref() + ": cannot manage ownership unless running as root")
			cur.Set(n, wantV)
		} else {
			cur.Set(n, idName(p.env, is, n == "group"))
		}
	}
	if wantV, ok := p.r.Get("mode"); ok {
		if want, isString := wantV.(string); isString {
			if p.kind == "link" {
				cur.Set("mode", wantV) // a link's own mode is not managed
			} else {
				is := statMode(p.fi)
				bits, err := applyMode(want, is, p.kind == "directory")
				if err != nil {
					return err
				}
				if bits == is {
					cur.Set("mode", wantV)
				} else {
					cur.Set("mode", formatMode(is))
				}
			}
		}
	}
	return nil
}

// getContent returns c itself when the content is in sync, else the
// current content's checksum (or a recursion summary for a directory).
func (p *posix) getContent(ctx context.Context, c *Content) (any, error) {
	if p.kind == "directory" {
		if !recursive(p.r) {
			return c, nil
		}
		plan, err := p.treePlan(ctx)
		if err != nil {
			return nil, err
		}
		c.Summary = "all entries in sync"
		if len(plan) == 0 {
			return c, nil
		}
		return fmt.Sprintf("%d entries out of sync", len(plan)), nil
	}
	if p.kind != "file" || !p.r.Bool("replace") || (!c.Inline && !p.r.Has("source")) {
		// Not a file, never replaced, or a recursion without a source:
		// nothing to compare.
		return c, nil
	}
	kind := p.r.String("checksum")
	if kind == source.None {
		return c, nil
	}
	if cv := p.r.String("checksum_value"); cv != "" {
		c.Kind, c.Sum = kind, cv
		if !c.Inline {
			if _, err := p.sourceMeta(ctx); err != nil {
				return nil, err
			}
		}
		return p.compareDigest(c)
	}
	if c.Inline {
		same, err := sameContent(p.path, p.fi.Size(), c.Data, source.IsLite(kind), p.follow())
		if err != nil {
			return nil, err
		}
		if same {
			return c, nil
		}
		if p.r.Noop {
			p.logNoopDiff(ctx, []byte(c.Data))
		}
		return p.currentSum(c.Kind)
	}
	m, err := p.sourceMeta(ctx)
	if err != nil {
		return nil, err
	}
	if m.Type == source.TypeDirectory {
		return c, nil
	}
	switch {
	case kind == source.MTime || kind == source.CTime:
		c.Kind = kind
		c.Sum = m.ModTime.UTC().Format(time.RFC3339)
		cur := p.fi.ModTime()
		if kind == source.CTime {
			if st, ok := p.fi.Sys().(*syscall.Stat_t); ok {
				cur = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
			}
		}
		if !cur.Before(m.ModTime) {
			return c, nil
		}
		return "{" + kind + "}" + cur.UTC().Format(time.RFC3339), nil
	case m.Checksum != "":
		c.Kind, c.Sum = m.ChecksumType, m.Checksum
		return p.compareDigest(c)
	case !m.ModTime.IsZero():
		// Only Last-Modified: installs set the file's mtime to it.
		c.Kind, c.Sum = source.MTime, m.ModTime.UTC().Format(time.RFC3339)
		if p.fi.ModTime().Truncate(time.Second).Equal(m.ModTime.Truncate(time.Second)) {
			return c, nil
		}
		return source.MTime + ":" + p.fi.ModTime().UTC().Format(time.RFC3339), nil
	default:
		// No usable metadata: fetch and compare digests rather than
		// rewriting the file on every run.
		sum, err := p.fetchSum(ctx, m.Source, kind)
		if err != nil {
			return nil, err
		}
		c.Kind, c.Sum = kind, sum
		return p.compareDigest(c)
	}
}

// describeSource fills c's checksum from a source's metadata (or the
// pinned checksum_value) for messages.
func (p *posix) describeSource(c *Content, m *source.Metadata) {
	switch {
	case p.r.String("checksum_value") != "":
		c.Kind, c.Sum = p.r.String("checksum"), p.r.String("checksum_value")
	case m.Checksum != "":
		c.Kind, c.Sum = m.ChecksumType, m.Checksum
	case !m.ModTime.IsZero():
		c.Kind, c.Sum = source.MTime, m.ModTime.UTC().Format(time.RFC3339)
	}
}

// logNoopDiff logs, in noop mode, the diff a content change would make
// (the event's message is the engine's; Puppet shows the diff either way).
func (p *posix) logNoopDiff(ctx context.Context, nw []byte) {
	if !p.r.Bool("show_diff") || p.fi == nil || p.fi.Size() > maxDiffInput {
		return
	}
	old, err := os.ReadFile(p.path)
	if err != nil {
		return
	}
	p.env.Logger().Log(ctx, p.r.LogLevel, "/"+p.r.Ref()+"/content: would change (noop)\n"+unifiedDiff(p.path, p.path+" (new)", old, nw))
}

// compareDigest compares the file's digest (of c.Kind) with c.Sum.
func (p *posix) compareDigest(c *Content) (any, error) {
	cur, err := p.currentSum(c.Kind)
	if err != nil {
		return nil, err
	}
	if cur == source.Format(c.Kind, c.Sum) {
		return c, nil
	}
	return cur, nil
}

func (p *posix) currentSum(kind string) (string, error) {
	if !source.IsDigest(kind) {
		kind = source.SHA256
	}
	if p.curSum != "" && strings.HasPrefix(p.curSum, "{"+kind+"}") {
		return p.curSum, nil
	}
	s, err := source.SumFile(kind, p.path)
	if err != nil {
		return "", fmt.Errorf("could not read %s: %w", p.path, err)
	}
	p.curSum = source.Format(kind, s)
	return p.curSum, nil
}

// sameContent compares the file at path (of the given size) with want,
// reading in a stream and stopping at the first difference. lite compares
// only the first source.LiteSize bytes, as the lite checksums do. It uses
// plain system calls: an *os.File would register with the poller for
// nothing.
func sameContent(path string, size int64, want string, lite, follow bool) (bool, error) {
	if lite {
		if len(want) > source.LiteSize {
			want = want[:source.LiteSize]
		}
		if size > source.LiteSize {
			size = source.LiteSize
		}
	}
	if size != int64(len(want)) {
		return false, nil
	}
	fd, err := openRead(path, follow)
	if err != nil {
		return false, fmt.Errorf("could not read %s: %w", path, &os.PathError{Op: "open", Path: path, Err: err})
	}
	defer syscall.Close(fd)
	// A buffer just big enough (the stack's is zeroed on every call: 4 KiB
	// of it cost more than the read of a small file).
	switch {
	case len(want) < 256:
		var small [256]byte
		return compareRead(fd, path, size, want, lite, small[:])
	case len(want) < 4096:
		return compareRead4K(fd, path, size, want, lite)
	}
	return compareRead(fd, path, size, want, lite, make([]byte, min(len(want)+1, 64<<10)))
}

func compareRead4K(fd int, path string, size int64, want string, lite bool) (bool, error) {
	var buf [4096]byte
	return compareRead(fd, path, size, want, lite, buf[:])
}

// compareRead reads fd into buf and compares it with want (see sameContent).
func compareRead(fd int, path string, size int64, want string, lite bool, buf []byte) (bool, error) {
	off := 0
	for {
		k, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("could not read %s: %w", path, &os.PathError{Op: "read", Path: path, Err: err})
		}
		if k == 0 {
			return off == len(want), nil
		}
		if off+k > len(want) {
			// Longer than its size said (it grew), or past the lite prefix.
			return lite && want[off:] == string(buf[:len(want)-off]), nil
		}
		if want[off:off+k] != string(buf[:k]) {
			return false, nil
		}
		off += k
		if off == len(want) && (lite || size == int64(len(want))) {
			// All the bytes lstat promised match: no read for EOF.
			return true, nil
		}
	}
}

// openRead opens path for reading; unless follow, a symlink that
// replaced the file since it was lstat'ed is refused (ELOOP).
func openRead(path string, follow bool) (int, error) {
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	for {
		fd, err := syscall.Open(path, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// fetcher is the process's source fetcher, kept in the env cache.
func (p *posix) fetcher() (*source.Fetcher, error) {
	o := source.Options{}
	if p.env != nil {
		o.CAFile = p.env.Options.CAFile
		o.HTTPTimeout = p.env.Options.HTTPTimeout
	}
	key := fmt.Sprintf("file:fetcher:%s:%d", o.CAFile, o.HTTPTimeout)
	if v, ok := cacheGet(p.env, key); ok {
		return v.(*source.Fetcher), nil
	}
	f, err := source.New(o)
	if err != nil {
		return nil, err
	}
	cachePut(p.env, key, f)
	return f, nil
}

func (p *posix) httpTimeout() time.Duration {
	if p.env != nil && p.env.Options.HTTPTimeout > 0 {
		return p.env.Options.HTTPTimeout
	}
	return 60 * time.Second
}

// sourceMeta finds the first source that exists.
func (p *posix) sourceMeta(ctx context.Context) (*source.Metadata, error) {
	if p.meta != nil || p.metaErr != nil {
		return p.meta, p.metaErr
	}
	f, err := p.fetcher()
	if err != nil {
		return nil, err
	}
	q := source.Query{Checksum: p.r.String("checksum"), FollowLinks: true}
	p.meta, p.metaErr = f.First(ctx, p.r.Strings("source"), q)
	return p.meta, p.metaErr
}

// fetchSum downloads src into nothing but a hash.
func (p *posix) fetchSum(ctx context.Context, src, kind string) (string, error) {
	f, err := p.fetcher()
	if err != nil {
		return "", err
	}
	rc, err := f.Open(ctx, src)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", src, err)
	}
	defer rc.Close()
	if !source.IsDigest(kind) {
		kind = source.SHA256
	}
	return source.SumReader(kind, rc)
}

// Set moves one property.
func (p *posix) Set(ctx context.Context, c *applier.Change) error {
	if idDatabase[p.path] {
		// Rewriting the user or group database may move the names the
		// owner and group lookups cached.
		defer dropIDs(p.env)
	}
	if p.stale {
		if err := p.stat(); err != nil {
			return err
		}
		p.stale = false
	}
	var err error
	switch c.Property {
	case "ensure":
		err = p.setEnsure(ctx, c)
	case "content":
		err = p.setContent(ctx, c)
	case "target":
		err = p.makeLink(ctx)
		if err == nil {
			c.Message = fmt.Sprintf("target changed '%v' to '%v'", c.Is, c.Should)
		}
	case "owner", "group":
		err = p.setOwnership(c)
	case "mode":
		err = p.setMode(c)
	default:
		err = fmt.Errorf("%s cannot be set", c.Property)
	}
	p.stale = true
	return err
}

func (p *posix) setEnsure(ctx context.Context, c *applier.Change) error {
	should, _ := c.Should.(string)
	switch should {
	case "absent":
		if err := p.remove(ctx); err != nil {
			return err
		}
		c.Message = "removed"
		return nil
	case "directory":
		if err := p.makeDir(ctx); err != nil {
			return err
		}
	case "link":
		if err := p.makeLink(ctx); err != nil {
			return err
		}
	case "present":
		if p.r.Has("source") {
			m, err := p.sourceMeta(ctx)
			if err != nil {
				return err
			}
			if m.Type == source.TypeDirectory {
				if err := p.makeDir(ctx); err != nil {
					return err
				}
				break
			}
		}
		fallthrough
	case "file":
		ct, _ := p.r.Value("content").(*Content)
		if ct != nil && !ct.Inline && !p.r.Has("source") {
			ct = nil // a recursion's placeholder: an empty file
		}
		if err := p.createFile(ctx, ct); err != nil {
			return err
		}
		if ct != nil {
			c.Message = fmt.Sprintf("defined content as '%s'", ct)
			return nil
		}
	default:
		return fmt.Errorf("invalid ensure value %q", should)
	}
	c.Message = "created"
	return nil
}

// checkParent makes sure the parent directory exists: parents are never created.
func (p *posix) checkParent() error {
	dir := filepath.Dir(p.path)
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot create %s; parent directory %s does not exist", p.path, dir)
		}
		return fmt.Errorf("cannot create %s: %w", p.path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("cannot create %s; %s is not a directory", p.path, dir)
	}
	return nil
}

// clearDirectory removes an existing directory that is to be replaced by
// a file or link: only with force.
func (p *posix) refuseDirectory(what string) error {
	if p.kind == "directory" && !p.r.Bool("force") {
		return fmt.Errorf("not replacing directory %s with a %s; use force to override", p.path, what)
	}
	return nil
}

// wantOwner resolves the desired owner and group (-1 when unmanaged).
func (p *posix) wantOwner() (int, int, error) {
	uid, gid := -1, -1
	if s, ok := p.r.Value("owner").(string); ok {
		id, err := lookupID(p.env, s, false)
		if err != nil {
			return 0, 0, err
		}
		uid = id
	}
	if s, ok := p.r.Value("group").(string); ok {
		id, err := lookupID(p.env, s, true)
		if err != nil {
			return 0, 0, err
		}
		gid = id
	}
	return uid, gid, nil
}

// newFileSpec is how a new or rewritten regular file is written: the
// desired owner and mode, else those of the file it replaces, else 0644.
func (p *posix) newFileSpec() (writeSpec, error) {
	ws := writeSpec{path: p.path, dir: filepath.Dir(p.path), mode: 0o644, uid: -1, gid: -1,
		placeholder: p.r.String("validate_replacement"), exists: p.kind != "absent"}
	if sl := p.r.String("staging_location"); sl != "" {
		ws.dir = sl
	}
	ws.validate = p.r.String("validate_cmd")
	cur := uint32(0o644)
	if p.kind == "file" {
		cur = statMode(p.fi)
		ws.mode = cur
		ws.uid, ws.gid = statOwner(p.fi)
		if ws.uid == os.Geteuid() {
			ws.uid = -1
		}
		if ws.gid == os.Getegid() {
			ws.gid = -1
		}
	} else if p.r.String("source_permissions") != "ignore" && p.meta != nil && p.meta.HasOwner {
		ws.mode = uint32(p.meta.Mode.Perm())
		if os.Geteuid() == 0 {
			ws.uid, ws.gid = p.meta.UID, p.meta.GID
		}
	}
	if p.r.String("source_permissions") == "use" && p.meta != nil && p.meta.HasOwner {
		ws.mode = uint32(p.meta.Mode.Perm())
	}
	if m, ok := p.r.Value("mode").(string); ok {
		bits, err := applyMode(m, cur, false)
		if err != nil {
			return ws, err
		}
		ws.mode = bits
	}
	uid, gid, err := p.wantOwner()
	if err != nil {
		return ws, err
	}
	if uid >= 0 {
		ws.uid = uid
	}
	if gid >= 0 {
		ws.gid = gid
	}
	return ws, nil
}

// createFile makes path a regular file with the desired content (empty
// without content or source).
func (p *posix) createFile(ctx context.Context, c *Content) (err error) {
	if p.kind == "absent" {
		if c != nil && !c.Inline {
			// Before fetching anything.
			if err := p.checkParent(); err != nil {
				return err
			}
		} else {
			// Only when the write fails (saves a stat per new file).
			defer func() {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
					if perr := p.checkParent(); perr != nil {
						err = perr
					}
				}
			}()
		}
	}
	if err := p.refuseDirectory("file"); err != nil {
		return err
	}
	if c != nil && !c.Inline {
		m, err := p.sourceMeta(ctx)
		if err != nil {
			return err
		}
		p.describeSource(c, m)
	}
	if err := p.backup(ctx); err != nil {
		return err
	}
	ws, err := p.newFileSpec()
	if err != nil {
		return err
	}
	if p.kind == "directory" {
		if err := os.RemoveAll(p.path); err != nil {
			return fmt.Errorf("remove directory %s: %w", p.path, err)
		}
	}
	return p.writeContent(ctx, ws, c)
}

// writeContent installs c (nil: empty) with ws, verifying digests.
func (p *posix) writeContent(ctx context.Context, ws writeSpec, c *Content) error {
	if c != nil && !c.Inline && p.meta != nil {
		ws.mtime = sourceMtime(p.meta)
	}
	if p.follow() {
		// links: follow manages what the link points to.
		if real, err := filepath.EvalSymlinks(p.path); err == nil && real != p.path {
			if ws.dir == filepath.Dir(p.path) {
				ws.dir = filepath.Dir(real)
			}
			ws.path = real
		}
	}
	ws.dirs = dirsOf(p.env)
	return writeAtomic(ctx, ws, func(w io.Writer) error {
		if c == nil {
			return nil
		}
		if c.Inline {
			if cv := p.r.String("checksum_value"); cv != "" && source.SumString(p.r.String("checksum"), c.Data) != cv {
				return fmt.Errorf("content does not match checksum_value %s; not installed", source.Format(p.r.String("checksum"), cv))
			}
			_, err := io.WriteString(w, c.Data)
			return err
		}
		m, err := p.sourceMeta(ctx)
		if err != nil {
			return err
		}
		if m.Type == source.TypeDirectory {
			return fmt.Errorf("source %s is a directory", m.Source)
		}
		return p.copySource(ctx, w, m, true)
	})
}

// copySource streams the source into w, checking the digest the metadata
// or checksum_value promised; a mismatch installs nothing.
func (p *posix) copySource(ctx context.Context, w io.Writer, m *source.Metadata, pinned bool) error {
	f, err := p.fetcher()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.httpTimeout())
	defer cancel()
	rc, err := f.Open(ctx, m.Source)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", m.Source, err)
	}
	defer rc.Close()
	kind, want := m.ChecksumType, m.Checksum
	if cv := p.r.String("checksum_value"); cv != "" && pinned {
		kind, want = p.r.String("checksum"), cv
	}
	var h hash.Hash
	if want != "" {
		h = source.NewHash(kind)
	}
	var dst io.Writer = w
	if h != nil {
		if source.IsLite(kind) {
			dst = io.MultiWriter(w, &limitWriter{w: h, n: source.LiteSize})
		} else {
			dst = io.MultiWriter(w, h)
		}
	}
	if _, err := io.Copy(dst, rc); err != nil {
		return fmt.Errorf("copy from %s: %w", m.Source, err)
	}
	if h != nil {
		got := fmt.Sprintf("%x", h.Sum(nil))
		if got != want {
			return fmt.Errorf("content from %s does not match its checksum (%s, expected %s); not installed",
				m.Source, source.Format(kind, got), source.Format(kind, want))
		}
	}
	return nil
}

type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(b []byte) (int, error) {
	if l.n > 0 {
		k := min(len(b), l.n)
		l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}

// setContent rewrites an existing file (or syncs a directory tree).
func (p *posix) setContent(ctx context.Context, c *applier.Change) error {
	ct, _ := c.Should.(*Content)
	if p.kind == "directory" {
		n, err := p.applyTree(ctx)
		if err != nil {
			return err
		}
		c.Message = n
		return nil
	}
	if ct == nil {
		return errors.New("no content to write")
	}
	var old []byte
	showDiff := p.r.Bool("show_diff")
	if showDiff && p.fi != nil && p.fi.Size() <= maxDiffInput {
		old, _ = os.ReadFile(p.path)
	}
	if err := p.backup(ctx); err != nil {
		return err
	}
	ws, err := p.newFileSpec()
	if err != nil {
		return err
	}
	if err := p.writeContent(ctx, ws, ct); err != nil {
		return err
	}
	c.Message = fmt.Sprintf("content changed '%v' to '%s'", c.Is, ct)
	if showDiff {
		var nw []byte
		if ct.Inline {
			nw = []byte(ct.Data)
		} else if fi, err := os.Stat(p.path); err == nil && fi.Size() <= maxDiffInput {
			nw, _ = os.ReadFile(p.path)
		}
		if nw != nil && old != nil && !bytes.Equal(old, nw) {
			// The engine logs the message, diff included, at the resource's level.
			c.Message += "\n" + unifiedDiff(p.path, p.path+" (new)", old, nw)
		}
	}
	return nil
}

func (p *posix) makeDir(ctx context.Context) error {
	if err := p.checkParent(); err != nil {
		return err
	}
	if p.kind != "absent" && p.kind != "directory" {
		if err := p.backup(ctx); err != nil {
			return err
		}
		if err := os.Remove(p.path); err != nil {
			return fmt.Errorf("remove %s %s: %w", p.kind, p.path, err)
		}
	}
	mode := uint32(0o755)
	if m, ok := p.r.Value("mode").(string); ok {
		bits, err := applyMode(m, 0o755, true)
		if err != nil {
			return err
		}
		mode = bits
	}
	if p.kind != "directory" {
		if err := os.Mkdir(p.path, 0o700); err != nil {
			return fmt.Errorf("create directory %s: %w", p.path, err)
		}
		if err := dirsOf(p.env).Mark(filepath.Dir(p.path)); err != nil {
			return err
		}
	}
	uid, gid, err := p.wantOwner()
	if err != nil {
		return err
	}
	if uid >= 0 || gid >= 0 {
		if err := os.Lchown(p.path, uid, gid); err != nil {
			return fmt.Errorf("chown %s: %w", p.path, err)
		}
	}
	if err := chmod(p.path, mode, false); err != nil {
		return err
	}
	if err := p.stat(); err != nil {
		return err
	}
	if recursive(p.r) {
		p.planned = false
		if _, err := p.applyTree(ctx); err != nil {
			return err
		}
	}
	return nil
}

// makeLink points path at target, replacing what is there atomically (a
// new link under a temp name renamed over it).
func (p *posix) makeLink(ctx context.Context) error {
	target := p.r.String("target")
	if target == "" {
		return errors.New("cannot create a symlink without a target")
	}
	if err := p.checkParent(); err != nil {
		return err
	}
	if err := p.refuseDirectory("link"); err != nil {
		return err
	}
	if p.kind == "file" {
		if err := p.backup(ctx); err != nil {
			return err
		}
	}
	dir := filepath.Dir(p.path)
	var tmp string
	for i := 0; ; i++ {
		tmp = filepath.Join(dir, fmt.Sprintf(".%s.pippet-link-%d-%d", filepath.Base(p.path), os.Getpid(), i))
		err := os.Symlink(target, tmp)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return fmt.Errorf("create link %s: %w", p.path, err)
		}
	}
	uid, gid, err := p.wantOwner()
	if err == nil && (uid >= 0 || gid >= 0) {
		err = os.Lchown(tmp, uid, gid)
	}
	if err == nil && p.kind == "directory" {
		err = os.RemoveAll(p.path)
	}
	if err == nil {
		err = os.Rename(tmp, p.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create link %s: %w", p.path, err)
	}
	return dirsOf(p.env).Mark(dir)
}

// remove deletes the file, link or (with force) directory.
func (p *posix) remove(ctx context.Context) error {
	switch p.kind {
	case "absent":
		return nil
	case "directory":
		if !p.r.Bool("force") {
			return fmt.Errorf("not removing directory %s; use force to override", p.path)
		}
		if err := os.RemoveAll(p.path); err != nil {
			return fmt.Errorf("remove directory %s: %w", p.path, err)
		}
		return dirsOf(p.env).Mark(filepath.Dir(p.path))
	}
	if err := p.backup(ctx); err != nil {
		return err
	}
	if err := os.Remove(p.path); err != nil {
		return fmt.Errorf("remove %s: %w", p.path, err)
	}
	return dirsOf(p.env).Mark(filepath.Dir(p.path))
}

func (p *posix) setOwnership(c *applier.Change) error {
	group := c.Property == "group"
	want, _ := c.Should.(string)
	id, err := lookupID(p.env, want, group)
	if err != nil {
		return err
	}
	uid, gid := id, -1
	if group {
		uid, gid = -1, id
	}
	// Lchown unless links follow: a file swapped for a symlink since
	// the lstat must not hand its target to someone else.
	chown := os.Lchown
	if p.follow() {
		chown = os.Chown
	}
	if err := chown(p.path, uid, gid); err != nil {
		return fmt.Errorf("chown %s: %w", p.path, err)
	}
	c.Message = fmt.Sprintf("%s changed '%v' to '%s'", c.Property, c.Is, want)
	return nil
}

func (p *posix) setMode(c *applier.Change) error {
	want, _ := c.Should.(string)
	cur := statMode(p.fi)
	bits, err := applyMode(want, cur, p.kind == "directory")
	if err != nil {
		return err
	}
	if err := chmod(p.path, bits, p.follow()); err != nil {
		return err
	}
	// The message names the mode read before any change of this run (a
	// content change may already have carried the new mode along).
	c.Message = fmt.Sprintf("mode changed '%v' to '%s'", c.Is, formatMode(bits))
	if !isNumericMode(want) {
		c.Message += " (" + want + ")"
	}
	return nil
}

// sourceMtime is the mtime to give a file copied from a source that offers
// only Last-Modified, so the next run can compare it; zero otherwise.
func sourceMtime(m *source.Metadata) time.Time {
	if m.Checksum == "" && !m.ModTime.IsZero() && !m.HasOwner {
		return m.ModTime
	}
	return time.Time{}
}

// chmod sets all twelve mode bits. Unless follow, it goes through a
// descriptor opened with O_NOFOLLOW, so a file swapped for a symlink since
// the lstat is refused rather than its target changed.
func chmod(path string, bits uint32, follow bool) error {
	if follow {
		if err := syscall.Chmod(path, bits); err != nil {
			return &os.PathError{Op: "chmod", Path: path, Err: err}
		}
		return nil
	}
	fd, err := openRead(path, false)
	if err == syscall.EACCES {
		// Not readable by us (not root): fall back to the path.
		if err := syscall.Chmod(path, bits); err != nil {
			return &os.PathError{Op: "chmod", Path: path, Err: err}
		}
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	if err := syscall.Fchmod(fd, bits); err != nil {
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	return nil
}
