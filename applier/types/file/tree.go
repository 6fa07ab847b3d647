package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/applier/dirsync"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/protocol"
)

// Recursion. Puppet makes one child resource per entry below a recursive
// directory; pippet answers for one resource per request, so the whole
// tree is the directory's `content`: Get plans what every entry needs
// (created, replaced, retargeted, chowned, chmodded or purged) and the
// plan's length is the "current" value; Set carries the plan out and its
// message lists what it did.

// treeAction is what one entry below the directory needs.
type treeAction struct {
	rel   string
	want  *source.Metadata // from the source; nil for a local-only entry
	have  fs.FileInfo      // nil: missing
	ops   []string         // create, replace, content, target, owner, group, mode, purge
	purge bool
	// fail: the entry could not be planned (a directory in the way
	// without force, a file that cannot be read); Set reports it after
	// syncing the others, as Puppet fails one child and syncs the rest.
	fail error
	// What the entry had and was given, for the TreeChanges: its
	// content's digest (hex, of want's checksum kind) when it was
	// compared, its owner and mode before and after when changed.
	sum               string
	uidFrom, uidTo    int
	gidFrom, gidTo    int
	modeFrom, modeTo  uint32
	chowned, chmodded bool
}

// TreeChange is one change a recursion made, or failed to make, to an
// entry below its directory, worded as Puppet words the event of the
// File resource it generates for that entry:
// /File[PATH]/PROPERTY: MESSAGE ("ensure: defined content as
// '{sha256}...'", "content: content changed '{sha256}...' to
// '{sha256}...'", "ensure: removed", "mode: mode changed '0644' to
// '0755'").
type TreeChange struct {
	// Path is the entry's full path.
	Path string
	// Property is ensure, content, target, owner, group or mode.
	Property string
	// Message says what changed (or, with Err, what was attempted).
	Message string
	// Err is why the change failed; nil when it was made.
	Err error
	// Listing: the source could not be listed, so no entry was
	// considered (Puppet's failed eval_generate): Path is the directory,
	// Err why.
	Listing bool
}

type treeObserverKey struct{}

// WithTreeObserver returns a context under which a recursive file's Set
// reports to fn each change it makes to an entry below its directory,
// in the order made: what Puppet reports as the events of the child
// resources it generates, which the resource's own event (a count and a
// list) sums up. The agent's pluginsync logs them as Puppet does.
func WithTreeObserver(ctx context.Context, fn func(TreeChange)) context.Context {
	return context.WithValue(ctx, treeObserverKey{}, fn)
}

// observe reports the changes of one carried-out (or failed) entry: to
// the tree observer, and as the events of the child File to the run's
// generated observer, each line logged as Puppet logs the child's.
func observe(ctx context.Context, p *posix, full string, a *treeAction, err error) {
	tree, _ := ctx.Value(treeObserverKey{}).(func(TreeChange))
	gen := applier.GeneratedObserver(ctx)
	if tree == nil && gen == nil {
		return
	}
	fn := func(c TreeChange) {
		if tree != nil {
			tree(c)
		}
		if gen != nil {
			gen(childEvent(ctx, p, a, c))
		}
	}
	if err != nil {
		prop, msg := "ensure", "change failed"
		switch {
		case a.purge:
			msg = "remove failed"
		case len(a.ops) > 0 && a.ops[0] != "create" && a.ops[0] != "replace" && a.ops[0] != "fail":
			prop, msg = a.ops[0], a.ops[0]+" change failed"
		case a.want != nil:
			msg = fmt.Sprintf("change from '%s' to '%s' failed", ftype(a.have), a.want.Type)
		}
		fn(TreeChange{Path: full, Property: prop, Message: msg, Err: err})
		return
	}
	if a.purge {
		fn(TreeChange{Path: full, Property: "ensure", Message: "removed"})
		return
	}
	w := a.want
	sum := func(hex string) string { return "{" + w.ChecksumType + "}" + hex }
	for _, op := range a.ops {
		switch op {
		case "create":
			msg := "created"
			if w.Type == source.TypeFile && w.Checksum != "" {
				msg = "defined content as '" + sum(w.Checksum) + "'"
			}
			fn(TreeChange{Path: full, Property: "ensure", Message: msg})
		case "replace":
			fn(TreeChange{Path: full, Property: "ensure", Message: fmt.Sprintf("ensure changed '%s' to '%s'", ftype(a.have), w.Type)})
		case "content":
			fn(TreeChange{Path: full, Property: "content", Message: fmt.Sprintf("content changed '%s' to '%s'", sum(a.sum), sum(w.Checksum))})
		case "target":
			fn(TreeChange{Path: full, Property: "target", Message: fmt.Sprintf("target changed '%s' to '%s'", a.sum, w.Target)})
		}
	}
	if a.chowned && a.uidTo >= 0 && a.uidTo != a.uidFrom {
		fn(TreeChange{Path: full, Property: "owner", Message: fmt.Sprintf("owner changed '%d' to '%d'", a.uidFrom, a.uidTo)})
	}
	if a.chowned && a.gidTo >= 0 && a.gidTo != a.gidFrom {
		fn(TreeChange{Path: full, Property: "group", Message: fmt.Sprintf("group changed '%d' to '%d'", a.gidFrom, a.gidTo)})
	}
	if a.chmodded {
		fn(TreeChange{Path: full, Property: "mode", Message: fmt.Sprintf("mode changed '%s' to '%s'", formatMode(a.modeFrom), formatMode(a.modeTo))})
	}
}

