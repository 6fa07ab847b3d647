// Package inifile is the INI file model ini_setting and ini_subsetting
// share: puppetlabs-inifile 5.4's Puppet::Util::IniFile, rule for rule,
// so that a file pippet rewrites comes out as the module would write it
// (which lines are kept, where a new setting goes, the blank lines around
// a new section, the indentation of an added line).
//
// A file is read once into its lines and sections. The global section
// ("", the settings before any header) comes first; each header opens a
// section that runs to the next. A line is a setting when the module's
// setting expression matches it (the key cannot start with '#' or ';',
// the separator is the key_val_separator stripped of blanks, or one blank
// when it is all blanks); a commented-out setting ("# key = value") is
// where a new setting of that key is inserted. Set updates every line
// holding the key in place, or inserts after the commented one, or adds
// it at the end of its section (a new section at the end of the file);
// Remove deletes the lines holding the key and the section's header once
// nothing else is left in it. Bytes returns the file as the module's
// save writes it: blank lines at a section's end stay after what is
// added to it, and every line ends with a newline.
//
// One departure: a file with two sections of the same name keeps both
// (settings are read and written in the last, as the module does), where
// the module's save writes the last one twice and drops the first.
package inifile

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// Options are the file's syntax: the module's constructor arguments.
type Options struct {
	// KeyValSeparator is written between a new setting's key and value
	// (default " = ").
	KeyValSeparator string
	// SectionPrefix and SectionSuffix frame a section's name in its
	// header (default "[" and "]").
	SectionPrefix, SectionSuffix string
	// IndentChar, repeated IndentWidth times, starts a new setting's
	// line; IndentWidth < 0 takes the section's least indentation.
	IndentChar  string
	IndentWidth int
}

// section is one section: its header's line (start) and its last line
// (end); end < 0 for a section not in the file (new, or an empty global
// section).
type section struct {
	name       string
	start, end int
	isNew      bool
	existing   map[string]string
	additional []kv
	indent     int // least indentation of its settings; -1: none
}

type kv struct{ key, value string }

func (s *section) global() bool { return s.name == "" }

func (s *section) empty() bool {
	if s.global() {
		return s.isNew
	}
	return s.start == s.end
}

func (s *section) get(key string) (string, bool) {
	if v, ok := s.existing[key]; ok {
		return v, true
	}
	for _, a := range s.additional {
		if a.key == key {
			return a.value, true
		}
	}
	return "", false
}

// File is one INI file's lines and sections.
type File struct {
	o                             Options
	lines                         []string
	sections                      []*section
	byName                        map[string]*section
	sectionRe, settingRe, comment *regexp.Regexp
}

// exprs caches the compiled expressions per syntax.
var (
	exprsMu sync.Mutex
	exprs   = map[[3]string][3]*regexp.Regexp{}
)

func compile(o Options) ([3]*regexp.Regexp, error) {
	key := [3]string{o.KeyValSeparator, o.SectionPrefix, o.SectionSuffix}
	exprsMu.Lock()
	defer exprsMu.Unlock()
	if r, ok := exprs[key]; ok {
		return r, nil
	}
	kvs := strings.TrimSpace(o.KeyValSeparator)
	if strings.TrimSpace(o.KeyValSeparator) == "" && o.KeyValSeparator != "" {
		kvs = " "
	}
	var r [3]*regexp.Regexp
	var err error
	if r[0], err = regexp.Compile(`^\s*` + regexp.QuoteMeta(o.SectionPrefix) + `(.*)` + regexp.QuoteMeta(o.SectionSuffix) + `\s*$`); err != nil {
		return r, err
	}
	if r[1], err = regexp.Compile(`^(\s*)([^#;\s]|[^#;\s].*?[^\s` + kvs + `])(\s*` + kvs + `[ \t]*)(.*)\s*$`); err != nil {
		return r, err
	}
	if r[2], err = regexp.Compile(`^(\s*)[#;]+(\s*)(.*?[^\s` + kvs + `])(\s*` + kvs + `[ \t]*)(.*)\s*$`); err != nil {
		return r, err
	}
	if len(exprs) > 256 {
		clear(exprs)
	}
	exprs[key] = r
	return r, nil
}

