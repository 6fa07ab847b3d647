package host

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Parsed is the provider that edits the hosts file.
var Parsed = &applier.ProviderSpec{
	Name: "parsed",
	Doc:  "Edits the hosts file line by line (Puppet's ParsedFile format of puppetlabs-host_core).",
	// Puppet confines the provider to systems that have the default hosts file.
	Confine:   applier.Confine{Files: []string{DefaultTarget}},
	New:       newParsed,
	Instances: instances,
}

// record is one host line.
type record struct {
	IP, Name string
	// Aliases as written, space-separated; HasAliases says whether the
	// field is written at all (an empty list given by the user writes an
	// empty field, as Puppet does).
	Aliases    string
	HasAliases bool
	Comment    string
}

// lineRe is puppetlabs-host_core's record pattern.
var lineRe = regexp.MustCompile(`^([0-9a-f:]\S+)\s+([^#\s+]\S+)\s*(.*?)?(?:\s*#\s*(.*))?$`)

var spaceRe = regexp.MustCompile(`\s+`)

func parseLine(line string) (record, bool) {
	if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
		return record{}, false
	}
	m := lineRe.FindStringSubmatch(line)
	if m == nil {
		return record{}, false
	}
	r := record{IP: m[1], Name: m[2], Comment: m[4]}
	if m[3] != "" {
		r.Aliases, r.HasAliases = spaceRe.ReplaceAllString(m[3], " "), true
	}
	return r, true
}

func renderLine(r record) (string, error) {
	if r.IP == "" {
		return "", errors.New("ip is a required attribute for hosts")
	}
	if r.Name == "" {
		return "", errors.New("name is a required attribute for hosts")
	}
	s := r.IP + "\t" + r.Name
	if r.HasAliases {
		s += "\t" + r.Aliases
	}
	if r.Comment != "" {
		s += "\t# " + r.Comment
	}
	return s, nil
}

// Format is the hosts file format.
var Format = &parsedfile.Parser[record]{Name: "host", Parse: parseLine, Render: renderLine}

type parsed struct {
	r      *applier.Resource
	env    *applier.Env
	target string
	file   *parsedfile.File[record]
	idx    int // the resource's line, -1 when absent
	dirty  bool
	now    func() time.Time // the header's clock; tests fix it
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	target := r.String("target")
	if target == "" {
		target = DefaultTarget
	}
	return &parsed{r: r, env: env, target: target, idx: -1, now: time.Now}, nil
}

func (p *parsed) cache() *applier.Cache {
	if p.env == nil {
		return nil
	}
	return p.env.Cache
}

// Get reads the target and reports the entry of the resource's name.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	f, err := Format.Load(p.target, p.cache())
	if err != nil {
		return err
	}
	p.file = f
	name := p.r.Name()
	p.idx = f.Find(func(rec record) bool { return rec.Name == name })
	if p.idx < 0 {
		cur.Set("ensure", "absent")
		return nil
	}
	report(cur, f.Lines[p.idx].Rec, p.target, p.r.ReadAll())
	return nil
}

// report is a present entry's state. forFind leaves out an empty comment,
// as `puppet resource` does.
func report(cur *applier.State, rec record, target string, forFind bool) {
	cur.Set("ensure", "present")
	cur.Set("ip", rec.IP)
	if rec.Comment != "" || !forFind {
		cur.Set("comment", rec.Comment)
	}
	cur.Set("target", target)
	if words := strings.Fields(rec.Aliases); len(words) > 0 {
		l := make([]any, len(words))
		for i, w := range words {
			l[i] = w
		}
		cur.Set("host_aliases", l)
	}
}

// instances lists the entries of the search's target (the default hosts
// file unless the search gives one), each name once: its last line, the
// one Get finds, in the order of those lines.

func instances(_ context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	target := scope.String("target")
	if target == "" {
		target = DefaultTarget
	}
	f, err := Format.Load(target, env.Cache)
	if err != nil {
		return err
	}
	last := map[string]int{}
	for i, l := range f.Lines {
		if l.IsRecord {
			last[l.Rec.Name] = i
		}
	}
	for i, l := range f.Lines {
		if l.IsRecord && last[l.Rec.Name] == i {
			report(add(l.Rec.Name), l.Rec, target, true)
		}
	}
	return nil
}

// Set changes the entry in memory; Flush writes the file.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	if p.file == nil {
		return errors.New("Set before Get")
	}
	if c.Property == "ensure" {
		switch c.Should {
		case "present":
			rec := record{Name: p.r.Name(), IP: p.r.String("ip"), Comment: p.r.String("comment")}
			if rec.IP == "" {
				return errors.New("ip is a required attribute for hosts")
			}
			if p.r.Has("host_aliases") {
				rec.Aliases, rec.HasAliases = strings.Join(p.r.Strings("host_aliases"), " "), true
			}
			p.file.Append(rec)
			p.idx = len(p.file.Lines) - 1
		case "absent":
			if p.idx >= 0 {
				p.file.Delete(p.idx)
				p.idx = -1
			}
		default:
			return fmt.Errorf("invalid ensure %v", c.Should)
		}
		p.dirty = true
		return nil
	}
	if p.idx < 0 {
		return fmt.Errorf("%s is not in %s", p.r.Ref(), p.target)
	}
	rec := p.file.Lines[p.idx].Rec
	switch c.Property {
	case "ip":
		rec.IP = applier.FormatValue(c.Should)
	case "host_aliases":
		rec.Aliases, rec.HasAliases = strings.Join(aliasList(c.Should), " "), true
	case "comment":
		rec.Comment = applier.FormatValue(c.Should)
	default:
		// target is reported as the resource's own: the entry is looked
		// for in that file only, so it is never out of sync.
		return fmt.Errorf("cannot change %s", c.Property)
	}
	p.file.Replace(p.idx, rec)
	p.dirty = true
	return nil
}

// Flush writes the target when anything changed.
func (p *parsed) Flush(ctx context.Context) error {
	if !p.dirty {
		return nil
	}
	p.dirty = false
	return p.file.Save(ctx, p.now(), p.env)
}