// childEvent is a tree change as the child File's event, logged as
// Puppet logs it (/File[PATH]/PROPERTY: MESSAGE; a failure at error).
func childEvent(ctx context.Context, p *posix, a *treeAction, c TreeChange) applier.Generated {
	ev := &protocol.Event{Property: c.Property, Message: c.Message, Status: protocol.StatusSuccess}
	switch c.Property {
	case "ensure":
		ev.Previous = "absent"
		if a.have != nil {
			ev.Previous = ftype(a.have)
		}
		if a.purge {
			ev.Desired = "absent"
		} else if a.want != nil {
			ev.Desired = a.want.Type
		}
	case "content":
		if a.want != nil {
			ev.Previous, ev.Desired = "{"+a.want.ChecksumType+"}"+a.sum, "{"+a.want.ChecksumType+"}"+a.want.Checksum
		}
	case "target":
		if a.want != nil {
			ev.Previous, ev.Desired = a.sum, a.want.Target
		}
	case "owner":
		ev.Previous, ev.Desired = int64(a.uidFrom), int64(a.uidTo)
	case "group":
		ev.Previous, ev.Desired = int64(a.gidFrom), int64(a.gidTo)
	case "mode":
		ev.Previous, ev.Desired = formatMode(a.modeFrom), formatMode(a.modeTo)
	}
	line := "/File[" + c.Path + "]/" + c.Property + ": "
	if c.Err != nil {
		ev.Status = protocol.StatusFailure
		ev.Message = c.Message + ": " + c.Err.Error()
		p.env.Logger().Error(line + ev.Message)
	} else {
		p.env.Logger().Log(ctx, p.r.LogLevel, line+ev.Message)
	}
	return applier.Generated{Type: "file", Title: c.Path, Event: ev}
}

// softMaxFiles is Puppet's soft limit: with max_files 0 a recursion over
// more entries than this is logged as a warning.
const softMaxFiles = 1000

func (p *posix) walkOptions() source.WalkOptions {
	o := source.WalkOptions{Ignore: p.r.Strings("ignore")}
	if n, ok := p.r.Int("recurselimit"); ok {
		o.Limit = int(n)
	}
	if n, ok := p.r.Int("max_files"); ok && n > 0 {
		o.MaxFiles = int(n)
	}
	return o
}

// treeQuery is what a recursive listing of the sources asks: the
// resource's links, a digest to compare the entries with (sha256 unless
// checksum names another digest), its source_permissions.
func (p *posix) treeQuery() source.Query {
	q := source.Query{Checksum: p.r.String("checksum"), FollowLinks: p.follow(), SourcePermissions: p.r.String("source_permissions")}
	if !source.IsDigest(q.Checksum) {
		q.Checksum = source.SHA256
	}
	return q
}

