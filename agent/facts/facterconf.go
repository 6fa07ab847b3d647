package facts

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
)

// Facter's configuration file, facter.conf, as far as its fact cache
// reads it: facts.ttls and fact-groups. The file is HOCON; readHOCON
// reads the part of the language facter.conf files are written in
// (objects, arrays, quoted and unquoted strings, numbers, booleans,
// comments, dotted keys), and says what it does not read.

// FacterLocation is where a Facter reads its facter.conf and keeps its
// fact cache.
type FacterLocation struct {
	Conf, CacheDir string
}

// FacterLocations are Facter's locations: Debian's Facter first
// (/etc/facter/facter.conf, its cache in /var/cache/facter/facts), then
// the all-in-one agent's. Gather uses the first whose facter.conf exists.
var FacterLocations = []FacterLocation{
	{Conf: "/etc/facter/facter.conf", CacheDir: "/var/cache/facter/facts"},
	{Conf: "/etc/puppetlabs/facter/facter.conf", CacheDir: "/opt/puppetlabs/facter/cache/cached_facts"},
}

// facterLocation is the facter.conf and cache directory o says, else
// Facter's (FacterLocations): ok is false when there is no facter.conf.
func facterLocation(o Options) (FacterLocation, bool) {
	if o.FacterConf == "-" || (o.FacterConf == "" && o.Root != "" && o.Root != "/") {
		// Another system's files (Options.Root): not this machine's cache.
		return FacterLocation{}, false
	}
	if o.FacterConf != "" {
		dir := o.CacheDir
		if dir == "" {
			dir = FacterLocations[0].CacheDir
		}
		return FacterLocation{Conf: o.FacterConf, CacheDir: dir}, true
	}
	for _, l := range FacterLocations {
		if _, err := os.Stat(l.Conf); err == nil {
			if o.CacheDir != "" {
				l.CacheDir = o.CacheDir
			}
			return l, true
		}
	}
	return FacterLocation{}, false
}

// hoconNumber is a number as the file wrote it.
type hoconNumber string

// readHOCON parses a facter.conf.
func readHOCON(b []byte) (map[string]any, error) {
	p := &hoconParser{s: []rune(string(b)), line: 1}
	p.skipSpace(true)
	root := map[string]any{}
	if p.peek() == '{' {
		p.pos++
		if err := p.fields(root, '}'); err != nil {
			return nil, err
		}
		p.skipSpace(true)
		if p.pos < len(p.s) {
			return nil, p.errorf("unexpected %q after the closing brace", p.s[p.pos])
		}
		return root, nil
	}
	if err := p.fields(root, 0); err != nil {
		return nil, err
	}
	return root, nil
}

type hoconParser struct {
	s    []rune
	pos  int
	line int
}

func (p *hoconParser) errorf(format string, a ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, a...))
}

