package augeas

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// argKind is what one argument of a command is, as augeas_core's parser
// reads it.
type argKind uint8

const (
	argPath       argKind = iota // a path: the context is put before a relative one
	argString                    // a word, or a quoted string
	argComparator                // ==, !=, =~, <=, >=, <, >
	argInt                       // digits
	argRest                      // the rest of the line
)

// commands are the commands of changes and onlyif, with their arguments
// (augeas_core's table).
var commands = map[string][]argKind{
	"set":         {argPath, argString},
	"setm":        {argPath, argString, argString},
	"rm":          {argPath},
	"remove":      {argPath},
	"clear":       {argPath},
	"clearm":      {argPath, argString},
	"touch":       {argPath},
	"mv":          {argPath, argPath},
	"move":        {argPath, argPath},
	"rename":      {argPath, argString},
	"insert":      {argString, argString, argPath},
	"ins":         {argString, argString, argPath},
	"get":         {argPath, argComparator, argString},
	"values":      {argPath, argRest},
	"defvar":      {argString, argPath},
	"defnode":     {argString, argPath, argString},
	"match":       {argPath, argRest},
	"size":        {argComparator, argInt},
	"include":     {argString},
	"not_include": {argString},
	"==":          {argRest},
	"!=":          {argRest},
}

// command is one parsed command: its name and its arguments.
type augCmd struct {
	Name string
	Args []string
}

func (c augCmd) String() string { return c.Name + " " + strings.Join(c.Args, " ") }