// sourceTree merges the source trees (the first that exists, or all with
// sourceselect: all; the earliest source wins for each path).
func (p *posix) sourceTree(ctx context.Context) (map[string]*source.Metadata, []string, error) {
	f, err := p.fetcher()
	if err != nil {
		return nil, nil, err
	}
	want := map[string]*source.Metadata{}
	var order []string
	found := false
	q := p.treeQuery()
	for _, src := range p.r.Strings("source") {
		isDir := true
		walk := func(fn source.WalkFunc) error { return f.Walk(ctx, src, q, p.walkOptions(), fn) }
		if l, ok := p.listings[src]; ok {
			// Listed already, for the root's metadata (listedRoot).
			walk = func(fn source.WalkFunc) error {
				if l.notFound {
					return fmt.Errorf("%s: %w", src, source.ErrNotFound)
				}
				for _, e := range l.entries {
					if err := fn(e.rel, e.m); err != nil {
						return err
					}
				}
				return nil
			}
		}
		if list, ok := f.Static().Tree(p.r.Title, src); ok {
			// Listed by the server in the static catalog: not asked again.
			walk = func(fn source.WalkFunc) error {
				if len(list) == 0 {
					return fmt.Errorf("%s: not in the catalog's inlined metadata: %w", src, source.ErrNotFound)
				}
				for _, e := range list {
					if err := fn(e.Rel, e.Meta); err != nil {
						return err
					}
				}
				return nil
			}
		}
		err := walk(func(rel string, m *source.Metadata) error {
			m.Source = source.Join(src, rel)
			if rel == "." {
				isDir = m.Type == source.TypeDirectory
				return nil
			}
			if _, dup := want[rel]; !dup {
				want[rel] = m
				order = append(order, rel)
			}
			return nil
		})
		if errors.Is(err, source.ErrNotFound) {
			continue
		}
		if err != nil {
			if fn, _ := ctx.Value(treeObserverKey{}).(func(TreeChange)); fn != nil {
				fn(TreeChange{Path: p.path, Listing: true, Err: err})
			}
			return nil, nil, fmt.Errorf("could not walk source %s: %w", src, err)
		}
		if !isDir {
			return nil, nil, fmt.Errorf("source %s is not a directory; it cannot be copied recursively", src)
		}
		found = true
		if p.r.String("sourceselect") != "all" {
			break
		}
	}
	if !found {
		return nil, nil, f.NotFound(p.r.Strings("source"))
	}
	sort.Strings(order)
	return want, order, nil
}

