package file

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
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/cmdline"
	"github.com/pippet/pippet/applier/command"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/applier/source"
)

// The content pipeline: new content (content, source, a validate
// command) written to a temp file beside the target, checked, and
// renamed over it; the ensure changes (a file, a directory, a link,
// absent). Ownership and mode of what is there are owner.go's.

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
	dirs *dirsync.Syncer
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

// dirsOf is env's dirsync.Syncer; nil (immediate) without an env.
func dirsOf(env *applier.Env) *dirsync.Syncer {
	if env == nil {
		return nil
	}
	return env.Dirs
}

// validateTimeout bounds validate_cmd, as exec's default timeout bounds
// a command: a validator that hangs fails the resource, killed with its
// whole process group, instead of holding the receiver forever.
var validateTimeout = 300 * time.Second

// runValidate runs the validate command with the placeholder replaced by
// the temp file's path, by the rule of package cmdline (through /bin/sh
// only when the string needs a shell), through the shared command runner:
// its output is kept to a bounded tail, it is killed with its process
// group after validateTimeout or when ctx ends. A non-zero exit is an
// error carrying the output's last lines.
func runValidate(ctx context.Context, cmdString, placeholder, path string) error {
	if placeholder == "" {
		placeholder = "%"
	}
	args := cmdline.Argv(strings.ReplaceAll(cmdString, placeholder, path))
	if len(args) == 0 {
		return errors.New("validate_cmd is empty")
	}
	res, err := command.Run(ctx, &command.Cmd{Argv: args, Timeout: validateTimeout})
	if err != nil {
		return fmt.Errorf("validate_cmd %s failed: %w", cmdString, err)
	}
	if res.Code != 0 {
		if msg := command.LastLines(res.Output, 10); msg != "" {
			return fmt.Errorf("validate_cmd %s failed: exit status %d: %s", cmdString, res.Code, msg)
		}
		return fmt.Errorf("validate_cmd %s failed: exit status %d", cmdString, res.Code)
	}
	return nil
}

// describe renders the content a new file was given, for its message:
// a source's by its metadata's checksum (or the pinned checksum_value).
// The desired Content itself is left as Resolve settled it.
func (p *posix) describe(c *Content) string {
	if c.Inline || p.meta == nil {
		return c.String()
	}
	d := *c
	kind := p.r.String("checksum")
	switch m := p.meta; {
	case p.r.String("checksum_value") != "":
		d.Kind, d.Sum = kind, p.r.String("checksum_value")
	case (kind == source.MTime || kind == source.CTime) && !sourceTime(m, kind).IsZero():
		// As Puppet: {ctime}2026-11-26 14:24:26 +0000.
		d.Kind, d.Sum = kind, rubyTime(sourceTime(m, kind))
	case m.Checksum != "":
		d.Kind, d.Sum = m.ChecksumType, m.Checksum
	case !m.ModTime.IsZero():
		d.Kind, d.Sum = source.MTime, rubyTime(m.ModTime)
	case p.copiedSum != "":
		return p.copiedSum // what the copy hashed: the source offered nothing
	}
	return d.String()
}

func (p *posix) setEnsure(ctx context.Context, c *applier.Change) error {
	should, _ := c.Should.(string)
	if specialKinds[should] {
		if p.kind == "absent" {
			return fmt.Errorf("%s does not exist; a %s is never created (ensure: %s only checks the kind)", p.path, should, should)
		}
		return fmt.Errorf("%s is a %s, not a %s; it is not replaced (ensure: %s only checks the kind)", p.path, p.kind, should, should)
	}
	if undeletable[p.kind] && should != "present" {
		return fmt.Errorf("Could not remove files of type %s (%s)", p.kind, p.path)
	}
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
			c.Message = fmt.Sprintf("defined content as '%s'", p.describe(ct))
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
		if _, err := p.sourceMeta(ctx); err != nil {
			return err
		}
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
		if p.diffWanted() == diffShown {
			p.written = &capture{}
			w = io.MultiWriter(w, p.written)
		}
		return p.copySource(ctx, w, m, true)
	})
}

// capture keeps the first maxDiffInput+1 bytes written to it.
type capture struct{ b []byte }

