package applier

import (
	"path"
	"strings"
)

// Ancestors is an AutoRel.Titles for a path: its parent directories,
// nearest first ("/etc/ssh/sshd_config" → "/etc/ssh", "/etc", "/").
// A value that is not an absolute path names none.
func Ancestors(v any) []string {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "/") {
		return nil
	}
	s = path.Clean(s)
	var out []string
	for s != "/" {
		s = path.Dir(s)
		out = append(out, s)
	}
	return out
}

// Names is an AutoRel.Titles for accounts given by name or number: the
// strings that are not all digits (an account given by its id names no
// resource), each of an array's too.
func Names(v any) []string {
	var out []string
	add := func(x any) {
		s, ok := x.(string)
		if !ok || s == "" {
			return
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				out = append(out, s)
				return
			}
		}
	}
	if l, ok := v.([]any); ok {
		for _, x := range l {
			add(x)
		}
		return out
	}
	add(v)
	return out
}

// Executable is an AutoRel.Titles for a command line: its program, when
// the command names it by absolute path ("/usr/bin/foo -x" → "/usr/bin/foo").
// An array (a command given as argv) names its first element.
func Executable(v any) []string {
	if l, ok := v.([]any); ok {
		if len(l) == 0 {
			return nil
		}
		v = l[0]
	}
	s, ok := v.(string)
	if !ok {
		return nil
	}
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	s = strings.Trim(s, `"'`)
	if !strings.HasPrefix(s, "/") {
		return nil
	}
	return []string{s}
}

// AbsPath is an AutoRel.Titles for a path that names a resource
// itself: the path when absolute (a link's target).
func AbsPath(v any) []string {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "/") {
		return nil
	}
	return []string{path.Clean(s)}
}