// localTree lists what is below the directory now (lstat; ignore and
// recurselimit apply).
func (p *posix) localTree(ctx context.Context) (map[string]fs.FileInfo, []string, error) {
	have := map[string]fs.FileInfo{}
	var order []string
	opts := p.walkOptions()
	var walk func(dir, rel string, depth int) error
	walk = func(dir, rel string, depth int) error {
		if opts.Limit > 0 && depth > opts.Limit {
			return nil
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("read directory %s: %w", dir, err)
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			if source.Ignored(e.Name(), opts.Ignore) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			r := path.Join(rel, e.Name())
			have[r] = fi
			order = append(order, r)
			if opts.MaxFiles > 0 && len(order) > opts.MaxFiles {
				return fmt.Errorf("%s holds more than max_files (%d) entries: %w", p.path, opts.MaxFiles, source.ErrTooManyFiles)
			}
			if fi.IsDir() {
				if err := walk(filepath.Join(dir, e.Name()), r, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if p.kind == "directory" {
		if err := walk(p.path, "", 1); err != nil {
			return nil, nil, err
		}
	}
	return have, order, nil
}

// treePlan computes (once) what the entries below the directory need.
func (p *posix) treePlan(ctx context.Context) ([]treeAction, error) {
	if p.planned {
		return p.plan, nil
	}
	var want map[string]*source.Metadata
	var wantOrder []string
	if p.r.Has("source") {
		var err error
		if want, wantOrder, err = p.sourceTree(ctx); err != nil {
			return nil, err
		}
	}
	have, haveOrder, err := p.localTree(ctx)
	if err != nil {
		return nil, err
	}
	n, _ := p.r.Int("max_files")
	if n > 0 && len(want) > int(n) {
		return nil, fmt.Errorf("the source holds %d entries, more than max_files (%d)", len(want), n)
	}
	if entries := max(len(want), len(have)); n == 0 && entries > softMaxFiles {
		p.env.Logger().Warn(fmt.Sprintf("%s: the tree holds %d entries, more than the soft limit of %d; "+
			"set max_files to bound it, or to -1 to silence this warning", p.r.Ref(), entries, softMaxFiles))
	}
	// An entry another resource of the run manages is that resource's,
	// and so is everything below it: recursion neither copies, chowns nor
	// purges it (Puppet makes no child resource where the catalog has one,
	// and drops the children below a more specific File of the catalog:
	// remove_less_specific_files). The run holds what its resources
	// generate too (a concat_file's File).
	run := applier.RunFrom(ctx)
	managed := func(rel string) bool {
		if run == nil {
			return false
		}
		for r := rel; r != "." && r != "/" && r != ""; r = path.Dir(r) {
			if run.Managed("file", filepath.Join(p.path, r)) {
				return true
			}
		}
		return false
	}
	var plan, shadowed []treeAction
	// children are the entries Puppet makes a child File of (reported to
	// the run's generated observer, changed or not).
	var children []string
	// blocked are the entries of the destination that stay something
	// other than a real directory (a link, a file kept by replace: false):
	// what the source has below one is not copied, never through it.
	var blocked []string
	for _, rel := range wantOrder {
		if isBelow(rel, blocked) || managed(rel) {
			continue
		}
		children = append(children, rel)
		a := treeAction{rel: rel, want: want[rel], have: have[rel]}
		if err := p.planEntry(ctx, &a); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			a.fail, a.ops = err, []string{"fail"}
			plan = append(plan, a)
			if a.want.Type == source.TypeDirectory {
				blocked = append(blocked, rel)
			}
			continue
		}
		if a.want.Type == source.TypeDirectory && a.have != nil && !a.have.IsDir() &&
			(len(a.ops) == 0 || a.ops[0] != "replace") {
			blocked = append(blocked, rel)
			p.env.Logger().Warn(fmt.Sprintf("/%s: %s is not a directory (%s); the source's entries below it are not copied",
				p.r.Ref(), filepath.Join(p.path, rel), ftype(a.have)))
		}
		if len(a.ops) > 0 {
			plan = append(plan, a)
		}
	}
	if p.r.String("recurse") == "true" {
		for _, rel := range haveOrder {
			if _, ok := want[rel]; ok || managed(rel) {
				continue
			}
			children = append(children, rel)
			a := treeAction{rel: rel, have: have[rel]}
			if p.r.Bool("purge") {
				if under(rel, plan) {
					// A purged directory takes its entries with it.
					shadowed = append(shadowed, treeAction{rel: rel, have: a.have, purge: true, ops: []string{"purge"}})
					continue
				}
				if a.have.IsDir() && !p.r.Bool("force") {
					// Purge leaves directories without force; a walk that
					// reports the children says so on the child, as Puppet
					// does (and reports it unchanged, where Puppet reports
					// it removed).
					if applier.GeneratedObserver(ctx) != nil {
						p.env.Logger().Log(ctx, applier.LevelNotice, "/File["+filepath.Join(p.path, rel)+"]: Not removing directory; use 'force' to override")
					}
					continue
				}
				a.purge, a.ops = true, []string{"purge"}
			} else if err := p.planAttrs(&a); err != nil {
				a.fail, a.ops = err, []string{"fail"}
			}
			if len(a.ops) > 0 {
				plan = append(plan, a)
			}
		}
	}
	p.plan, p.planned, p.shadowed = plan, true, shadowed
	if fn := applier.GeneratedObserver(ctx); fn != nil {
		sort.Strings(children)
		for _, rel := range children {
			fn(applier.Generated{Type: "file", Title: filepath.Join(p.path, rel)})
		}
	}
	return plan, nil
}

// noopChildren reports, in a noop run whose walk reports generated
// resources, the events each child would have had: Puppet's noop events
// of the child Files ("current_value 'file', should be 'absent' (noop)").
func (p *posix) noopChildren(ctx context.Context, fn func(applier.Generated), plan []treeAction) {
	all := append(append([]treeAction{}, plan...), p.shadowed...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].rel < all[j].rel })
	for i := range all {
		a := &all[i]
		full := filepath.Join(p.path, a.rel)
		ev := func(prop string, is, should any) {
			msg := fmt.Sprintf("current_value '%v', should be '%v' (noop)", is, should)
			fn(applier.Generated{Type: "file", Title: full, Event: &protocol.Event{Property: prop, Previous: is, Desired: should,
				Status: protocol.StatusNoop, Message: msg}})
			p.env.Logger().Log(ctx, p.r.LogLevel, "/File["+full+"]/"+prop+": "+msg)
		}
		if a.purge {
			ev("ensure", ftype(a.have), "absent")
			continue
		}
		if a.fail != nil || a.want == nil {
			continue
		}
		for _, op := range a.ops {
			switch op {
			case "create":
				ev("ensure", "absent", a.want.Type)
			case "replace":
				ev("ensure", ftype(a.have), a.want.Type)
			case "content":
				ev("content", "{"+a.want.ChecksumType+"}"+a.sum, "{"+a.want.ChecksumType+"}"+a.want.Checksum)
			case "target":
				ev("target", a.sum, a.want.Target)
			}
		}
	}
}

// isBelow reports whether rel is below one of dirs.
func isBelow(rel string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// realParents checks, just before an entry below the directory is
// written, that every directory between the managed one and the entry
// is a real directory, not a link swapped in since the plan was made.
func (p *posix) realParents(rel string) error {
	dir := p.path
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("not writing through %s: it is a %s, not a directory", dir, ftype(fi))
		}
	}
	return nil
}

