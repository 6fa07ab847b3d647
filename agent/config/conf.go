package config

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pippet/pippet/applier/sysfile"
)

// allowedSections are the sections Puppet accepts in puppet.conf; any other
// is an error ("Illegal section"). The agent reads [agent] and [main].
var allowedSections = map[string]bool{"main": true, "server": true, "master": true, "agent": true, "user": true}

var (
	sectionLine = regexp.MustCompile(`^\s*\[(\w+)\]\s*$`)
	settingLine = regexp.MustCompile(`^\s*(\w+)(\s*=\s*)(.*?)\s*$`)
	commentLine = regexp.MustCompile(`^\s*(#.*)?$`)
	fileMeta    = regexp.MustCompile(`\{\s*([^}]+)\s*\}`)
	metaParam   = regexp.MustCompile(`^\s*(\w+)\s*=\s*(\w+)\s*$`)
	commaSplit  = regexp.MustCompile(`\s*,\s*`)
)

// entry is one setting line of puppet.conf.
type entry struct {
	value string
	line  int
}

// confFile is a parsed puppet.conf: per section, the first line that sets
// each name (Puppet's lookup finds the first; a section may appear several
// times and its lines are gathered).
type confFile struct {
	path     string
	sections map[string]map[string]entry
}

// where names a line of the file for errors.
func (c *confFile) where(e entry) string { return fmt.Sprintf("%s:%d", c.path, e.line) }

// readConf reads and parses path; a missing file is an empty one (Puppet
// runs on its defaults without puppet.conf).
func readConf(path string) (*confFile, error) {
	c := &confFile{path: path, sections: map[string]map[string]entry{}}
	if path == "" || path == os.DevNull {
		return c, nil // no puppet.conf (the device is not read: see below)
	}
	// A FIFO or device at puppet.conf is refused, never waited on.
	b, err := sysfile.ReadRegular(path, 0)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading puppet.conf: %w", err)
	}
	return c, c.parse(b)
}

// parse reads puppet.conf's ini format as Puppet's IniFile does: lines
// before the first section belong to [main]; a setting is name = value
// (the value to the end of the line: a # after it is part of the value);
// other lines must be blank or comments.
func (c *confFile) parse(b []byte) error {
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return fmt.Errorf("%s: not UTF-8 text", c.path)
	}
	section := "main"
	for i, raw := range strings.Split(string(b), "\n") {
		n := i + 1
		line := strings.TrimSuffix(raw, "\r")
		if m := sectionLine.FindStringSubmatch(line); m != nil {
			section = m[1]
			if !allowedSections[section] {
				return fmt.Errorf("%s:%d: illegal section [%s]: puppet.conf's sections are [main], [agent], [server], [master] and [user] (environments are directories with an environment.conf)", c.path, n, section)
			}
			continue
		}
		if m := settingLine.FindStringSubmatch(line); m != nil {
			v, err := translate(m[3])
			if err != nil {
				return fmt.Errorf("%s:%d: %s: %w", c.path, n, m[1], err)
			}
			s := c.sections[section]
			if s == nil {
				s = map[string]entry{}
				c.sections[section] = s
			}
			if _, dup := s[m[1]]; !dup {
				s[m[1]] = entry{value: v, line: n}
			}
			continue
		}
		if commentLine.MatchString(line) {
			continue
		}
		return fmt.Errorf("%s:%d: not a setting, section or comment: %q", c.path, n, line)
	}
	return nil
}

// translateValue is Puppet's ValueTranslator, which puppet.conf's values
// and the command line's go through: true and false in any case are the
// booleans; one leading and one trailing quote are dropped, then trailing
// blanks.
func translateValue(v string) string {
	switch {
	case strings.EqualFold(v, "true"):
		return "true"
	case strings.EqualFold(v, "false"):
		return "false"
	}
	if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'") {
		v = v[1:]
	}
	if strings.HasSuffix(v, `"`) || strings.HasSuffix(v, "'") {
		v = v[:len(v)-1]
	}
	return strings.TrimRight(v, " \t")
}

// translate is Puppet's ValueTranslator for puppet.conf values (true and
// false in any case are booleans; one leading and one trailing quote are
// dropped) followed by its file-metadata extraction: "{owner = x, mode =
// 0750}" in a value is Puppet's per-file metadata, removed from the value;
// a brace group that is not such metadata is an error, as in Puppet.
func translate(v string) (string, error) {
	v = translateValue(v)
	loc := fileMeta.FindStringSubmatchIndex(v)
	if loc == nil {
		return v, nil
	}
	params := v[loc[2]:loc[3]]
	for _, p := range commaSplit.Split(params, -1) {
		m := metaParam.FindStringSubmatch(p)
		if m == nil {
			return "", fmt.Errorf("could not parse %q (braces hold file metadata: {owner = NAME, group = NAME, mode = NNNN})", v)
		}
		switch m[1] {
		case "owner", "group":
		case "mode":
			if strings.Trim(m[2], "0123456789") != "" {
				return "", fmt.Errorf("file modes must be numbers: %q", v)
			}
		default:
			return "", fmt.Errorf("invalid file option %q in %q", m[1], v)
		}
	}
	return strings.TrimRight(v[:loc[0]]+v[loc[1]:], " \t"), nil
}
