package file

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/source"
)

// Comparing. Whether a property is in sync is its attribute's decision
// (Attr.InSync), never Get's: Get reports each current value in a form
// the attribute's InSync can compare cheaply (the bytes of a small file,
// a digest, a time, a mode's bits, an owner's id), and the desired
// *Content says, once Validate and Resolve have settled it, how its
// content is compared (compareBy).

// compareBy is how a file's current content is compared with the desired.
type compareBy uint8

const (
	// byBytes: inline content, byte for byte after a size check (the
	// first source.LiteSize bytes with a lite checksum).
	byBytes compareBy = iota
	// byNothing: never compared (a recursion's placeholder on a file, a
	// source that is a directory, checksum none).
	byNothing
	// byDigest: the file's digest of Content.Kind is Content.Sum.
	byDigest
	// byNewer: checksum mtime or ctime: the file's time is not before
	// the source's (Content.time).
	byNewer
	// byMTime: an HTTP source with only Last-Modified: the file's mtime
	// is the source's, to the second (installs set it).
	byMTime
)

// onDisk is the current value Get reports for content: what it read of
// the file, in the form the desired Content's comparison needs. It prints
// (and encodes in events) as the current checksum, or as the recursion's
// summary for a directory.
type onDisk struct {
	ftype string // the file's kind
	// size is the size compared (at most source.LiteSize with a lite kind).
	size int64
	// data are the file's bytes (byBytes, when size is the desired size):
	// the size lstat reported, or fewer when it shrank since.
	data []byte
	// sumKind is the checksum kind data's digest is printed in, or the
	// time's kind (mtime, ctime) for byNewer and byMTime.
	sumKind string
	// sum is the file's {kind}digest when Get read it (byDigest, or
	// byBytes when the sizes differ: the message needs it).
	sum string
	// mtime is the file's mtime (or ctime) in Unix nanoseconds, for
	// byNewer and byMTime.
	time int64
	// tree: a recursive directory, pending entries out of sync.
	pending int32
	tree    bool
	// noop, when set (noop mode with show_diff), logs the diff a change
	// would make (Puppet shows it from the content property's insync? too).
	noop *posix
}

// String renders the current content as Puppet's messages show it.
func (d *onDisk) String() string {
	switch {
	case d.tree:
		return fmt.Sprintf("%d entries out of sync", d.pending)
	case d.sum != "":
		return d.sum
	case d.data != nil:
		return source.Format(d.sumKind, source.SumString(d.sumKind, string(d.data)))
	case d.time != 0:
		return "{" + d.sumKind + "}" + rubyTime(time.Unix(0, d.time))
	}
	return d.ftype
}

// contentInSync is content's InSync: should is the desired *Content
// (settled by Validate and Resolve), is the *onDisk Get read.
func contentInSync(is, should any) bool {
	c, ok := should.(*Content)
	d, isDisk := is.(*onDisk)
	if !ok || !isDisk {
		return is == should
	}
	if d.ftype == "directory" {
		// A directory's content is its tree when recursing, else nothing.
		return !c.tree || d.pending == 0
	}
	if d.ftype != "file" {
		return true // only a regular file has content to compare
	}
	switch c.by {
	case byBytes:
		want := c.Data
		if source.IsLite(c.Kind) && len(want) > source.LiteSize {
			want = want[:source.LiteSize]
		}
		same := d.size == int64(len(want)) && string(d.data) == want
		if !same && d.noop != nil {
			d.noop.logNoopDiff(context.Background(), []byte(c.Data))
		}
		return same
	case byDigest:
		same := d.sum == source.Format(c.Kind, c.Sum)
		if !same && d.noop != nil && d.noop.diffWanted() == diffRedacted {
			d.noop.logRedactedDiff(context.Background())
		}
		return same
	case byNewer:
		return !time.Unix(0, d.time).Before(c.time)
	case byMTime:
		return time.Unix(0, d.time).Truncate(time.Second).Equal(c.time.Truncate(time.Second))
	}
	return true
}