func under(rel string, plan []treeAction) bool {
	for _, a := range plan {
		if a.purge && strings.HasPrefix(rel, a.rel+"/") {
			return true
		}
	}
	return false
}

// planEntry compares one source entry with what is there.
func (p *posix) planEntry(ctx context.Context, a *treeAction) error {
	w, h := a.want, a.have
	if h == nil {
		a.ops = []string{"create"}
		return nil
	}
	kind := ftype(h)
	if kind != w.Type {
		if !p.r.Bool("replace") {
			return p.planAttrs(a)
		}
		if kind == "directory" && !p.r.Bool("force") {
			return fmt.Errorf("not replacing directory %s with a %s; use force to override", filepath.Join(p.path, a.rel), w.Type)
		}
		a.ops = []string{"replace"}
		return nil
	}
	switch w.Type {
	case source.TypeFile:
		if p.r.Bool("replace") && w.Checksum != "" {
			cur, err := sumChecked(ctx, w.ChecksumType, filepath.Join(p.path, a.rel), h, false)
			if err != nil {
				return err
			}
			if cur != w.Checksum {
				a.ops = append(a.ops, "content")
				a.sum = cur
			}
		}
	case source.TypeLink:
		cur, err := os.Readlink(filepath.Join(p.path, a.rel))
		if err != nil {
			return err
		}
		if cur != w.Target && p.r.Bool("replace") {
			a.ops = append(a.ops, "target")
			a.sum = cur
		}
	}
	return p.planAttrs(a)
}

// entryPerms reports whether an entry takes its own source's
// permissions: source_permissions use, or use_when_creating for an entry
// that does not exist yet, with a source that has permissions.
func (p *posix) entryPerms(a *treeAction) bool {
	if a.want == nil || !a.want.HasOwner {
		return false
	}
	switch p.r.String("source_permissions") {
	case "use":
		return true
	case "use_when_creating":
		return a.have == nil
	}
	return false
}

// childMode is the mode an entry should have: the request's mode, or
// with source_permissions its own source's (never the top directory's,
// which copySourcePermissions made the resource's).
func (p *posix) childMode(a *treeAction) (string, bool) {
	if m, ok := p.r.Value("mode").(string); ok && !p.copied.mode {
		return m, true
	}
	if a.want != nil && a.want.Type != source.TypeLink && p.entryPerms(a) {
		return formatMode(uint32(a.want.Mode.Perm()) | modeSetid(a.want.Mode)), true
	}
	return "", false
}

