package sshauthkey

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/accounts"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Parsed is the provider that edits authorized_keys files.
var Parsed = &applier.ProviderSpec{
	Name: "parsed",
	Doc:  "Edits an authorized_keys file line by line (Puppet's ParsedFile format of puppetlabs-sshkeys_core).",
	New:  newParsed,
}

// record is a key line. V1 marks an SSH protocol 1 key (bits, exponent,
// modulus), kept as it was read.
type record struct {
	Options []string
	Type    string
	Key     string
	Name    string
	V1      bool
	V1Opts  string // a v1 key's options, as read
	// options is Options as Get reports them, made when the file is
	// parsed (shared: never modified).
	options []any
}

// Format is the authorized_keys format: a key is the last line of its
// name (its comment); a line that is neither a key, a comment nor blank
// refuses the file, as in Puppet.
var Format = &parsedfile.Format[record]{Name: "ssh_authorized_key", Parse: parseLine,
	Render: func(r record) (string, error) { return r.render(), nil },
	Key:    func(r record) string { return r.Name }}

var (
	// keyRe is puppetlabs-sshkeys_core's key line pattern.
	keyRe = regexp.MustCompile(`^(?:(.+)\s+)?(ssh-dss|ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384|ecdsa-sha2-nistp521|ecdsa-sk|ed25519-sk|sk-ecdsa-sha2-nistp256@openssh\.com|sk-ssh-ed25519@openssh\.com|ssh-rsa-cert-v01@openssh\.com|ssh-ed25519-cert-v01@openssh\.com|ssh-dss-cert-v01@openssh\.com|ecdsa-sha2-nistp256-cert-v01@openssh\.com|ecdsa-sha2-nistp384-cert-v01@openssh\.com|ecdsa-sha2-nistp521-cert-v01@openssh\.com)\s+([^ ]+)\s*(.*)$`)
	v1Re  = regexp.MustCompile(`^(?:(.+) )?(\d+) (\d+) (\d+)(?: (.+))?$`)
	// The option scanner's tokens (Puppet's parse_options).
	longOptRe  = regexp.MustCompile(`^[-a-z0-9A-Z_]+=".*?[^\\]"`)
	shortOptRe = regexp.MustCompile(`^[-a-z0-9A-Z_]+`)
	commaRe    = regexp.MustCompile(`^[ \t]*,[ \t]*`)
)

// parseOptions splits an options field as Puppet does: comma-separated
// `word` or `word="value"` tokens, stopping at the first it can't read.
func parseOptions(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out
		}
		tok := longOptRe.FindString(s)
		if tok == "" {
			tok = shortOptRe.FindString(s)
		}
		if tok == "" {
			return out
		}
		out = append(out, tok)
		s = s[len(tok):]
		if m := commaRe.FindString(s); m != "" {
			s = s[len(m):]
		}
	}
}

// parseLine reads one line: a comment or blank line is text, a key line
// a record; anything else is Bad.
func parseLine(s string) (record, parsedfile.Kind) {
	t := strings.TrimLeft(s, " \t\r\n\f\v")
	if t == "" || strings.HasPrefix(t, "#") {
		return record{}, parsedfile.Text
	}
	var r record
	if m := keyRe.FindStringSubmatch(s); m != nil {
		r = record{Options: parseOptions(m[1]), Type: m[2], Key: m[3], Name: m[4]}
	} else if m := v1Re.FindStringSubmatch(s); m != nil {
		r = record{V1: true, V1Opts: m[1], Type: m[2] + " " + m[3], Key: m[4], Name: m[5]}
	} else {
		return r, parsedfile.Bad
	}
	if len(r.Options) == 0 {
		r.options = []any{"absent"}
	} else {
		r.options = make([]any, len(r.Options))
		for j, o := range r.Options {
			r.options[j] = o
		}
	}
	return r, parsedfile.Record
}

// render writes a record back as Puppet does: fields joined by spaces,
// leading whitespace dropped (an unnamed key keeps a trailing space).
func (r *record) render() string {
	var s string
	if r.V1 {
		s = r.V1Opts + " " + r.Type + " " + r.Key + " " + r.Name
	} else {
		s = strings.Join(r.Options, ",") + " " + r.Type + " " + r.Key + " " + r.Name
	}
	return strings.TrimLeft(s, " \t\r\n\f\v")
}

type parsed struct {
	r *applier.Resource
	parsedfile.Entry[record]
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	p := &parsed{r: r}
	p.Entry = parsedfile.Entry[record]{Format: Format, Env: env, Key: r.Name()}
	return p, nil
}

// resolveTarget is the target given, or the user's default.
// The target is "" when the user has no account to give a default.
func (p *parsed) resolveTarget() (string, error) {
	if t := p.r.String("target"); t != "" {
		return t, nil
	}
	users, err := accounts.LoadUsers()
	if err != nil {
		return "", err
	}
	u := users.Lookup(p.r.String("user"))
	if u == nil {
		return "", nil
	}
	return filepath.Join(u.Home, ".ssh", "authorized_keys"), nil
}

// bind resolves the target and gives it the user's rules: read as the
// user (Guard before and after), written as the user (WriteTarget).
func (p *parsed) bind() error {
	t, err := p.resolveTarget()
	if err != nil {
		return err
	}
	p.Target = parsedfile.Target{Path: t, Rules: p}
	return nil
}

