package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/source"
)

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

// Get reports the file's current state: its kind (ensure, type), and,
// when ensure leaves it in place, the current values of the managed
// properties in the form their attributes' InSync compares (see
// compare.go). It changes nothing, desired values included.
func (p *posix) Get(ctx context.Context, cur *applier.State) error {
	if err := p.stat(); err != nil {
		return err
	}
	cur.Set("ensure", kindValue(p.kind))
	if p.fi == nil {
		// Nothing else can be read of a missing file: creating it (ensure)
		// brings every property along, and without ensure there is
		// nothing to manage.
		return nil
	}
	cur.Set("type", kindValue(p.kind))
	if p.r.ReadAll() {
		return p.reportAll(ctx, cur)
	}
	if ensure, managed := p.r.Get("ensure"); managed && !ensureInSync(kindValue(p.kind), ensure) {
		// ensure replaces what is there, bringing every property along:
		// the rest is not compared, so not read.
		return nil
	}
	if c := p.content; c != nil { // as Resolve, which the engine calls first, left it
		if err := p.readContent(ctx, c); err != nil {
			return err
		}
		cur.Set("content", &p.disk)
	}
	if p.r.Has("target") && p.kind == "link" {
		now, err := os.Readlink(p.path)
		if err != nil {
			return fmt.Errorf("read link %s: %w", p.path, err)
		}
		cur.Set("target", now)
	}
	uid, gid := statOwner(p.fi)
	if p.r.Has("owner") {
		p.uidNow = idState{id: uid, p: p}
		cur.Set("owner", &p.uidNow)
	}
	if p.r.Has("group") {
		p.gidNow = idState{id: gid, group: true, p: p}
		cur.Set("group", &p.gidNow)
	}
	if p.r.Has("mode") {
		p.modeNow = modeState{bits: statMode(p.fi), dir: p.kind == "directory", link: p.kind == "link"}
		cur.Set("mode", &p.modeNow)
	}
	return nil
}

// readContent reads what the comparison of c needs into p.disk: for
// inline content the file's bytes when its size is the desired size, else
// its digest (a different size is a different content, and the message
// names the digest); for a source its digest or its time; for a recursive
// directory the entries out of sync.
func (p *posix) readContent(ctx context.Context, c *Content) error {
	d := &p.disk
	*d = onDisk{ftype: p.kind}
	if p.kind == "directory" {
		if !c.tree {
			return nil
		}
		plan, err := p.treePlan(ctx)
		if err != nil {
			return err
		}
		d.tree, d.pending = true, int32(len(plan))
		if fn := applier.GeneratedObserver(ctx); fn != nil && p.r.Noop {
			// The children's noop events say it; the directory has none.
			p.noopChildren(ctx, fn, plan)
			d.pending = 0
		}
		return nil
	}
	if p.kind != "file" {
		return nil
	}
	switch c.by {
	case byBytes:
		d.sumKind = c.Kind
		size, want := p.fi.Size(), len(c.Data)
		lite := source.IsLite(c.Kind)
		if lite {
			size, want = min(size, source.LiteSize), min(want, source.LiteSize)
		}
		d.size = size
		if size != int64(want) {
			sum, err := p.currentSum(ctx, c.Kind)
			if err != nil {
				return err
			}
			d.sum = sum
		} else {
			// Just the bytes lstat promised: no read for the end of file.
			d.data = []byte{}
			if want > 0 {
				data, err := readUpTo(p.path, p.fi, p.follow(), make([]byte, want))
				if err != nil {
					return err
				}
				d.data = data
			}
		}
		if p.r.Noop && p.diffWanted() != diffNone {
			d.noop = p
		}
	case byDigest:
		sum, err := p.currentSum(ctx, c.Kind)
		if err != nil {
			return err
		}
		d.sum = sum
		if p.r.Noop && p.diffWanted() == diffRedacted {
			d.noop = p
		}
	case byNewer:
		d.time, d.sumKind = p.fi.ModTime().UnixNano(), c.Kind
		if c.Kind == source.CTime {
			if st, ok := p.fi.Sys().(*syscall.Stat_t); ok {
				d.time = time.Unix(st.Ctim.Sec, st.Ctim.Nsec).UnixNano()
			}
		}
	case byMTime:
		d.time, d.sumKind = p.fi.ModTime().UnixNano(), source.MTime
	}
	return nil
}