func (p *hoconParser) peek() rune {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// skipSpace skips blanks and comments, and newlines when nl is set.
func (p *hoconParser) skipSpace(nl bool) {
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '\n':
			if !nl {
				return
			}
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\ufeff':
			p.pos++
		case c == '#' || (c == '/' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '/'):
			for p.pos < len(p.s) && p.s[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// fields reads key-value pairs into m until end ('}' or 0: the end of
// the file).
func (p *hoconParser) fields(m map[string]any, end rune) error {
	for {
		p.skipSpace(true)
		if p.pos >= len(p.s) {
			if end != 0 {
				return p.errorf("expecting close brace } or a comma, got end of file")
			}
			return nil
		}
		if p.peek() == end {
			p.pos++
			return nil
		}
		if p.peek() == ',' {
			p.pos++
			continue
		}
		path, err := p.key()
		if err != nil {
			return err
		}
		p.skipSpace(false)
		switch p.peek() {
		case ':', '=':
			p.pos++
		case '{':
		case '+':
			return p.errorf("+= is not supported")
		default:
			return p.errorf("expecting a colon or equals sign after key %q", strings.Join(path, "."))
		}
		p.skipSpace(true)
		v, err := p.value()
		if err != nil {
			return err
		}
		setPath(m, path, v)
		p.skipSpace(false)
		switch c := p.peek(); {
		case c == ',' || c == '\n' || c == end || c == 0:
		default:
			return p.errorf("expecting close brace } or a comma, got %q", c)
		}
	}
}

// setPath sets m[a][b]... = v, merging objects as HOCON does.
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := path[len(path)-1]
	if nv, ok := v.(map[string]any); ok {
		if old, ok := m[last].(map[string]any); ok {
			for k, x := range nv {
				setPath(old, []string{k}, x)
			}
			return
		}
	}
	m[last] = v
}

// key reads a key: quoted or unquoted parts joined by dots.
func (p *hoconParser) key() ([]string, error) {
	var path []string
	var cur strings.Builder
	quotedPart := false
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			s, err := p.quoted()
			if err != nil {
				return nil, err
			}
			cur.WriteString(s)
			quotedPart = true
			continue
		case c == '.':
			path = append(path, cur.String())
			cur.Reset()
			quotedPart = false
			p.pos++
			continue
		case c == ':' || c == '=' || c == '{' || c == '\n' || c == ',' || c == '}' || c == '[' || c == ']' || c == '+' || c == '#':
		case c == ' ' || c == '\t':
			// Blanks end a key unless more of it follows.
			q := p.pos
			for q < len(p.s) && (p.s[q] == ' ' || p.s[q] == '\t') {
				q++
			}
			if q < len(p.s) && (p.s[q] == ':' || p.s[q] == '=' || p.s[q] == '{') {
				p.pos = q
				break
			}
			return nil, p.errorf("expecting a colon or equals sign after key %q", cur.String())
		default:
			cur.WriteRune(c)
			p.pos++
			continue
		}
		break
	}
	if cur.Len() == 0 && !quotedPart {
		return nil, p.errorf("expecting a key")
	}
	return append(path, cur.String()), nil
}

// quoted reads a "quoted string" at p.pos.
func (p *hoconParser) quoted() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case '\n':
			return "", p.errorf("a newline in a quoted string")
		case '"':
			p.pos++
			s, err := strconv.Unquote(string(p.s[start:p.pos]))
			if err != nil {
				return "", p.errorf("bad quoted string %s", string(p.s[start:p.pos]))
			}
			return s, nil
		}
		p.pos++
	}
	return "", p.errorf("unterminated quoted string")
}

// value reads an object, an array or a simple value.
func (p *hoconParser) value() (any, error) {
	switch p.peek() {
	case '{':
		p.pos++
		m := map[string]any{}
		return m, p.fields(m, '}')
	case '[':
		p.pos++
		var a []any
		for {
			p.skipSpace(true)
			switch p.peek() {
			case 0:
				return nil, p.errorf("expecting close bracket ] or a comma, got end of file")
			case ']':
				p.pos++
				return a, nil
			case ',':
				p.pos++
				continue
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			p.skipSpace(false)
			if c := p.peek(); c != ',' && c != '\n' && c != ']' {
				return nil, p.errorf("expecting close bracket ] or a comma, got %q", c)
			}
		}
	case '$':
		return nil, p.errorf("substitutions (${...}) are not supported")
	}
	// A simple value: quoted and unquoted pieces up to the end of the
	// line, a comma or a closing bracket, concatenated with their blanks.
	var sb strings.Builder
	quotedAny := false
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '"' {
			s, err := p.quoted()
			if err != nil {
				return nil, err
			}
			sb.WriteString(s)
			quotedAny = true
			continue
		}
		if c == '\n' || c == ',' || c == '}' || c == ']' || c == '#' || (c == '/' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '/') {
			break
		}
		if c == '{' || c == '[' || c == '$' {
			return nil, p.errorf("unexpected %q in a value", c)
		}
		sb.WriteRune(c)
		p.pos++
	}
	raw := sb.String()
	if !quotedAny {
		raw = strings.TrimRightFunc(raw, unicode.IsSpace)
		switch raw {
		case "":
			return nil, p.errorf("expecting a value")
		case "true", "yes", "on":
			return true, nil
		case "false", "no", "off":
			return false, nil
		case "null":
			return nil, nil
		}
		if _, err := strconv.ParseFloat(raw, 64); err == nil && !strings.ContainsAny(raw, " \t") {
			return hoconNumber(raw), nil
		}
		return raw, nil
	}
	return strings.TrimRightFunc(raw, unicode.IsSpace), nil
}

