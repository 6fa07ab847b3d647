package host

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

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

// Format is the hosts file format: a resource's line is the last of its name.
var Format = &parsedfile.Format[record]{Name: "host", Parse: parsedfile.OrText(parseLine), Render: renderLine,
	Key: func(r record) string { return r.Name }}

type parsed struct {
	r *applier.Resource
	parsedfile.Entry[record]
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &parsed{r: r}
	p.Entry = parsedfile.Entry[record]{Format: Format, Target: parsedfile.FileTarget(r, DefaultTarget), Env: env, Key: r.Name()}
	return p, nil
}

// Get reads the target and reports the entry of the resource's name.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	return p.Report(ctx, cur, func(rec *record) { report(cur, rec, p.Target.Path, p.r.ReadAll()) })
}

// report is a present entry's state. forFind leaves out an empty comment,
// as `puppet resource` does.
func report(cur *applier.State, rec *record, target string, forFind bool) {
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
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	t := parsedfile.FileTarget(scope, DefaultTarget)
	return Format.Each(ctx, &t, env, func(_ int, rec *record, bound bool) {
		if bound {
			report(add(rec.Name), rec, t.Path, true)
		}
	})
}

// Set changes the entry in memory; Flush writes the file.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	return p.Change(ctx, c, p.r.Ref(), p.create, update)
}

// create is the resource's new line.
func (p *parsed) create() (record, error) {
	rec := record{Name: p.r.Name(), IP: p.r.String("ip"), Comment: p.r.String("comment")}
	if rec.IP == "" {
		return rec, errors.New("ip is a required attribute for hosts")
	}
	if p.r.Has("host_aliases") {
		rec.Aliases, rec.HasAliases = strings.Join(p.r.Strings("host_aliases"), " "), true
	}
	return rec, nil
}

// update changes one property of the line.
func update(rec *record, c *applier.Change) error {
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
	return nil
}