// readUpTo reads path from its start into buf until buf is full or the
// file ends, and returns what it read. It uses plain system calls: an
// *os.File would register with the poller for nothing.
func readUpTo(path string, fi fs.FileInfo, follow bool, buf []byte) ([]byte, error) {
	fd, err := openRead(path, follow)
	if err != nil {
		return nil, fmt.Errorf("could not read %s: %w", path, &os.PathError{Op: "open", Path: path, Err: err})
	}
	defer syscall.Close(fd)
	if err := sameFile(fd, fi); err != nil {
		return nil, fmt.Errorf("could not read %s: %w", path, err)
	}
	off := 0
	for off < len(buf) {
		k, err := syscall.Read(fd, buf[off:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("could not read %s: %w", path, &os.PathError{Op: "read", Path: path, Err: err})
		}
		if k == 0 {
			break
		}
		off += k
	}
	return buf[:off], nil
}

func (p *posix) currentSum(ctx context.Context, kind string) (string, error) {
	if !source.IsDigest(kind) {
		kind = source.SHA256
	}
	if p.curSum != "" && strings.HasPrefix(p.curSum, "{"+kind+"}") {
		return p.curSum, nil
	}
	s, err := sumChecked(ctx, kind, p.path, p.fi, p.follow())
	if err != nil {
		return "", fmt.Errorf("could not read %s: %w", p.path, err)
	}
	p.curSum = source.Format(kind, s)
	return p.curSum, nil
}

// errSwapped: the file opened is not the one examined (replaced since).
var errSwapped = errors.New("it changed since it was examined (replaced by another file or a link); not read")

// sameFile reports whether fd is the file fi describes (device, inode).
func sameFile(fd int, fi fs.FileInfo) error {
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Dev != want.Dev || st.Ino != want.Ino || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return errSwapped
	}
	return nil
}

// openChecked opens the regular file at path for reading, without
// following a symlink unless follow, and checks it is the one fi
// describes: every read of an existing file (comparison, diff, backup)
// goes through it, so a file swapped for a link to a secret (or for a
// FIFO) after it was examined is never read. What it returns reads at
// most the size fi reported (a file that grows is read as it was
// examined; a /proc file that reports 0 bytes is not read at all) and
// ends with ctx, a read that waits included (source.Reader).
func openChecked(ctx context.Context, path string, fi fs.FileInfo, follow bool) (io.ReadCloser, error) {
	return openCheckedLimit(ctx, path, fi, follow, fi.Size())
}

// openCheckedLimit is openChecked reading at most limit bytes (< 0: to
// the end, which a backup needs: the file it keeps may have grown since
// it was examined, and is about to be replaced).
func openCheckedLimit(ctx context.Context, path string, fi fs.FileInfo, follow bool, limit int64) (io.ReadCloser, error) {
	f, st, err := source.OpenFile(path, follow)
	if err != nil {
		return nil, err
	}
	if want, ok := fi.Sys().(*syscall.Stat_t); ok && (st.Dev != want.Dev || st.Ino != want.Ino) {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errSwapped}
	}
	return source.Reader(ctx, f, limit), nil
}

// sumChecked is the digest of the file at path, opened by openChecked.
func sumChecked(ctx context.Context, kind, path string, fi fs.FileInfo, follow bool) (string, error) {
	f, err := openChecked(ctx, path, fi, follow)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return source.SumReader(kind, f)
}

