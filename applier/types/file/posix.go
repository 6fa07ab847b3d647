package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

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
	Instances: instances,
}

// instances lists a directory's entries, which `puppet resource file`
// cannot: the search gives the directory as `path` ({op: search, type:
// file, params: {path: /etc}}), and each entry (not recursing, in name
// order, titled by its full path) is reported as find reports it. Without
// a path there is nothing to list: the whole file system is not an answer.
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	dir := scope.Name()
	if dir == "" {
		return errors.New("give the directory to list as path (search of file lists one directory's entries)")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := &posix{r: scope, env: env, path: filepath.Join(dir, e.Name())}
		if err := p.stat(); err != nil {
			return err
		}
		if p.fi == nil {
			continue // gone since the directory was read
		}
		cur := add(p.path)
		cur.Set("ensure", kindValue(p.kind))
		cur.Set("type", kindValue(p.kind))
		if err := p.reportAll(ctx, cur); err != nil {
			return err
		}
	}
	return nil
}

// posix is the provider bound to one file resource. Resolve settles what
// the source decides; Get records what it read (the lstat, the current
// values it reports, the recursion plan) for InSync and Set.
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
	// listings are the recursive listings of the sources asked for the
	// root's metadata (listedRoot), by source, for sourceTree.
	listings map[string]*listing
	curSum   string // the current content's {kind}digest once computed
	plan     []treeAction
	planned  bool
	// shadowed are the entries below a directory the plan purges: gone
	// with it, each a child Puppet reports (in noop, as to be removed).
	shadowed []treeAction

	// The current values Get reports for content, mode, owner and group:
	// kept here so that reporting them allocates nothing.
	disk           onDisk
	modeNow        modeState
	uidNow, gidNow idState
	// content is the desired *Content as Resolve left it (nil: none).
	content *Content
	// written holds the start of the source content Set installed, for
	// its diff (show_diff).
	written *capture
	// copiedSum is the {kind}digest of the source content Set installed,
	// when the source offered no checksum (for the event's message).
	copiedSum string
	// copied says which of mode, owner and group copySourcePermissions
	// took from the source (the top directory's, for a recursion): they
	// are not the request's, so a recursion's entries take their own
	// source's instead.
	copied struct{ mode, owner, group bool }
}

// properties in the order the engine syncs them (ensure first).
var properties = []string{"ensure", "content", "target", "owner", "group", "mode"}

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
		p.copied.mode = true
	}
	if os.Geteuid() == 0 {
		if !p.r.Has("owner") {
			p.r.Set("owner", strconv.Itoa(m.UID))
			p.copied.owner = true
		}
		if !p.r.Has("group") {
			p.r.Set("group", strconv.Itoa(m.GID))
			p.copied.group = true
		}
	}
	return nil
}

func (p *posix) follow() bool { return p.r.String("links") == "follow" }

// Resolve settles the desired values that depend on the system, before
// Get reads the current state:
//   - replace: false on a file that exists leaves its kind, content and
//     link target unmanaged (Puppet: in sync whatever they are; a
//     recursion still creates the entries that are missing);
//   - a source is always asked for its metadata (so a missing one fails
//     the resource, in noop too), and without ensure its kind is the
//     desired kind (as Puppet's source does on retrieve);
//   - source_permissions copies the source's mode, owner and group;
//   - a source's content is described by what will be compared: its
//     checksum (from checksum_value, the source's metadata, or a download
//     when a server offers none), or its time (checksum mtime or ctime, or
//     an HTTP source with only Last-Modified).
//
// Inline content needs none of this (Validate settled how it compares),
// so an inline file costs Resolve nothing.
func (p *posix) Resolve(ctx context.Context) error {
	c, _ := p.r.Value("content").(*Content)
	p.content = c
	hasSource := p.r.Given("source")
	if !hasSource && p.r.Bool("replace") && (c == nil || !c.tree) {
		return nil
	}
	if err := p.stat(); err != nil {
		return err
	}
	if !p.r.Bool("replace") && p.kind != "absent" {
		p.r.Unset("ensure")
		p.r.Unset("target")
		if c != nil && !(c.tree && p.kind == "directory") {
			// (A recursion still creates what is missing below.)
			p.r.Unset("content")
			c, p.content = nil, nil
		}
	}
	if hasSource {
		// The source is always asked, as Puppet's retrieve does, whatever
		// ensure says and in noop too: a missing source or a server that
		// cannot be reached fails the resource rather than answering a
		// clean noop (or a clean "in sync") that a real run would not.
		m, err := p.sourceMeta(ctx)
		if err != nil {
			return err
		}
		if p.r.Has("ensure") && !p.r.Given("ensure") && p.r.String("ensure") == "present" &&
			(m.Type == source.TypeFile || m.Type == source.TypeDirectory) {
			p.r.Set("ensure", m.Type)
		}
	}
	if err := p.copySourcePermissions(ctx); err != nil {
		return err
	}
	if c != nil {
		return p.resolveContent(ctx, c)
	}
	return nil
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
