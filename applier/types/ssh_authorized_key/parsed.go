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
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/applier/types/internal/accounts"
	"github.com/pippet/pippet/applier/types/internal/parsedfile"
)

// Parsed is the provider that edits authorized_keys files.
var Parsed = &applier.ProviderSpec{
	Name: "parsed",
	Doc:  "Edits an authorized_keys file line by line (Puppet's ParsedFile format of puppetlabs-sshkeys_core).",
	New:  newParsed,
}

// line is one line of the file: text kept verbatim, or a key record.
type line struct {
	text string
	rec  *record
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

// parseLine reads one line; a line that is neither a comment, blank nor
// a key is an error, as in Puppet.
func parseLine(s string) (line, bool) {
	t := strings.TrimLeft(s, " \t\r\n\f\v")
	if t == "" || strings.HasPrefix(t, "#") {
		return line{text: s}, true
	}
	if m := keyRe.FindStringSubmatch(s); m != nil {
		return line{rec: &record{Options: parseOptions(m[1]), Type: m[2], Key: m[3], Name: m[4]}}, true
	}
	if m := v1Re.FindStringSubmatch(s); m != nil {
		return line{rec: &record{V1: true, V1Opts: m[1], Type: m[2] + " " + m[3], Key: m[4], Name: m[5]}}, true
	}
	return line{}, false
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

// keys is a parsed authorized_keys file: its lines and the last key line
// of each name.
type keys struct {
	lines []line
	index map[string]int
	bad   int // the first line that is not a key, comment or blank (1-based), 0 if none
}

var headerRe = regexp.MustCompile(`# HEADER[^\n]*\n`)

func parseKeys(data []byte) (*keys, error) {
	text := string(data)
	if strings.Contains(text, "# HEADER") {
		text = headerRe.ReplaceAllString(text, "")
	}
	text = strings.TrimRight(text, "\n")
	k := &keys{}
	if text == "" {
		return k, nil
	}
	raw := strings.Split(text, "\n")
	k.lines = make([]line, len(raw))
	k.index = make(map[string]int, len(raw))
	for i, s := range raw {
		l, ok := parseLine(s)
		if !ok {
			if k.bad == 0 {
				k.bad = i + 1
			}
			l = line{text: s}
		}
		if l.rec != nil {
			if len(l.rec.Options) == 0 {
				l.rec.options = []any{"absent"}
			} else {
				l.rec.options = make([]any, len(l.rec.Options))
				for j, o := range l.rec.Options {
					l.rec.options[j] = o
				}
			}
		}
		k.lines[i] = l
		if l.rec != nil && l.rec.Name != "" {
			k.index[l.rec.Name] = i
		}
	}
	return k, nil
}

// files keeps each authorized_keys file parsed while it is unchanged.
var files sysfile.Cache[*keys]

type parsed struct {
	r      *applier.Resource
	env    *applier.Env
	target string // "" when the user has no account to give a default
	keys   *keys  // the file as changed by Set (a private copy)
	idx    int    // the resource's line in keys, -1 when absent
	now    func() time.Time
}

func newParsed(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	return &parsed{r: r, env: env, idx: -1, now: time.Now}, nil
}

// resolveTarget is the target given, or the user's default.
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

func (p *parsed) load() (*keys, error) {
	before, err := p.userView()
	if err != nil {
		return nil, err
	}
	k, err := files.Load(p.target, parseKeys)
	if sysfile.IsNotExist(err) {
		return &keys{}, nil
	}
	if err != nil {
		return nil, err
	}
	// The file read must be the one checked: a link or another file
	// swapped in between is refused, not reported.
	if after, err := p.userView(); err != nil {
		return nil, err
	} else if after != before {
		return nil, fmt.Errorf("%s changed while it was read", p.target)
	}
	if k.bad > 0 {
		return nil, fmt.Errorf("could not parse line %d of %s", k.bad, p.target)
	}
	return k, nil
}

// userView checks that the user could read the target as it is, when the
// provider acts as the user (drop_privileges, a user other than root):
// Puppet reads the file as the user, and the receiver, reading as root,
// must not tell through an answer what a file the user may not read holds
// (a link to /etc/shadow, a .ssh linked to another user's). It returns the
// file's device and inode (zero when it does not exist).
func (p *parsed) userView() ([2]uint64, error) {
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
	if err := syscall.Lstat(p.target, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return [2]uint64{}, nil
		}
		return [2]uint64{}, &os.PathError{Op: "lstat", Path: p.target, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return [2]uint64{}, fmt.Errorf("refusing to read %s: it is a symbolic link and %s's keys are read as %s", p.target, p.r.Ref(), u.Name)
	case syscall.S_IFREG:
	default:
		return [2]uint64{}, fmt.Errorf("refusing to read %s: not a regular file", p.target)
	}
	w := &writer{user: u}
	if ok, err := w.mayRead(&st); err != nil {
		return [2]uint64{}, err
	} else if !ok {
		return [2]uint64{}, fmt.Errorf("%s is not readable by %s: %w", p.target, u.Name, os.ErrPermission)
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, nil
}

// Get reports the key of the resource's name.
func (p *parsed) Get(ctx context.Context, cur *applier.State) error {
	t, err := p.resolveTarget()
	if err != nil {
		return err
	}
	p.target = t
	if t == "" {
		// No such user: nothing can be there; creating fails in Set.
		cur.Set("ensure", "absent")
		return nil
	}
	k, err := p.load()
	if err != nil {
		return err
	}
	i, ok := k.index[p.r.Name()]
	if !ok {
		cur.Set("ensure", "absent")
		return nil
	}
	report(cur, k.lines[i].rec, p.r, t)
	return nil
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
func instances(_ context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	if !scope.Has("user") && !scope.Has("target") {
		return errors.New("Attribute 'user' or 'target' is mandatory: the keys of which file?")
	}
	p := &parsed{r: scope, env: env}
	t, err := p.resolveTarget()
	if err != nil || t == "" {
		return err
	}
	p.target = t
	k, err := p.load()
	if err != nil {
		return err
	}
	for i, l := range k.lines {
		if l.rec == nil {
			continue
		}
		if l.rec.Name == "" {
			env.Logger().Debug(fmt.Sprintf("%s: the key on line %d has no name; not listed", t, i+1))
			continue
		}
		if k.index[l.rec.Name] == i {
			report(add(l.rec.Name), l.rec, scope, t)
		}
	}
	return nil
}

// edit returns a private copy of the file to change, read afresh.
func (p *parsed) edit() (*keys, error) {
	if p.keys != nil {
		return p.keys, nil
	}
	if p.target == "" {
		return nil, fmt.Errorf("User '%s' does not exist", p.r.String("user"))
	}
	files.Drop(p.target)
	k, err := p.load()
	if err != nil {
		return nil, err
	}
	c := &keys{lines: make([]line, len(k.lines))}
	for i, l := range k.lines {
		if l.rec != nil {
			r := *l.rec
			l.rec = &r
		}
		c.lines[i] = l
	}
	p.keys = c
	p.idx = -1
	for i := len(c.lines) - 1; i >= 0; i-- {
		if c.lines[i].rec != nil && c.lines[i].rec.Name == p.r.Name() {
			p.idx = i
			break
		}
	}
	return c, nil
}

// Set edits the file in memory; Flush writes it.
func (p *parsed) Set(ctx context.Context, c *applier.Change) error {
	k, err := p.edit()
	if err != nil {
		return err
	}
	if c.Property == "ensure" {
		switch c.Should {
		case "present":
			if !p.r.Has("type") {
				return errors.New("Field 'type' is required")
			}
			if !p.r.Has("key") {
				return errors.New("Field 'key' is required")
			}
			rec := &record{Options: optionList(p.r.Value("options")), Type: p.r.String("type"), Key: p.r.String("key"), Name: p.r.Name()}
			if p.idx >= 0 {
				k.lines[p.idx] = line{rec: rec}
			} else {
				k.lines = append(k.lines, line{rec: rec})
				p.idx = len(k.lines) - 1
			}
		case "absent":
			if p.idx >= 0 {
				k.lines = append(k.lines[:p.idx], k.lines[p.idx+1:]...)
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
	rec := k.lines[p.idx].rec
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

// Flush writes the file as the user when a Set changed it.
func (p *parsed) Flush(ctx context.Context) error {
	if p.keys == nil {
		return nil
	}
	defer files.Drop(p.target)
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
	var b strings.Builder
	b.WriteString(parsedfile.Header(p.now()))
	for _, l := range p.keys.lines {
		if l.rec != nil {
			b.WriteString(l.rec.render())
		} else {
			b.WriteString(l.text)
		}
		b.WriteByte('\n')
	}
	if len(p.keys.lines) == 0 {
		b.WriteByte('\n')
	}
	w := &writer{path: p.target, user: u, asUser: p.r.Bool("drop_privileges"), env: p.env}
	return w.write(ctx, []byte(b.String()))
}