// childOwner is the owner and group an entry should have (-1: not
// managed): the request's, or as root with source_permissions its own
// source's.
func (p *posix) childOwner(a *treeAction) (int, int, error) {
	uid, gid, err := p.wantOwner()
	if err != nil {
		return 0, 0, err
	}
	own := os.Geteuid() == 0 && p.entryPerms(a)
	if p.copied.owner || !p.r.Has("owner") {
		uid = -1
		if own {
			uid = a.want.UID
		}
	}
	if p.copied.group || !p.r.Has("group") {
		gid = -1
		if own {
			gid = a.want.GID
		}
	}
	return uid, gid, nil
}

func modeSetid(m fs.FileMode) uint32 {
	var v uint32
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// planAttrs adds owner, group and mode changes an existing entry needs.
func (p *posix) planAttrs(a *treeAction) error {
	h := a.have
	uid, gid, err := p.childOwner(a)
	if err != nil {
		return err
	}
	cu, cg := statOwner(h)
	if uid >= 0 && uid != cu {
		a.ops = append(a.ops, "owner")
	}
	if gid >= 0 && gid != cg {
		a.ops = append(a.ops, "group")
	}
	if m, ok := p.childMode(a); ok && h.Mode()&fs.ModeSymlink == 0 {
		cur := statMode(h)
		bits, err := applyMode(m, cur, h.IsDir())
		if err != nil {
			return err
		}
		if bits != cur {
			a.ops = append(a.ops, "mode")
		}
	}
	return nil
}

// applyTree carries out the plan and describes what it did. The
// directories whose entries it changes are marked in the env's dirsync.Syncer;
// in immediate mode each is fsynced once, after the last entry (and also
// when an entry fails).
func (p *posix) applyTree(ctx context.Context) (_ string, err error) {
	plan, err := p.treePlan(ctx)
	if err != nil {
		return "", err
	}
	dirs := dirsOf(p.env)
	if !dirs.Deferred() {
		dirs = dirsync.New(dirsync.Options{Deferred: true})
		defer func() {
			if _, ferr := dirs.Flush(context.WithoutCancel(ctx)); ferr != nil && err == nil {
				err = ferr
			}
		}()
	}
	var done, failed []string
	var firstErr error
	for i := range plan {
		a := &plan[i]
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("stopped after %d entries: %w", len(done), err)
		}
		full := filepath.Join(p.path, a.rel)
		err := a.fail
		if err == nil {
			err = p.applyEntry(ctx, a, full, dirs)
		}
		observe(ctx, p, full, a, err)
		if err != nil {
			// One entry failing does not stop the others (Puppet fails
			// that child and syncs the rest); the resource fails.
			failed = append(failed, fmt.Sprintf("%s: %v", full, err))
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		verb := strings.Join(a.ops, ", ")
		switch {
		case a.purge:
			verb = "removed"
		case a.ops[0] == "create":
			verb = "created"
		}
		done = append(done, a.rel+" "+verb)
	}
	p.planned = false
	msg := fmt.Sprintf("synced %d entries", len(done))
	if len(done) > 0 {
		msg += ": " + capList(done)
	}
	if len(failed) > 0 && applier.GeneratedObserver(ctx) == nil {
		// Under a walk that reports the children, the failures are theirs
		// (Puppet fails the child, not the directory).
		return "", &treeError{msg: fmt.Sprintf("%s; %d failed: %s", msg, len(failed), capList(failed)), err: firstErr}
	}
	return msg, nil
}

// capList joins a recursion's entries for a message, cut at 2000 bytes.
func capList(l []string) string {
	list := strings.Join(l, "; ")
	if len(list) > 2000 {
		list = list[:2000] + "..."
	}
	return list
}

// treeError is a recursion in which some entries failed: what was synced
// and what failed, wrapping the first failure.
type treeError struct {
	msg string
	err error
}

func (e *treeError) Error() string { return e.msg }
func (e *treeError) Unwrap() error { return e.err }

func (p *posix) applyEntry(ctx context.Context, a *treeAction, full string, dirs *dirsync.Syncer) error {
	if err := p.realParents(a.rel); err != nil {
		return err
	}
	if a.have != nil && undeletable[ftype(a.have)] && (a.purge || a.ops[0] == "replace") {
		return fmt.Errorf("Could not remove files of type %s", ftype(a.have))
	}
	if a.purge {
		if a.have.Mode().IsRegular() {
			if err := backupFile(ctx, p.env, p.r.String("backup"), full, a.have, false); err != nil {
				return err
			}
		}
		if err := os.RemoveAll(full); err != nil {
			return err
		}
		return dirs.Mark(filepath.Dir(full))
	}
	uid, gid, err := p.childOwner(a)
	if err != nil {
		return err
	}
	if a.ops[0] == "create" || a.ops[0] == "replace" || a.ops[0] == "content" || a.ops[0] == "target" {
		if a.have != nil && a.have.Mode().IsRegular() {
			if err := backupFile(ctx, p.env, p.r.String("backup"), full, a.have, false); err != nil {
				return err
			}
		}
		if a.have != nil && a.have.IsDir() && a.want.Type != source.TypeDirectory {
			if err := os.RemoveAll(full); err != nil {
				return err
			}
		} else if a.have != nil && a.want.Type == source.TypeDirectory {
			if err := os.Remove(full); err != nil {
				return err
			}
		}
		switch a.want.Type {
		case source.TypeDirectory:
			if err := os.Mkdir(full, 0o755); err != nil {
				return err
			}
			if err := dirs.Mark(filepath.Dir(full)); err != nil {
				return err
			}
		case source.TypeLink:
			if err := atomicfile.Symlink(full, a.want.Target, -1, -1, dirs); err != nil {
				return err
			}
		default:
			ws := writeSpec{path: full, dir: filepath.Dir(full), mode: 0o644, uid: uid, gid: gid, dirs: dirs, exists: a.have != nil}
			if a.have != nil && a.have.Mode().IsRegular() {
				ws.mode = statMode(a.have)
			}
			if m, ok := p.childMode(a); ok {
				bits, err := applyMode(m, ws.mode, false)
				if err != nil {
					return err
				}
				ws.mode = bits
			}
			if ws.uid == os.Geteuid() {
				ws.uid = -1
			}
			if ws.gid == os.Getegid() {
				ws.gid = -1
			}
			ws.mtime = sourceMtime(a.want)
			err := writeAtomic(ctx, ws, func(w io.Writer) error { return p.copySource(ctx, w, a.want, false) })
			if err != nil {
				return err
			}
		}
	}
	fi, err := os.Lstat(full)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if uid >= 0 || gid >= 0 {
			cu, cg := statOwner(fi)
			a.chowned, a.uidFrom, a.uidTo, a.gidFrom, a.gidTo = a.have != nil && (uid >= 0 && uid != cu || gid >= 0 && gid != cg), cu, uid, cg, gid
			return os.Lchown(full, uid, gid)
		}
		return nil
	}
	cu, cg := statOwner(fi)
	if (uid >= 0 && uid != cu) || (gid >= 0 && gid != cg) {
		if err := os.Lchown(full, uid, gid); err != nil {
			return err
		}
		a.chowned, a.uidFrom, a.uidTo, a.gidFrom, a.gidTo = a.have != nil, cu, uid, cg, gid
	}
	if m, ok := p.childMode(&treeAction{want: a.want, have: a.have}); ok || fi.IsDir() {
		cur := statMode(fi)
		bits := cur
		if ok {
			if bits, err = applyMode(m, cur, fi.IsDir()); err != nil {
				return err
			}
		}
		if bits != cur {
			if err := chmod(full, bits, false); err != nil {
				return err
			}
		}
		// The change is from the mode the entry had before (a replaced
		// file's new copy may have the new mode already), as Puppet
		// reports the child's mode event.
		sameType := a.have != nil && a.have.Mode().Type() == fi.Mode().Type()
		from := cur
		if sameType {
			from = statMode(a.have)
		}
		if bits != from {
			a.chmodded, a.modeFrom, a.modeTo = sameType, from, bits
		}
	}
	return nil
}