// resolveContent settles how a source's (or a recursion's) content is
// compared, for Resolve: only for a regular file that stays one, as Get
// compares nothing else.
func (p *posix) resolveContent(ctx context.Context, c *Content) error {
	if c.tree && p.kind == "directory" {
		c.Summary = "all entries in sync"
	}
	if c.Inline {
		return nil // Validate settled it
	}
	c.by = byNothing
	if !p.r.Has("source") || p.kind != "file" {
		return nil
	}
	if ensure, managed := p.r.Get("ensure"); managed && !ensureInSync("file", ensure) {
		return nil // ensure replaces the file: its content is not compared
	}
	kind := p.r.String("checksum")
	m, err := p.sourceMeta(ctx)
	if err != nil {
		return err
	}
	switch {
	case p.r.String("checksum_value") != "":
		c.by, c.Kind, c.Sum = byDigest, kind, p.r.String("checksum_value")
	case m.Type == source.TypeDirectory:
	case m.ChecksumType == source.None:
		// A Puppet Server's {none}: any content is the source's.
	case kind == source.MTime || kind == source.CTime:
		c.by, c.Kind, c.time = byNewer, kind, sourceTime(m, kind)
		c.Sum = rubyTime(c.time)
	case m.Checksum != "":
		c.by, c.Kind, c.Sum = byDigest, m.ChecksumType, m.Checksum
	case !m.ModTime.IsZero():
		c.by, c.Kind, c.time = byMTime, source.MTime, m.ModTime
		c.Sum = rubyTime(m.ModTime)
	default:
		// No usable metadata: fetch and compare digests rather than
		// rewriting the file on every run.
		if !source.IsDigest(kind) {
			kind = source.SHA256
		}
		sum, err := p.fetchSum(ctx, m, kind)
		if err != nil {
			return err
		}
		c.by, c.Kind, c.Sum = byDigest, kind, sum
	}
	return nil
}

// sourceTime is the source's time a time checksum compares: its ctime
// for checksum ctime (when the source says it), else its mtime.
func sourceTime(m *source.Metadata, kind string) time.Time {
	if kind == source.CTime && !m.CTime.IsZero() {
		return m.CTime
	}
	return m.ModTime
}

// modeState is the current value Get reports for mode.
type modeState struct {
	bits      uint32
	dir, link bool
}

func (m *modeState) String() string { return formatMode(m.bits) }

// modeInSync is mode's InSync: the desired mode (numeric or symbolic,
// applied to the current bits) is the current one; a link's own mode is
// not managed.
func modeInSync(is, should any) bool {
	m, ok := is.(*modeState)
	want, isString := should.(string)
	if !ok || !isString {
		return applier.ValuesEqual(is, should, false)
	}
	if m.link {
		return true
	}
	bits, err := applyMode(want, m.bits, m.dir)
	return err == nil && bits == m.bits
}

// idState is the current value Get reports for owner or group: the id,
// printed as its name.
type idState struct {
	id    int
	group bool
	p     *posix // for the id caches in its env, and its reference
}

func (s *idState) String() string { return idName(s.p.env, s.id, s.group) }

// ownerInSync is owner's and group's InSync: the desired name or number
// resolves to the current id. As Puppet, ownership is not managed unless
// running as root: a different owner is then in sync, with a warning.
func ownerInSync(is, should any) bool {
	s, ok := is.(*idState)
	want, isString := should.(string)
	if !ok || !isString {
		return applier.ValuesEqual(is, should, false)
	}
	id, err := lookupID(s.p.env, want, s.group)
	if err != nil {
		return false // Set reports the lookup's error
	}
	if id == s.id {
		return true
	}
	if !s.group && os.Geteuid() != 0 {
		s.p.env.Logger().Warn("/" + s.p.r.Ref() + ": cannot manage ownership unless running as root")
		return true
	}
	return false
}

// logNoopDiff logs, in noop mode, the diff a content change would make
// (the event's message is the engine's; Puppet shows the diff either way).
func (p *posix) logNoopDiff(ctx context.Context, nw []byte) {
	switch p.diffWanted() {
	case diffRedacted:
		p.logRedactedDiff(ctx)
		return
	case diffNone:
		return
	}
	if p.fi == nil || p.fi.Size() > maxDiffInput {
		return
	}
	old, whole, err := readChecked(ctx, p.path, p.fi, p.follow(), maxDiffInput)
	if err != nil || !whole {
		return
	}
	p.logDiff(ctx, old, nw)
}
