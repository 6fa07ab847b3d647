package tidy

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/pippet/pippet/applier"
)

// Provider is tidy's one implementation.
var Provider = &applier.ProviderSpec{
	Name:    "",
	Doc:     "Walks the tree through directory descriptors and removes what the criteria select.",
	Confine: applier.Confine{Features: []string{"posix"}},
	New:     newWalker,
}

// maxEvents bounds the events of one answer; the removals past it are
// summed up in one more event (and each is logged).
const maxEvents = 10000

// softMaxFiles is where, without max_files, a large tree is warned about.
const softMaxFiles = 1000

type provider struct {
	r      *applier.Resource
	env    *applier.Env
	c      criteria
	max    int
	picked []selected
}

func newWalker(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &provider{r: r, env: env}
	depth, _ := r.Int("recurse")
	p.c = criteria{depth: depth, age: -1, size: -1, timeKind: r.String("type"), rmdirs: r.Bool("rmdirs"), now: nowSeconds()}
	if a, ok := r.Int("age"); ok {
		p.c.age = a
	}
	if s, ok := r.Int("size"); ok {
		p.c.size = s
	}
	p.c.matches = r.Strings("matches")
	if m, _ := r.Int("max_files"); m > 0 {
		p.max = int(m)
	}
	return p, nil
}

// Get selects the entries to tidy, changing nothing. A directory is
// selected only when everything in it is, since only an empty directory
// is removed.
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	p.picked = p.picked[:0]
	// A file the run manages is that resource's, never tidied (Puppet
	// makes no File to remove a path its catalog holds); its directory,
	// no longer emptied, stays too.
	run := applier.RunFrom(ctx)
	w := &walker{ctx: ctx, c: &p.c, root: p.r.Name(), max: p.max,
		visit: func(_ int, _ string, path string, st *syscall.Stat_t, emptied bool) (bool, error) {
			if run != nil && run.Managed("file", path) {
				return false, nil
			}
			if !emptied || !p.c.tidy(st) {
				return false, nil
			}
			p.picked = append(p.picked, selected{path: path, dev: uint64(st.Dev), ino: st.Ino, kind: kindOf(st)})
			return true, nil
		}}
	if err := w.run(); err != nil {
		return err
	}
	if p.max == 0 && w.entries > softMaxFiles {
		p.env.Logger().Warn(fmt.Sprintf("%s: the directory '%s' contains %d entries, which exceeds the default soft limit %d "+
			"and may cause excessive resource consumption and degraded performance. To remove this warning set a value for "+
			"`max_files` parameter or consider using an alternate method to manage large directory trees",
			p.r.Ref(), p.r.Name(), w.entries, softMaxFiles))
	}
	list := make([]any, len(p.picked))
	for i, s := range p.picked {
		list[i] = s.path
	}
	cur.Set("tidied", list)
	return nil
}

// Set removes what Get selected: the tree is walked again and an entry is
// removed only if it is the very file Get judged (same device and inode),
// children before their directory.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	want := make(map[[2]uint64]selected, len(p.picked))
	for _, s := range p.picked {
		want[[2]uint64{s.dev, s.ino}] = s
	}
	if len(p.picked) > 0 {
		p.env.Logger().Log(ctx, applier.LevelNotice, fmt.Sprintf("%s: Tidying %d files", p.r.Ref(), len(p.picked)))
	}
	log := p.env.Logger()
	removed, failed := 0, 0
	record := func(s selected, err error) {
		msg := "removed " + s.path
		if removed+failed < maxEvents {
			c.Parts = append(c.Parts, applier.Part{Previous: s.kind, Desired: "absent", Message: msg, Err: err})
		} else if err == nil {
			log.Log(ctx, p.r.LogLevel, "/"+p.r.Ref()+"/tidied: "+msg)
		} else {
			log.Error("/" + p.r.Ref() + "/tidied: " + msg + " failed: " + err.Error())
		}
		if err != nil {
			failed++
		} else {
			removed++
		}
	}
	// The directories whose entries changed, to be made durable, less
	// those removed themselves (their removal is their parent's entry).
	parents, gone := map[string]bool{}, map[string]bool{}
	defer func() {
		if p.env.Dirs == nil {
			return
		}
		for d := range parents {
			if !gone[d] {
				if err := p.env.Dirs.Mark(d); err != nil {
					p.env.Logger().Error(p.r.Ref() + ": " + err.Error())
				}
			}
		}
	}()
	w := &walker{ctx: ctx, c: &p.c, root: p.r.Name(),
		visit: func(dirfd int, name, path string, st *syscall.Stat_t, emptied bool) (bool, error) {
			s, ok := want[[2]uint64{uint64(st.Dev), st.Ino}]
			if !ok || s.path != path {
				return false, nil
			}
			dir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
			if dir && !emptied {
				return false, nil // something in it stayed: keep it
			}
			if err := p.backup(ctx, dirfd, name, path, st); err != nil {
				record(s, err) // kept: a removal without its backup is never made
				return false, nil
			}
			err := unlinkat(dirfd, name, dir)
			if errors.Is(err, syscall.ENOENT) {
				return true, nil // gone meanwhile
			}
			if dir && errors.Is(err, syscall.ENOTEMPTY) {
				return false, nil // it gained an entry meanwhile (a backup beside a file): kept
			}
			if err == nil {
				parents[parentOf(path)] = true
				if dir {
					gone[path] = true
				}
			}
			record(s, err)
			return err == nil, nil
		}}
	if err := w.run(); err != nil {
		return err
	}
	if n := removed + failed; n > maxEvents {
		c.Parts = append(c.Parts, applier.Part{Previous: "present", Desired: "absent",
			Message: fmt.Sprintf("removed %d more entries (logged, not listed)", n-maxEvents)})
	}
	if len(c.Parts) == 0 {
		c.Message = "nothing left to remove"
	}
	return nil
}

func parentOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