// Parse reads content (nil or empty: no file) with the syntax o.
func Parse(content []byte, o Options) (*File, error) {
	if o.SectionPrefix == "" && o.SectionSuffix == "" {
		o.SectionPrefix, o.SectionSuffix = "[", "]"
	}
	if o.IndentChar == "" {
		o.IndentChar = " "
	}
	r, err := compile(o)
	if err != nil {
		return nil, err
	}
	f := &File{o: o, byName: map[string]*section{}, sectionRe: r[0], settingRe: r[1], comment: r[2]}
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n') + 1
		if i == 0 {
			i = len(content)
		}
		f.lines = append(f.lines, string(content[:i]))
		content = content[i:]
	}
	n := 0
	n = f.readSection("", 0, n)
	for n < len(f.lines) {
		m := f.sectionRe.FindStringSubmatch(chompNL(f.lines[n]))
		// every line left here is a header: readSection stops at one
		n = f.readSection(m[1], n, n+1)
	}
	return f, nil
}

func chompNL(s string) string { return strings.TrimSuffix(s, "\n") }

// readSection reads the section whose header is line start (the global
// one: from line 0) from line n on, and returns the line it stopped at.
func (f *File) readSection(name string, start, n int) int {
	s := &section{name: name, start: start, end: start, existing: map[string]string{}, indent: -1}
	empty := true
	for ; n < len(f.lines); n++ {
		l := chompNL(f.lines[n])
		if f.sectionRe.MatchString(l) {
			break
		}
		if m := f.settingRe.FindStringSubmatch(l); m != nil {
			s.existing[m[2]] = m[4]
			if s.indent < 0 || len(m[1]) < s.indent {
				s.indent = len(m[1])
			}
		}
		s.end = n
		empty = false
	}
	if name == "" && empty {
		s.end, s.isNew = -1, true
	}
	f.add(s)
	return n
}

func (f *File) add(s *section) {
	f.sections = append(f.sections, s)
	f.byName[s.name] = s
}

// HasSection reports whether the file has the section ("" the global
// one, which it always has).
func (f *File) HasSection(name string) bool { _, ok := f.byName[name]; return ok }

// SectionNames lists the sections in order.
func (f *File) SectionNames() []string {
	out := make([]string, len(f.sections))
	for i, s := range f.sections {
		out[i] = s.name
	}
	return out
}

// Get returns a setting's value and whether the section has it.
func (f *File) Get(sect, key string) (string, bool) {
	s := f.byName[sect]
	if s == nil {
		return "", false
	}
	return s.get(key)
}

// EnsureSection adds the section (empty, at the end) when the file lacks it.
func (f *File) EnsureSection(name string) {
	if f.byName[name] == nil {
		f.add(&section{name: name, start: -1, end: -1, isNew: true, existing: map[string]string{}, indent: -1})
	}
}

func (f *File) index(s *section) int {
	for i, x := range f.sections {
		if x == s {
			return i
		}
	}
	return -1
}

// shift moves the lines of the sections after s by d.
func (f *File) shift(s *section, d int) {
	for _, x := range f.sections[f.index(s)+1:] {
		if !x.isNew {
			x.start += d
			x.end += d
		} else if x.start >= 0 {
			x.start += d
		}
	}
}

func (f *File) indentFor(s *section) string {
	w := f.o.IndentWidth
	if w < 0 {
		w = max(s.indent, 0)
	}
	return strings.Repeat(f.o.IndentChar, w)
}

// Set gives the setting key of section sect the value, with separator
// sep between them on a new line (the module's set_value).
func (f *File) Set(sect, key, sep, value string) {
	f.EnsureSection(sect)
	s := f.byName[sect]
	if _, ok := s.existing[key]; ok {
		for n := s.start; n <= s.end && n < len(f.lines); n++ {
			if m := f.settingRe.FindStringSubmatch(chompNL(f.lines[n])); m != nil && m[2] == key {
				f.lines[n] = m[1] + m[2] + m[3] + value
			}
		}
		s.existing[key] = value
		return
	}
	if n := f.commented(s, key); n >= 0 {
		line := f.indentFor(s) + key + sep + value
		f.lines = append(f.lines[:n+1], append([]string{line}, f.lines[n+1:]...)...)
		s.existing[key] = value
		s.end++
		f.shift(s, 1)
		return
	}
	for i := range s.additional {
		if s.additional[i].key == key {
			s.additional[i].value = value
			return
		}
	}
	s.additional = append(s.additional, kv{key, value})
}

func (f *File) commented(s *section, key string) int {
	if s.isNew {
		return -1
	}
	for n := s.start; n <= s.end && n < len(f.lines); n++ {
		if n < 0 {
			continue
		}
		if m := f.comment.FindStringSubmatch(chompNL(f.lines[n])); m != nil && m[3] == key {
			return n
		}
	}
	return -1
}