// readChecked reads the file at path, opened by openChecked, when it is
// at most limit bytes; ok false (nothing read) when it is longer.
func readChecked(ctx context.Context, path string, fi fs.FileInfo, follow bool, limit int64) ([]byte, bool, error) {
	if fi.Size() > limit {
		return nil, false, nil
	}
	f, err := openChecked(ctx, path, fi, follow)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
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

// SetSourceOptions gives the file type where its sources come from (the
// receiver's --ca-file, --http-timeout, --max-source-size and the Puppet
// Server of puppet.conf): settings no other type reads, kept in
// env.TypeOptions under the type's name. Without them, HTTPS sources are
// verified against the system roots, a request has 60 seconds, a body 4
// GiB, and puppet:// sources have no server.
func SetSourceOptions(env *applier.Env, o source.Options) {
	if env.TypeOptions == nil {
		env.TypeOptions = map[string]any{}
	}
	env.TypeOptions["file"] = o
}

// sourceOptions are the options SetSourceOptions gave env (zero without).
func sourceOptions(env *applier.Env) source.Options {
	if env == nil {
		return source.Options{}
	}
	o, _ := env.TypeOptions["file"].(source.Options)
	return o
}

// fetcherKey is what a fetcher is built from, as a comparable value: the
// cached fetcher serves only options equal to those it was built with.
type fetcherKey struct {
	caFile    string
	timeout   time.Duration
	maxSize   int64
	puppet    source.PuppetOptions
	hasPuppet bool
	static    *source.Static
}

type cachedFetcher struct {
	key fetcherKey
	f   *source.Fetcher
}

// fetcher is the process's source fetcher, kept in the env cache.
func (p *posix) fetcher() (*source.Fetcher, error) {
	o := sourceOptions(p.env)
	key := fetcherKey{caFile: o.CAFile, timeout: o.HTTPTimeout, maxSize: o.MaxSize, hasPuppet: o.Puppet != nil, static: o.Static}
	if o.Puppet != nil {
		key.puppet = *o.Puppet
	}
	if v, ok := cacheGet(p.env, "file:fetcher"); ok {
		if c, ok := v.(*cachedFetcher); ok && c.key == key {
			return c.f, nil
		}
	}
	f, err := source.New(o)
	if err != nil {
		return nil, err
	}
	cachePut(p.env, "file:fetcher", &cachedFetcher{key: key, f: f})
	return f, nil
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
	if m, ok := inlinedMeta(f.Static(), p.r.Title, p.r.Strings("source")); ok {
		p.meta = m
		return p.meta, nil
	}
	q := source.Query{Checksum: p.r.String("checksum"), FollowLinks: true, SourcePermissions: p.r.String("source_permissions")}
	if m, err, ok := p.listedRoot(ctx, f, q); ok {
		p.meta, p.metaErr = m, err
		return p.meta, p.metaErr
	}
	p.meta, p.metaErr = f.First(ctx, p.r.Strings("source"), q)
	if errors.Is(p.metaErr, source.ErrNotFound) && p.r.String("recurse") != "false" {
		if m := searchedRoot(ctx, f, p.r.Strings("source"), q); m != nil {
			p.meta, p.metaErr = m, nil
		}
	}
	return p.meta, p.metaErr
}

// listing is a source's recursive listing asked once (listedRoot) and
// kept for sourceTree; notFound: the server has no such source.
type listing struct {
	entries  []listed
	notFound bool
}

type listed struct {
	rel string
	m   *source.Metadata
}

// listedRoot is the metadata of a recursive copy from puppet:// sources
// taken, as Puppet's agent takes it, from the root entry (".") of the
// sources' recursive listing (file_metadatas), which the recursion asks
// for anyway: no file_metadata request for the root. The listings are
// kept for sourceTree. ok is false when this does not apply, and the
// root is then asked for on its own: no recursion, a source of another
// scheme, a listing that failed, or a root the listing describes
// otherwise than file_metadata would (q: links followed, the
// resource's checksum), which a directory never is (links => manage
// lists a root that is a link as a link; a file's checksum is the
// listing's digest).
func (p *posix) listedRoot(ctx context.Context, f *source.Fetcher, q source.Query) (*source.Metadata, error, bool) {
	srcs := p.r.Strings("source")
	if p.r.String("recurse") == "false" || len(srcs) == 0 {
		return nil, nil, false
	}
	for _, src := range srcs {
		if u, err := source.Parse(src); err != nil || u.Scheme != "puppet" {
			return nil, nil, false
		}
	}
	tq := p.treeQuery()
	sum := q.Checksum
	if sum == "" {
		sum = source.SHA256
	}
	for _, src := range srcs {
		l := &listing{}
		err := f.Walk(ctx, src, tq, p.walkOptions(), func(rel string, m *source.Metadata) error {
			l.entries = append(l.entries, listed{rel, m})
			return nil
		})
		switch {
		case errors.Is(err, source.ErrNotFound):
			l.notFound = true
		case err != nil:
			return nil, nil, false
		}
		if p.listings == nil {
			p.listings = map[string]*listing{}
		}
		p.listings[src] = l
		if l.notFound {
			continue
		}
		for _, e := range l.entries {
			if e.rel != "." {
				continue
			}
			switch {
			case e.m.Type == source.TypeDirectory:
			case e.m.Type == source.TypeFile && tq.Checksum == sum:
			default:
				return nil, nil, false
			}
			root := *e.m
			root.Source = src
			return &root, nil, true
		}
		return nil, nil, false
	}
	return nil, f.NotFound(srcs), true
}

// errRootFound stops a walk once the root entry is seen.
var errRootFound = errors.New("root found")

// searchedRoot is the root entry a search (a recursive listing) gives for
// the first source that has one, for a recursive copy whose sources a
// find does not know: Puppet Server's merging mounts (plugins,
// pluginfacts) answer a find of their root 404 when no module has such a
// directory, and list an empty root when searched. Puppet's recursion
// takes its root from the search, so a recursive copy from them works.
func searchedRoot(ctx context.Context, f *source.Fetcher, srcs []string, q source.Query) *source.Metadata {
	for _, src := range srcs {
		var root *source.Metadata
		err := f.Walk(ctx, src, q, source.WalkOptions{Limit: 1}, func(rel string, m *source.Metadata) error {
			if rel == "." {
				root = m
				return errRootFound
			}
			return nil
		})
		if root != nil && (err == nil || errors.Is(err, errRootFound)) {
			root.Source = src
			return root
		}
	}
	return nil
}

// inlinedMeta is the metadata a static catalog inlined for the File
// titled title, as Puppet's agent takes it: the resource's own, or the
// root of the first of its sources listed for a recursive copy. Nothing
// is asked of the server for it.
func inlinedMeta(st *source.Static, title string, srcs []string) (*source.Metadata, bool) {
	if st == nil {
		return nil, false
	}
	if m, ok := st.File(title); ok {
		return m, true
	}
	for _, src := range srcs {
		list, ok := st.Tree(title, src)
		if !ok {
			return nil, false
		}
		for _, e := range list {
			if e.Rel == "." {
				return e.Meta, true
			}
		}
	}
	return nil, false
}

// fetchSum downloads the source m describes into nothing but a hash.
func (p *posix) fetchSum(ctx context.Context, m *source.Metadata, kind string) (string, error) {
	f, err := p.fetcher()
	if err != nil {
		return "", err
	}
	rc, err := f.OpenMeta(ctx, m)
	if err != nil {
		return "", fmt.Errorf("fetch %s: %w", m.Source, err)
	}
	defer rc.Close()
	if !source.IsDigest(kind) {
		kind = source.SHA256
	}
	return source.SumReader(kind, rc)
}

// reportAll is Get for find and search: every property as `puppet
// resource` prints it: content as the checksum of a regular file's bytes
// (of the checksum kind, sha256 unless the request says otherwise), a
// link's target, owner and group as numbers, mode as four octal digits,
// mtime and ctime as Ruby prints a time. Unlike Puppet, no content is
// reported for a file on a kernel's pseudo file system (/proc, /sys, ...):
// reading /proc/kmsg waits for the kernel's next message and takes it
// from whoever else reads it, /proc/kcore is 128 TiB of memory.
func (p *posix) reportAll(ctx context.Context, cur *applier.State) error {
	if p.kind == "file" && !pseudoFS(p.path) {
		kind := p.r.String("checksum")
		if !source.IsDigest(kind) {
			kind = source.SHA256
		}
		sum, err := sumChecked(ctx, kind, p.path, p.fi, p.follow())
		if err != nil {
			return fmt.Errorf("read %s: %w", p.path, err)
		}
		cur.Set("content", source.Format(kind, sum))
	}
	if p.kind == "link" {
		now, err := os.Readlink(p.path)
		if err != nil {
			return fmt.Errorf("read link %s: %w", p.path, err)
		}
		cur.Set("target", now)
	}
	uid, gid := statOwner(p.fi)
	cur.Set("owner", int64(uid))
	cur.Set("group", int64(gid))
	cur.Set("mode", formatMode(statMode(p.fi)))
	cur.Set("mtime", rubyTime(p.fi.ModTime()))
	if st, ok := p.fi.Sys().(*syscall.Stat_t); ok {
		cur.Set("ctime", rubyTime(time.Unix(st.Ctim.Sec, st.Ctim.Nsec)))
	}
	return nil
}

// rubyTime is a time as Ruby's Time#to_s writes it, in the process's zone.
func rubyTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 -0700") }

// pseudoFSMagic are the statfs(2) magic numbers of the kernel's pseudo
// file systems, whose "regular" files are interfaces, not content.
var pseudoFSMagic = map[int64]bool{
	0x9fa0:     true, // proc
	0x62656572: true, // sysfs
	0x64626720: true, // debugfs
	0x74726163: true, // tracefs
	0x73636673: true, // securityfs
	0x27e0eb:   true, // cgroup
	0x63677270: true, // cgroup2
	0x62656570: true, // configfs
	0xde5e81e4: true, // efivarfs
	0xcafe4a11: true, // bpf
	0x6165676c: true, // pstore
}

// pseudoFS reports whether path is on one of the kernel's pseudo file systems.
func pseudoFS(path string) bool {
	var fs syscall.Statfs_t
	for {
		err := syscall.Statfs(path, &fs)
		if err == syscall.EINTR {
			continue
		}
		return err == nil && pseudoFSMagic[int64(fs.Type)]
	}
}