// facterConf is what the fact cache reads of facter.conf.
type facterConf struct {
	// ttls are facts.ttls' entries, in order: a group or fact name and
	// its time to live as written.
	ttls []ttlEntry
	// groups are fact-groups: a group's name and its facts.
	groups map[string][]string
	// hasTTLs: facts.ttls is a non-empty list.
	hasTTLs bool
}

type ttlEntry struct {
	name string
	raw  any // string, hoconNumber, ...
}

// readFacterConf reads path as Facter does: a file that cannot be read
// is no configuration, one that does not parse is none either, with a
// warning in Facter's words.
func readFacterConf(path string) (facterConf, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return facterConf{}, nil
		}
		return facterConf{}, fmt.Errorf("Facter failed to read config file %s with the following error: %w", path, err)
	}
	m, err := readHOCON(b)
	if err != nil {
		return facterConf{}, fmt.Errorf("Facter failed to read config file %s with the following error: %s: %w", path, path, err)
	}
	var c facterConf
	if facts, ok := m["facts"].(map[string]any); ok {
		if list, ok := facts["ttls"].([]any); ok {
			c.hasTTLs = len(list) > 0
			for _, e := range list {
				obj, ok := e.(map[string]any)
				if !ok {
					continue
				}
				// An object of several keys: Ruby's hash order is the
				// file's; the keys are taken sorted here.
				for _, k := range sortedKeys(obj) {
					c.ttls = append(c.ttls, ttlEntry{name: k, raw: obj[k]})
				}
			}
		}
	}
	if fg, ok := m["fact-groups"].(map[string]any); ok {
		c.groups = map[string][]string{}
		for name, v := range fg {
			list, _ := v.([]any)
			var facts []string
			for _, f := range list {
				if s, ok := f.(string); ok {
					facts = append(facts, s)
				}
			}
			c.groups[name] = facts
		}
	}
	return c, nil
}

// ttlUnits are Facter's units of a ttl, in the order its error lists
// them ("" is milliseconds).
var ttlUnits = []struct {
	name string
	// per is the unit in nanoseconds.
	per int64
}{
	{"ns", 1}, {"nanos", 1}, {"nanoseconds", 1},
	{"us", 1e3}, {"micros", 1e3}, {"microseconds", 1e3},
	{"", 1e6}, {"ms", 1e6}, {"milis", 1e6}, {"milliseconds", 1e6},
	{"s", 1e9}, {"seconds", 1e9},
	{"m", 60e9}, {"minutes", 60e9},
	{"h", 3600e9}, {"hours", 3600e9},
	{"d", 86400e9}, {"days", 86400e9},
}

// TTLSeconds reads a facts.ttls value as Facter 4 does: a whole number
// ("1.5" is 1), a blank, a unit, which gains an "s" when longer than two
// letters ("1 hour", "30 days", "3600 seconds"; no unit: milliseconds),
// in whole seconds, rounded down. An unknown unit is an error in
// Facter's words.
func TTLSeconds(ttl string) (int64, error) {
	fs := strings.Fields(ttl)
	if len(fs) == 0 {
		// Ruby's "".split yields no duration and no unit: nil.to_i.
		return 0, nil
	}
	duration := fs[0]
	unit := ""
	if i := strings.Index(strings.TrimLeftFunc(ttl, unicode.IsSpace), duration); i >= 0 {
		rest := strings.TrimLeftFunc(ttl, unicode.IsSpace)[i+len(duration):]
		unit = strings.TrimLeftFunc(rest, unicode.IsSpace)
	}
	if len(unit) > 2 && !strings.HasSuffix(unit, "s") {
		unit += "s"
	}
	for _, u := range ttlUnits {
		if u.name == unit {
			return rubyToI(duration) * u.per / 1e9, nil
		}
	}
	names := make([]string, 0, len(ttlUnits))
	for _, u := range ttlUnits {
		if u.name != "" {
			names = append(names, u.name)
		}
	}
	return 0, fmt.Errorf("Could not parse time unit %s (try %s)", unit, strings.Join(names, ", "))
}

// rubyToI is Ruby's String#to_i: the leading integer, 0 without one.
func rubyToI(s string) int64 {
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	digits := end
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '_' && end > digits) {
		end++
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s[:end], "_", ""), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
