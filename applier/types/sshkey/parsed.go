package sshkey

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pippet/pippet/applier"
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
	// aliases is Aliases as Get reports them, made when the file is
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
func parseLine(line string) (record, parsedfile.Kind) {
	if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
		return record{}, parsedfile.Text
	}
	f := spaceRe.Split(line, -1)
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	var r record
	names := strings.Split(f[0], ",")
	r.Name, r.Aliases = names[0], names[1:]
	r.aliases = make([]any, len(r.Aliases))
	for k, a := range r.Aliases {
		r.aliases[k] = a
	}
	if len(f) > 1 && f[1] != "" {
		r.Type, r.HasType = f[1], true
	}
	if len(f) > 2 {
		r.Key, r.HasKey = strings.Join(f[2:], " "), f[2] != "" || len(f) > 3
	}
	return r, parsedfile.Record
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

// Format is the known_hosts format: a key is the last line of its name
// and type. Puppet creates the file 0644.
var Format = &parsedfile.Format[record]{Name: "sshkey", Parse: parseLine, Render: renderLine, Mode: 0o644,
	Key: func(r record) string { return r.Name + "@" + r.Type }}

type parsed struct {
	r *applier.Resource
	parsedfile.Entry[record]
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &parsed{r: r}
	p.Entry = parsedfile.Entry[record]{Format: Format, Target: parsedfile.FileTarget(r, DefaultTarget), Env: env, Key: r.Name() + "@" + r.String("type")}
	return p, nil
}

// Get reports the key of the resource's name and type.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	return p.Report(ctx, cur, func(rec *record) { report(cur, rec, p.Target.Path) })
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
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	t := parsedfile.FileTarget(scope, DefaultTarget)
	return Format.Each(ctx, &t, env, func(i int, rec *record, bound bool) {
		switch {
		case !rec.HasType:
			env.Logger().Debug(fmt.Sprintf("%s: line %d names no key type; not listed", t.Path, i+1))
		case bound:
			report(add(rec.Name+"@"+rec.Type), rec, t.Path)
		}
	})
}

// Set edits the file in memory; Flush writes it.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	return p.Change(ctx, c, p.r.Ref(), p.create, p.update)
}

// create is the resource's line; type and key are required.
func (p *parsed) create() (record, error) {
	rec := record{Name: p.r.Name(), Aliases: p.r.Strings("host_aliases")}
	rec.Type, rec.HasType = p.r.String("type"), p.r.Has("type")
	rec.Key, rec.HasKey = p.r.String("key"), p.r.Has("key")
	_, err := renderLine(rec)
	return rec, err
}

// update changes one property of the line.
func (p *parsed) update(rec *record, c *applier.Change) error {
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
	return nil
}