func (c *capture) Write(b []byte) (int, error) {
	if room := maxDiffInput + 1 - len(c.b); room > 0 {
		c.b = append(c.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// copySource streams the source into w, checking the digest the metadata
// or checksum_value promised; a mismatch installs nothing.
func (p *posix) copySource(ctx context.Context, w io.Writer, m *source.Metadata, pinned bool) error {
	f, err := p.fetcher()
	if err != nil {
		return err
	}
	rc, err := f.OpenMeta(ctx, m)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", m.Source, err)
	}
	defer rc.Close()
	if sz, ok := rc.(interface{ Size() int64 }); ok && sz.Size() > 0 {
		// A promised length that cannot fit is refused before the copy.
		var fs syscall.Statfs_t
		dir := filepath.Dir(p.path)
		if syscall.Statfs(dir, &fs) == nil && uint64(sz.Size()) > fs.Bavail*uint64(fs.Bsize) {
			return fmt.Errorf("source %s is %d bytes, more than the %d bytes free in %s; not installed",
				m.Source, sz.Size(), fs.Bavail*uint64(fs.Bsize), dir)
		}
	}
	kind, want := m.ChecksumType, m.Checksum
	if cv := p.r.String("checksum_value"); cv != "" && pinned {
		kind, want = p.r.String("checksum"), cv
	}
	if want == "" {
		// Nothing to check against: hash anyway, so the event names the
		// digest of what was installed.
		kind = p.r.String("checksum")
		if !source.IsDigest(kind) {
			kind = source.SHA256
		}
	}
	h := source.NewHash(kind)
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
		if want == "" {
			if pinned {
				p.copiedSum = source.Format(kind, got)
			}
			return nil
		}
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
		// Reported as the children's events when the walk asks.
		c.Generated = applier.GeneratedObserver(ctx) != nil
		return nil
	}
	if ct == nil {
		return errors.New("no content to write")
	}
	var old []byte
	wanted := p.diffWanted()
	showDiff := wanted == diffShown
	if wanted == diffRedacted {
		p.logRedactedDiff(ctx)
	}
	if showDiff && p.fi != nil && p.fi.Size() <= maxDiffInput {
		b, whole, err := readChecked(ctx, p.path, p.fi, p.follow(), maxDiffInput)
		if err != nil {
			return fmt.Errorf("could not read %s for its diff: %w", p.path, err)
		}
		if whole {
			old = b
		}
	}
	logged := false
	if showDiff && old != nil && ct.Inline && string(old) != ct.Data {
		// Puppet shows the diff as it finds the content out of sync:
		// before the backup and the change line.
		c.Diff = p.logDiff(ctx, old, []byte(ct.Data))
		logged = true
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
	if showDiff && !logged && !ct.Inline && old != nil && p.written != nil && len(p.written.b) <= maxDiffInput {
		// A source's content is known once copied: the new side is what
		// was written (kept while copying), never read back from the
		// path, which someone may have swapped since. Before the change
		// line still.
		if nw := p.written.b; !bytes.Equal(old, nw) {
			c.Diff = p.logDiff(ctx, old, nw)
		}
	}
	return nil
}

// logDiff logs the diff of a content change as Puppet does: a record of
// its own at the resource's level, its source the content property, its
// message a newline and diff -u's output (the old side with the file's
// time, the new side with now), before the change line. It returns the
// diff.
func (p *posix) logDiff(ctx context.Context, old, nw []byte) string {
	var mtime time.Time
	if p.fi != nil {
		mtime = p.fi.ModTime()
	}
	d := unifiedDiffOf(diffSide{name: p.path, time: mtime}, diffSide{name: p.path + " (new)", time: time.Now()}, old, nw)
	p.env.Logger().Log(ctx, p.r.LogLevel, "/"+p.r.Ref()+"/content: \n"+d+"\n")
	return d
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
	uid, gid, err := p.wantOwner()
	if err != nil {
		return err
	}
	if p.kind == "directory" {
		if err := os.RemoveAll(p.path); err != nil {
			return fmt.Errorf("create link %s: %w", p.path, err)
		}
	}
	p.warnTypoTarget(target)
	return atomicfile.Symlink(p.path, target, uid, gid, dirsOf(p.env))
}

// ensureWords are the values of ensure a link target may be a typo of.
var ensureWords = []string{"present", "absent", "file", "directory", "link"}

// warnTypoTarget warns when a link's target looks like a misspelt ensure
// value (ensure: fiel): Puppet, and pippet with it, reads any other word
// as a link target and makes the link; the warning says so, with the
// value that was probably meant.
func (p *posix) warnTypoTarget(target string) {
	if strings.ContainsRune(target, '/') {
		return
	}
	if want := applier.Closest(target, ensureWords); want != "" {
		p.env.Logger().Warn(fmt.Sprintf("/%s/ensure: '%s' is not one of ensure's values, so it is a link target "+
			"(%s -> %s), as in Puppet; did you mean ensure: %s?", p.r.Ref(), target, p.path, target, want))
	}
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

// sourceMtime is the mtime to give a file copied from a source that offers
// only Last-Modified, so the next run can compare it; zero otherwise.
func sourceMtime(m *source.Metadata) time.Time {
	if m.Checksum == "" && !m.ModTime.IsZero() && !m.HasOwner {
		return m.ModTime
	}
	return time.Time{}
}
