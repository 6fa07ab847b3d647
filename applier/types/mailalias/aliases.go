package mailalias

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Aliases is the provider that edits the aliases file.
var Aliases = &applier.ProviderSpec{
	Name:      "aliases",
	Doc:       "Edits the aliases file line by line (Puppet's ParsedFile provider of puppetlabs-mailalias_core).",
	New:       newAliases,
	Instances: instances,
}

// record is one alias line.
type record struct {
	Name string
	// Recipients, when HasRecipients; else the alias includes File.
	Recipients    []string
	HasRecipients bool
	File          string
}

// rubySpace is what Ruby's String#strip removes.
const rubySpace = " \t\n\v\f\r\x00"

// parseLine reads one line as the module does: comments and blank lines
// are text; `NAME: :include: FILE` includes a file; anything else with a
// colon is `NAME: RECIPIENTS`; a line without a colon is refused.
func parseLine(line string) (record, parsedfile.Kind) {
	if strings.HasPrefix(line, "#") || strings.TrimLeft(line, " \t\n\v\f\r") == "" {
		return record{}, parsedfile.Text
	}
	parts := strings.SplitN(line, ":", 4)
	if len(parts) < 2 {
		return record{}, parsedfile.Bad
	}
	rec := record{Name: strings.Trim(parts[0], rubySpace)}
	if len(parts) == 4 && strings.Trim(parts[2], rubySpace) == "include" {
		rec.File = strings.Trim(parts[3], rubySpace)
		return rec, parsedfile.Record
	}
	_, rest, _ := strings.Cut(line, ":")
	rec.Recipients, rec.HasRecipients = splitRecipients(strings.Trim(rest, rubySpace)), true
	return rec, parsedfile.Record
}

// splitRecipients splits at the commas outside double quotes (those
// followed by an even number of quotes, the module's rule), drops the
// spaces around each comma and the empty fields at the end, and takes
// one quote off either end of each recipient.
func splitRecipients(s string) []string {
	out := []string{}
	after := strings.Count(s, `"`) // quotes after the position
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			after--
		case ',':
			if after%2 == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	for i, r := range out {
		out[i] = strings.Trim(r, " \t\n\v\f\r")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	for i, r := range out {
		if r != "" && (r[0] == '"' || r[0] == '\'') {
			r = r[1:]
		}
		if r != "" && (r[len(r)-1] == '"' || r[len(r)-1] == '\'') {
			r = r[:len(r)-1]
		}
		out[i] = r
	}
	return out
}

// plain reports whether a recipient is written without quotes: only
// ASCII letters, digits and -+_@. (the module's rule).
func plain(r string) bool {
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-+_@.", c) >= 0) {
			return false
		}
	}
	return true
}

func renderLine(r record) (string, error) {
	if r.HasRecipients {
		var b strings.Builder
		b.WriteString(r.Name)
		b.WriteString(": ")
		for i, d := range r.Recipients {
			if i > 0 {
				b.WriteByte(',')
			}
			if plain(d) {
				b.WriteString(d)
			} else {
				b.WriteString(`"` + d + `"`)
			}
		}
		return b.String(), nil
	}
	if r.File != "" {
		return r.Name + ": :include: " + r.File, nil
	}
	return "", fmt.Errorf("alias %s has neither recipient nor file", r.Name)
}

// Format is the aliases file format: a resource's line is the last of its name.
var Format = &parsedfile.Format[record]{Name: "mailalias", Parse: parseLine, Render: renderLine,
	Key: func(r record) string { return r.Name }}

type aliases struct {
	r *applier.Resource
	parsedfile.Entry[record]
}

func newAliases(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &aliases{r: r}
	p.Entry = parsedfile.Entry[record]{Format: Format, Target: parsedfile.FileTarget(r, DefaultTarget), Env: env, Key: r.Name()}
	return p, nil
}

// Get reads the target and reports the alias of the resource's name.
func (p *aliases) Get(ctx context.Context, cur *applier.State) error {
	return p.Report(ctx, cur, func(rec *record) { report(cur, rec, p.Target.Path) })
}

// report is a present alias's state: its recipients or its file.
func report(cur *applier.State, rec *record, target string) {
	cur.Set("ensure", "present")
	if rec.HasRecipients {
		l := make([]any, len(rec.Recipients))
		for i, d := range rec.Recipients {
			l[i] = d
		}
		cur.Set("recipient", l)
	} else {
		cur.Set("file", rec.File)
	}
	cur.Set("target", target)
}

// instances lists the aliases of the search's target (the default file
// unless the search gives one), each name once: its last line.
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	t := parsedfile.FileTarget(scope, DefaultTarget)
	return Format.Each(ctx, &t, env, func(_ int, rec *record, bound bool) {
		if bound {
			report(add(rec.Name), rec, t.Path)
		}
	})
}

// Set changes the alias in memory; Flush writes the file.
func (p *aliases) Set(ctx context.Context, c *applier.Change) error {
	return p.Change(ctx, c, p.r.Ref(), p.create, update)
}

// create is the resource's new line.
func (p *aliases) create() (record, error) {
	rec := record{Name: p.r.Name()}
	switch {
	case p.r.Has("recipient"):
		rec.Recipients, rec.HasRecipients = p.r.Strings("recipient"), true
	case p.r.Has("file"):
		rec.File = p.r.String("file")
	default:
		return rec, errors.New("cannot create the alias: it needs recipient or file")
	}
	return rec, nil
}

// update changes one property of the line; the one set last is written
// (the module writes recipients when it has them, else the file).
func update(rec *record, c *applier.Change) error {
	switch c.Property {
	case "recipient":
		rec.Recipients, rec.HasRecipients = applier.StringList(c.Should), true
		rec.File = ""
	case "file":
		rec.File = applier.FormatValue(c.Should)
		rec.Recipients, rec.HasRecipients = nil, false
	default:
		// target is reported as the resource's own: the alias is looked
		// for in that file only, so it is never out of sync.
		return fmt.Errorf("cannot change %s", c.Property)
	}
	return nil
}
