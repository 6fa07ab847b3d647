package sshkey

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Parsed is the provider that edits known_hosts files.
var Parsed = &applier.ProviderSpec{
	Name: "parsed",
	Doc:  "Edits a known_hosts file line by line (Puppet's ParsedFile format of puppetlabs-sshkeys_core).",
	New:  newParsed,
}

// record is one key line. A field missing from the line is "" with its
// flag false: Puppet reads it as absent and refuses to write it back.
type record struct {
	Name    string
	Aliases []string
	// aliases is Aliases as Get reports them, made when a cached file is
	// parsed (shared: never modified).
	aliases []any
	Type    string
	Key     string
	HasType bool
	HasKey  bool
}

var spaceRe = regexp.MustCompile(`\s+`)

// parseLine reads a line as Puppet's record: fields split on whitespace
// (a leading blank gives an empty first field, as Ruby's split does), the
// key being the rest of the line, and the first field's comma-separated
// names the host name and its aliases. Comments and blank lines are text.
func parseLine(line string) (record, bool) {
	if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
		return record{}, false
	}
	f := spaceRe.Split(line, -1)
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	var r record
	names := strings.Split(f[0], ",")
	r.Name, r.Aliases = names[0], names[1:]
	if len(f) > 1 && f[1] != "" {
		r.Type, r.HasType = f[1], true
	}
	if len(f) > 2 {
		r.Key, r.HasKey = strings.Join(f[2:], " "), f[2] != "" || len(f) > 3
	}
	return r, true
}

func renderLine(r record) (string, error) {
	if !r.HasType {
		return "", errors.New("Field 'type' is required")
	}
	if !r.HasKey {
		return "", errors.New("Field 'key' is required")
	}
	name := r.Name
	if len(r.Aliases) > 0 {
		name += "," + strings.Join(r.Aliases, ",")
	}
	return name + " " + r.Type + " " + r.Key, nil
}

// Format is the known_hosts format; Puppet creates the file 0644.
var Format = &parsedfile.Parser[record]{Name: "sshkey", Parse: parseLine, Render: renderLine, Mode: 0o644}

// hosts is a parsed known_hosts file as the cache keeps it: each record's
// line by "name@type" (the last one of that identity).
type hosts struct {
	lines []parsedfile.Line[record]
	index map[string]int
}

func parseHosts(data []byte) (*hosts, error) {
	h := &hosts{lines: Format.Lines(string(data))}
	h.index = make(map[string]int, len(h.lines))
	for i := range h.lines {
		if l := &h.lines[i]; l.IsRecord {
			h.index[l.Rec.Name+"@"+l.Rec.Type] = i
			l.Rec.aliases = make([]any, len(l.Rec.Aliases))
			for k, a := range l.Rec.Aliases {
				l.Rec.aliases[k] = a
			}
		}
	}
	return h, nil
}

// files keeps each known_hosts file parsed while it is unchanged.
var files sysfile.Cache[*hosts]

type parsed struct {
	r      *applier.Resource
	env    *applier.Env
	target string
	id     string // name@type
	exists bool
	file   *parsedfile.File[record]
	idx    int // the record's line in file, -1 when absent
	now    func() time.Time
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	target := r.String("target")
	if target == "" {
		target = DefaultTarget
	}
	return &parsed{r: r, env: env, target: target, id: r.Name() + "@" + r.String("type"), idx: -1, now: time.Now}, nil
}

// Get reports the key of the resource's name and type.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	h, err := files.Load(p.target, parseHosts)
	if sysfile.IsNotExist(err) {
		cur.Set("ensure", "absent")
		return nil
	}
	if err != nil {
		return err
	}
	i, ok := h.index[p.id]
	if !ok {
		cur.Set("ensure", "absent")
		return nil
	}
	p.exists = true
	report(cur, &h.lines[i].Rec, p.target)
	return nil
}

// report is a present key's state: what Get reports and search lists.
func report(cur *applier.State, rec *record, target string) {
	cur.Set("ensure", "present")
	cur.Set("key", rec.Key)
	cur.Set("target", target)
	cur.Set("host_aliases", rec.aliases)
}

// instances lists the keys of the search's target (default
// /etc/ssh/ssh_known_hosts), titled `name@type` as Puppet titles them, in
// file order, each with the state a find of that title reports: where a
// name and type appear on several lines, the last (the line a resource is
// bound to; Puppet's listing shows the first). A line without a key type
// names no key a resource could manage and is left out, logged.
func instances(_ context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	target := scope.String("target")
	if target == "" {
		target = DefaultTarget
	}
	h, err := files.Load(target, parseHosts)
	if sysfile.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := range h.lines {
		l := &h.lines[i]
		if !l.IsRecord {
			continue
		}
		if !l.Rec.HasType {
			env.Logger().Debug(fmt.Sprintf("%s: line %d names no key type; not listed", target, i+1))
			continue
		}
		id := l.Rec.Name + "@" + l.Rec.Type
		if h.index[id] == i {
			report(add(id), &l.Rec, target)
		}
	}
	return nil
}

// load reads the target afresh for a change, and finds the record.
func (p *parsed) load() error {
	if p.file != nil {
		return nil
	}
	f, err := Format.Load(p.target, nil)
	if err != nil {
		return err
	}
	p.file = f
	name, typ := p.r.Name(), p.r.String("type")
	p.idx = f.Find(func(rec record) bool { return rec.Name == name && rec.Type == typ })
	return nil
}

// Set edits the file in memory; Flush writes it.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	if err := p.load(); err != nil {
		return err
	}
	if c.Property == "ensure" {
		switch c.Should {
		case "present":
			rec := record{Name: p.r.Name(), Aliases: p.r.Strings("host_aliases")}
			rec.Type, rec.HasType = p.r.String("type"), p.r.Has("type")
			rec.Key, rec.HasKey = p.r.String("key"), p.r.Has("key")
			if _, err := renderLine(rec); err != nil {
				return err
			}
			if p.idx >= 0 {
				p.file.Replace(p.idx, rec)
			} else {
				p.file.Append(rec)
				p.idx = len(p.file.Lines) - 1
			}
		case "absent":
			if p.idx >= 0 {
				p.file.Delete(p.idx)
				p.idx = -1
			}
		default:
			return fmt.Errorf("invalid ensure %v", c.Should)
		}
		return nil
	}
	if p.idx < 0 {
		return fmt.Errorf("%s is no longer in %s", p.r.Ref(), p.target)
	}
	rec := p.file.Lines[p.idx].Rec
	switch c.Property {
	case "key":
		rec.Key, rec.HasKey = applier.FormatValue(c.Should), true
	case "host_aliases":
		rec.Aliases = p.r.Strings("host_aliases")
	default:
		// target is reported as the resource's own (the key is looked
		// for in that file only): never out of sync.
		return fmt.Errorf("cannot change %s", c.Property)
	}
	p.file.Replace(p.idx, rec)
	return nil
}

// Flush writes the target when a Set changed it.
func (p *parsed) Flush(ctx context.Context) error {
	if p.file == nil {
		return nil
	}
	defer files.Drop(p.target)
	return p.file.Save(ctx, p.now(), p.env)
}