// Remove deletes the setting's lines from its section, and the section's
// header when nothing else is left in it (the module's remove_setting).
func (f *File) Remove(sect, key string) {
	s := f.byName[sect]
	if s == nil {
		return
	}
	if _, ok := s.existing[key]; !ok {
		return
	}
	// As the module: each line of the section's range as it was, looked at
	// once by its number while lines are deleted.
	for n, end := s.start, s.end; n <= end; n++ {
		if n < 0 || n >= len(f.lines) {
			continue
		}
		if m := f.settingRe.FindStringSubmatch(chompNL(f.lines[n])); m != nil && m[2] == key {
			f.lines = append(f.lines[:n], f.lines[n+1:]...)
		}
	}
	delete(s.existing, key)
	if !s.isNew {
		s.end--
	}
	f.shift(s, -1)
	if !s.empty() {
		return
	}
	f.lines = append(f.lines[:s.start], f.lines[s.start+1:]...)
	f.shift(s, -1)
	i := f.index(s)
	f.sections = append(f.sections[:i], f.sections[i+1:]...)
	delete(f.byName, s.name)
	for j := len(f.sections) - 1; j >= 0; j-- { // a same-named earlier one, if any, is found again
		if f.sections[j].name == s.name {
			f.byName[s.name] = f.sections[j]
			break
		}
	}
}

var blank = regexp.MustCompile(`^\s*$`)

func puts(b []byte, s string) []byte {
	b = append(b, s...)
	if !strings.HasSuffix(s, "\n") {
		b = append(b, '\n')
	}
	return b
}

// Bytes is the file's content as the module's save writes it.
func (f *File) Bytes() []byte {
	var b []byte
	g := f.byName[""]
	globalEmpty := g == nil || g.isNew && len(g.additional) == 0
	for i, s := range f.sections {
		var ws []string
		if s.isNew && !s.global() {
			if i == 1 && !globalEmpty || i > 1 {
				b = puts(b, "")
			}
			b = puts(b, f.o.SectionPrefix+s.name+f.o.SectionSuffix)
		}
		if !s.isNew {
			for n := max(s.start, 0); n <= s.end && n < len(f.lines); n++ {
				l := f.lines[n]
				if blank.MatchString(chompNL(l)) {
					ws = append(ws, l)
					continue
				}
				for _, w := range ws {
					b = puts(b, w)
				}
				ws = ws[:0]
				b = puts(b, l)
			}
		}
		for _, a := range s.additional {
			b = puts(b, f.indentFor(s)+a.key+f.o.KeyValSeparator+a.value)
		}
		if len(ws) > 0 {
			for _, w := range ws {
				b = puts(b, w)
			}
		} else if s.isNew && len(s.additional) > 0 && i < len(f.sections)-1 {
			b = puts(b, "")
		}
	}
	return b
}

// isSpace is the \s of the expressions (Go's: tab, newline, form feed,
// carriage return, space).
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func trimLeft(l []byte) []byte {
	for len(l) > 0 && isSpace(l[0]) {
		l = l[1:]
	}
	return l
}

// Lookup answers what Parse then HasSection and Get would, reading only
// what it needs: a line is tried as a header only when it starts (after
// blanks) with the section prefix, and as the setting only when it is in
// the section and starts with the key, since no other line can be
// either. It is the read of a converged request, which writes nothing.
func Lookup(content []byte, o Options, sect, key string) (value string, found, hasSection bool, err error) {
	if o.SectionPrefix == "" && o.SectionSuffix == "" {
		o.SectionPrefix, o.SectionSuffix = "[", "]"
	}
	r, err := compile(o)
	if err != nil {
		return "", false, false, err
	}
	sectionRe, settingRe := r[0], r[1]
	in := sect == "" // the global section comes first
	hasSection = in
	prefix := []byte(o.SectionPrefix)
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n') + 1
		if i == 0 {
			i = len(content)
		}
		line := content[:i]
		content = content[i:]
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		t := trimLeft(line)
		if bytes.HasPrefix(t, prefix) {
			if m := sectionRe.FindSubmatch(line); m != nil {
				in = string(m[1]) == sect
				if in && !hasSection {
					hasSection = true
				}
				if in { // a later section of the same name is the one read
					value, found = "", false
				}
				continue
			}
		}
		if !in || !bytes.HasPrefix(t, []byte(key)) {
			continue
		}
		if m := settingRe.FindSubmatch(line); m != nil && string(m[2]) == key {
			value, found = string(m[4]), true
		}
	}
	return value, found, hasSection, nil
}
