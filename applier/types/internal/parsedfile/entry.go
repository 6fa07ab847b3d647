package parsedfile

import (
	"context"
	"fmt"
	"time"

	"github.com/pippet/pippet/applier"
)

// Finder finds a resource's record where its key alone does not (a
// crontab's job without a name comment): the index of its line, -1 when
// absent.
type Finder[R any] interface{ Find(rs *Records[R]) int }

// Entry is one resource's record in its target: what a provider's Get,
// Set and Flush do with it. Load binds it to its record (through the
// cache); the first change reads the target afresh into a private copy
// and binds it again there; Flush writes the target once.
type Entry[R any] struct {
	Format *Format[R]
	Target Target
	// Env gives the cache, the filebucket and the DirSync; nil: none.
	Env *applier.Env
	// Key is the key of the resource's record.
	Key string
	// Finder, when set, binds the entry instead of Key.
	Finder Finder[R]
	// Now stamps the header (nil: time.Now); tests fix it.
	Now func() time.Time

	recs  *Records[R] // Load's (shared with the cache), or the private copy
	own   bool        // recs is the private copy
	idx   int         // the resource's line, -1 when absent
	dirty bool        // the private copy must be written
}

func (e *Entry[R]) cache() *applier.Cache {
	if e.Env == nil {
		return nil
	}
	return e.Env.Cache
}

func (e *Entry[R]) bind(rs *Records[R]) {
	e.recs = rs
	if e.Finder != nil {
		e.idx = e.Finder.Find(rs)
	} else {
		e.idx = rs.Find(e.Key)
	}
}

// Load reads the target, through the cache, and returns the resource's
// record, nil when there is none. The record is shared: read it only.
func (e *Entry[R]) Load(ctx context.Context) (*R, error) {
	rs, err := e.Format.Read(ctx, &e.Target, e.cache())
	if err != nil {
		return nil, err
	}
	e.own = false
	e.bind(rs)
	return e.Record(), nil
}

// Record is the resource's record, nil when there is none.
func (e *Entry[R]) Record() *R {
	if e.recs == nil || e.idx < 0 {
		return nil
	}
	return &e.recs.Lines[e.idx].Rec
}

// Records are the target's records as last read or changed.
func (e *Entry[R]) Records() *Records[R] { return e.recs }

// edit starts changing: the target read afresh, past the cache, into a
// private copy (what was read for Get may be stale), the entry bound again.
func (e *Entry[R]) edit(ctx context.Context) error {
	if e.own {
		return nil
	}
	rs, err := e.Format.Read(ctx, &e.Target, nil)
	if err != nil {
		return err
	}
	e.own = true
	e.bind(rs)
	return nil
}

// Put makes rec the resource's record, in place of the one bound or
// appended to the file.
func (e *Entry[R]) Put(ctx context.Context, rec R) error {
	if err := e.edit(ctx); err != nil {
		return err
	}
	if e.idx >= 0 {
		e.recs.Lines[e.idx] = Line[R]{Rec: rec, IsRecord: true}
	} else {
		e.recs.Lines = append(e.recs.Lines, Line[R]{Rec: rec, IsRecord: true})
		e.idx = len(e.recs.Lines) - 1
	}
	e.recs.reindex()
	e.dirty = true
	return nil
}

// Delete removes the resource's record, if there is one.
func (e *Entry[R]) Delete(ctx context.Context) error {
	if err := e.edit(ctx); err != nil {
		return err
	}
	if e.idx >= 0 {
		e.recs.Lines = append(e.recs.Lines[:e.idx], e.recs.Lines[e.idx+1:]...)
		e.idx = -1
		e.recs.reindex()
		e.dirty = true
	}
	return nil
}

// Update changes the resource's record with fn; ref names the resource in
// the error when the record is gone.
func (e *Entry[R]) Update(ctx context.Context, ref string, fn func(rec *R) error) error {
	if err := e.edit(ctx); err != nil {
		return err
	}
	if e.idx < 0 {
		return fmt.Errorf("%s is no longer in %s", ref, e.Target.name())
	}
	if err := fn(&e.recs.Lines[e.idx].Rec); err != nil {
		return err
	}
	e.dirty = true
	return nil
}

// Change carries out one change of an ensurable record type: ensure
// present puts the record create makes, ensure absent deletes the
// resource's record, any other property changes it with update (which
// refuses a property it can't change). As in Puppet, the target is
// written by Flush once a change was made, even one that found nothing
// to delete.
func (e *Entry[R]) Change(ctx context.Context, c *applier.Change, ref string, create func() (R, error), update func(rec *R, c *applier.Change) error) error {
	if c.Property != "ensure" {
		return e.Update(ctx, ref, func(rec *R) error { return update(rec, c) })
	}
	switch c.Should {
	case "present":
		if err := e.edit(ctx); err != nil {
			return err
		}
		rec, err := create()
		if err != nil {
			return err
		}
		return e.Put(ctx, rec)
	case "absent":
		if err := e.Delete(ctx); err != nil {
			return err
		}
		e.dirty = true
		return nil
	}
	return fmt.Errorf("invalid ensure %v", c.Should)
}

// Flush writes the target when a change was made.
func (e *Entry[R]) Flush(ctx context.Context) error {
	if !e.dirty {
		return nil
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	if err := e.Format.Write(ctx, &e.Target, e.recs, now(), e.Env); err != nil {
		return err
	}
	e.dirty = false
	return nil
}

// FileTarget is the file named by r's target attribute, or def.
func FileTarget(r *applier.Resource, def string) Target {
	if t := r.String("target"); t != "" {
		return Target{Path: t}
	}
	return Target{Path: def}
}

// Report loads the entry (Load) and reports it: ensure absent when the
// resource has no record, else what report says of the record.
func (e *Entry[R]) Report(ctx context.Context, cur *applier.State, report func(rec *R)) error {
	rec, err := e.Load(ctx)
	if err != nil {
		return err
	}
	if rec == nil {
		cur.Set("ensure", "absent")
		return nil
	}
	report(rec)
	return nil
}

// Each reads t for a search, through env's cache, and calls fn with every
// record as Records.Each does.
func (f *Format[R]) Each(ctx context.Context, t *Target, env *applier.Env, fn func(line int, rec *R, bound bool)) error {
	rs, err := f.Read(ctx, t, env.Cache)
	if err != nil {
		return err
	}
	rs.Each(fn)
	return nil
}