// params renders the arguments as Puppet's messages do (a Ruby array).
func (c augCmd) params() string {
	q := make([]string, len(c.Args))
	for i, a := range c.Args {
		q[i] = strconv.Quote(a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parseCommands reads lines of commands (each element of lines may hold
// several, one a line) as augeas_core does: blank lines skipped; the
// command name a word, == or !=; each argument after blanks; a relative
// path prefixed by context (given a trailing slash); extra words after
// the last argument ignored.
func parseCommands(lines []string, context string) ([]augCmd, error) {
	if context != "" && !strings.HasSuffix(context, "/") {
		context += "/"
	}
	var out []augCmd
	for _, data := range lines {
		for _, line := range strings.Split(data, "\n") {
			line = strings.Trim(line, " \t\n\v\f\r\x00")
			if line == "" {
				continue
			}
			c, err := parseLine(line, context)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func parseLine(line, context string) (augCmd, error) {
	pos := 0
	switch {
	case strings.HasPrefix(line, "==") || strings.HasPrefix(line, "!="):
		pos = 2
	default:
		for pos < len(line) && isWord(line[pos]) {
			pos++
		}
	}
	name := line[:pos]
	formals, ok := commands[name]
	if !ok {
		return augCmd{}, fmt.Errorf("Unknown command %s", name)
	}
	c := augCmd{Name: name}
	for n, f := range formals {
		for pos < len(line) && isSpace(line[pos]) {
			pos++
		}
		switch f {
		case argPath:
			p, next, err := scanPath(line, pos)
			if err != nil {
				return c, err
			}
			pos = next
			if len(p) >= 1 && (p[0] == '\'' || p[0] == '"') {
				if len(p) >= 2 {
					p = p[1 : len(p)-1]
				} else {
					p = ""
				}
			}
			p = strings.TrimSuffix(p, "/")
			if !strings.HasPrefix(p, "$") && !strings.HasPrefix(p, "/") {
				p = context + p
			}
			c.Args = append(c.Args, p)
		case argString:
			if pos < len(line) && (line[pos] == '\'' || line[pos] == '"') {
				delim := line[pos]
				pos++
				var b strings.Builder
				for pos < len(line) && line[pos] != delim {
					if line[pos] == '\\' && pos+1 < len(line) {
						if line[pos+1] != delim {
							b.WriteByte('\\')
						}
						b.WriteByte(line[pos+1])
						pos += 2
						continue
					}
					b.WriteByte(line[pos])
					pos++
				}
				if pos < len(line) {
					pos++ // the closing quote
				}
				c.Args = append(c.Args, b.String())
			} else {
				start := pos
				for pos < len(line) && !isSpace(line[pos]) {
					pos++
				}
				if pos == start {
					return c, fmt.Errorf("missing string argument %d for %s", n+1, name)
				}
				c.Args = append(c.Args, line[start:pos])
			}
		case argComparator:
			cmp := ""
			for _, op := range []string{"==", "!=", "=~", "<=", ">=", "<", ">"} {
				if strings.HasPrefix(line[pos:], op) {
					cmp = op
					break
				}
			}
			if cmp == "" {
				return c, fmt.Errorf("invalid comparator for command %s", name)
			}
			pos += len(cmp)
			c.Args = append(c.Args, cmp)
		case argInt:
			start := pos
			for pos < len(line) && line[pos] >= '0' && line[pos] <= '9' {
				pos++
			}
			n, _ := strconv.Atoi(line[start:pos]) // none reads as 0, as Ruby's nil.to_i
			c.Args = append(c.Args, strconv.Itoa(n))
		case argRest:
			c.Args = append(c.Args, line[pos:])
			pos = len(line)
		}
	}
	return c, nil
}

// scanPath reads a path from pos: up to the first blank outside brackets
// and quotes (a backslash escapes the next character). It returns the
// path as written (quotes included) and the position after the blank.
func scanPath(line string, pos int) (string, int, error) {
	start := pos
	nbracket := 0
	single, double := false, false
	for pos < len(line) {
		ch := line[pos]
		if ch == '\\' && pos+1 < len(line) {
			pos += 2
			continue
		}
		pos++
		switch ch {
		case '[':
			nbracket++
		case ']':
			nbracket--
		case '\'':
			single = !single
		case '"':
			double = !double
		}
		if nbracket < 0 {
			return "", 0, errors.New("unmatched [")
		}
		if nbracket == 0 && !single && !double && isSpace(ch) {
			return line[start : pos-1], pos, nil
		}
	}
	return line[start:pos], pos, nil
}

// parseArray reads an array literal of onlyif's == and != (['a', "b"]):
// single-quoted strings with \' and \\, double-quoted ones with Ruby's
// escapes.
func parseArray(s string) ([]string, error) {
	i := 0
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	bad := func() error { return fmt.Errorf("Unexpected character in array at: %s", s[i:]) }
	skip()
	if i >= len(s) || s[i] != '[' {
		return nil, bad()
	}
	i++
	skip()
	out := []string{}
	if i < len(s) && s[i] == ']' {
		i++
		skip()
		if i != len(s) {
			return nil, bad()
		}
		return out, nil
	}
	for {
		if i >= len(s) {
			return nil, bad()
		}
		var str string
		var err error
		switch s[i] {
		case '\'':
			str, i, err = singleQuoted(s, i+1)
		case '"':
			str, i, err = doubleQuoted(s, i+1)
		default:
			return nil, bad()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, str)
		skip()
		if i < len(s) && s[i] == ',' {
			i++
			skip()
			continue
		}
		if i < len(s) && s[i] == ']' {
			i++
			skip()
			if i != len(s) {
				return nil, bad()
			}
			return out, nil
		}
		return nil, bad()
	}
}

func singleQuoted(s string, i int) (string, int, error) {
	var b strings.Builder
	for i < len(s) {
		switch {
		case s[i] == '\'':
			return b.String(), i + 1, nil
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i += 2
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return "", i, errors.New("unterminated string in array")
}

func doubleQuoted(s string, i int) (string, int, error) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		if c == '"' {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case '\\', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case 's':
			b.WriteByte(' ')
		case 'x':
			j := i
			for j < len(s) && j < i+2 && isHex(s[j]) {
				j++
			}
			if j == i {
				return "", i, errors.New("invalid escape in array")
			}
			n, _ := strconv.ParseUint(s[i:j], 16, 8)
			b.WriteByte(byte(n))
			i = j
		case 'u':
			j := i
			for j < len(s) && j < i+4 && isHex(s[j]) {
				j++
			}
			if j-i != 4 {
				return "", i, errors.New("invalid escape in array")
			}
			n, _ := strconv.ParseUint(s[i:j], 16, 32)
			b.WriteRune(rune(n))
			i = j
		default:
			if e >= '0' && e <= '7' {
				j := i - 1
				for j < len(s) && j < i+2 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i-1:j], 8, 16)
				b.WriteByte(byte(n))
				i = j
				continue
			}
			return "", i, errors.New("invalid escape in array")
		}
	}
	return "", i, errors.New("unterminated string in array")
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