// Guard checks that the user could read the target as it is, when the
// provider acts as the user (drop_privileges, a user other than root):
// Puppet reads the file as the user, and the receiver, reading as root,
// must not tell through an answer what a file the user may not read holds
// (a link to /etc/shadow, a .ssh linked to another user's). It returns the
// file's device and inode (zero when it does not exist).
func (p *parsed) Guard() ([2]uint64, error) {
	if !p.r.Bool("drop_privileges") || !p.r.Has("user") {
		return [2]uint64{}, nil
	}
	users, err := accounts.LoadUsers()
	if err != nil {
		return [2]uint64{}, err
	}
	u := users.Lookup(p.r.String("user"))
	if u == nil || u.UID == 0 {
		return [2]uint64{}, nil
	}
	var st syscall.Stat_t
	target := p.Target.Path
	if err := syscall.Lstat(target, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return [2]uint64{}, nil
		}
		return [2]uint64{}, &os.PathError{Op: "lstat", Path: target, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return [2]uint64{}, fmt.Errorf("refusing to read %s: it is a symbolic link and %s's keys are read as %s", target, p.r.Ref(), u.Name)
	case syscall.S_IFREG:
	default:
		return [2]uint64{}, fmt.Errorf("refusing to read %s: not a regular file", target)
	}
	w := &writer{user: u}
	if ok, err := w.mayRead(&st); err != nil {
		return [2]uint64{}, err
	} else if !ok {
		return [2]uint64{}, fmt.Errorf("%s is not readable by %s: %w", target, u.Name, os.ErrPermission)
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, nil
}

// Get reports the key of the resource's name.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	if err := p.bind(); err != nil {
		return err
	}
	if p.Target.Path == "" {
		// No such user: nothing can be there; creating fails in Set.
		cur.Set("ensure", "absent")
		return nil
	}
	return p.Report(ctx, cur, func(rec *record) { report(cur, rec, p.r, p.Target.Path) })
}

// report is a present key's state: what Get reports and search lists.
// The file is the user's by where it is: user and target are what the
// resource (or the search) says, as Puppet reads them.
func report(cur *applier.State, rec *record, r *applier.Resource, target string) {
	cur.Set("ensure", "present")
	cur.Set("type", rec.Type)
	cur.Set("key", rec.Key)
	cur.Set("options", rec.options)
	if r.Has("user") {
		cur.Set("user", r.String("user"))
	}
	cur.Set("target", target)
}

// instances lists the keys of one file: the search's target, or its
// user's ~/.ssh/authorized_keys (a search without either is refused by
// the type's validation, as an apply is; Puppet lists no keys then, its
// provider having no default file). Keys are titled by their name (the
// comment), in file order, each with the state a find of that name
// reports: where a name appears on several lines, the last, the one a
// resource is bound to. A key without a name cannot be a resource's and
// is left out, logged (Puppet lists it as TARGET:unnamed-N, a title no
// resource can find it by). A user without an account has no keys.
func instances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	if !scope.Has("user") && !scope.Has("target") {
		return errors.New("Attribute 'user' or 'target' is mandatory: the keys of which file?")
	}
	p := &parsed{r: scope}
	if err := p.bind(); err != nil || p.Target.Path == "" {
		return err
	}
	return Format.Each(ctx, &p.Target, env, func(i int, rec *record, bound bool) {
		switch {
		case rec.Name == "":
			env.Logger().Debug(fmt.Sprintf("%s: the key on line %d has no name; not listed", p.Target.Path, i+1))
		case bound:
			report(add(rec.Name), rec, scope, p.Target.Path)
		}
	})
}

// Set edits the file in memory; Flush writes it.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	if p.Target.Path == "" {
		return fmt.Errorf("User '%s' does not exist", p.r.String("user"))
	}
	return p.Change(ctx, c, p.r.Ref(), p.create, update)
}

// create is the resource's key line; type and key are required.
func (p *parsed) create() (record, error) {
	if !p.r.Has("type") {
		return record{}, errors.New("Field 'type' is required")
	}
	if !p.r.Has("key") {
		return record{}, errors.New("Field 'key' is required")
	}
	return record{Options: optionList(p.r.Value("options")), Type: p.r.String("type"), Key: p.r.String("key"), Name: p.r.Name()}, nil
}

// update changes one property of the key line.
func update(rec *record, c *applier.Change) error {
	switch c.Property {
	case "type":
		rec.Type = applier.FormatValue(c.Should)
	case "key":
		rec.Key = applier.FormatValue(c.Should)
	case "options":
		rec.Options = optionList(c.Should)
	default:
		// user and target are reported as the resource's own.
		return fmt.Errorf("cannot change %s", c.Property)
	}
	return nil
}

// WriteTarget replaces the file as the user.
func (p *parsed) WriteTarget(ctx context.Context, data []byte) error {
	user := p.r.String("user")
	if user == "" {
		return errors.New("Cannot write SSH authorized keys without user")
	}
	users, err := accounts.LoadUsers()
	if err != nil {
		return err
	}
	u := users.Lookup(user)
	if u == nil {
		return fmt.Errorf("User '%s' does not exist", user)
	}
	w := &writer{path: p.Target.Path, user: u, asUser: p.r.Bool("drop_privileges"), env: p.Env}
	return w.write(ctx, data)
}
