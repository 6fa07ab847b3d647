package protocol

import "unicode/utf8"

// fastParams reads the two common shapes of a params document without
// building a YAML tree:
//
//	{ensure: file, mode: '0644', content: "hello\n"}
//
// a one-line flow mapping of simple keys and plain, single- or
// double-quoted values, and
//
//	ensure: file
//	mode: '0644'
//	content: |
//	  hello
//	  world
//
// a block mapping with one simple key per line at column 0 whose values
// are plain or quoted scalars on the same line, or literal block scalars
// (| or |-) without blank lines. Plain values go through the same
// resolvePlain as the general path. It answers ok=false for anything
// outside that narrow grammar (and for any value the general path would
// refuse), and the general path decides. FuzzParseParams checks that both
// paths agree.
func fastParams(src []byte) (map[string]any, bool) {
	i := skipSpaces(src, 0)
	if i < len(src) && src[i] == '{' {
		return fastFlow(src, i)
	}
	if i == 0 && len(src) > 0 && src[0] != '\n' {
		return fastBlock(src)
	}
	return nil, false
}

// fastMaxKeys bounds the entries the fast path reads: a document with more
// (a million repeated keys, say) goes to the general path, which bounds
// the values a document may make.
const fastMaxKeys = 256

// fastFlow reads a one-line flow mapping starting at src[i] == '{'.
func fastFlow(src []byte, i int) (map[string]any, bool) {
	i = skipSpaces(src, i+1)
	m := make(map[string]any, 4)
	if i < len(src) && src[i] == '}' {
		return m, skipSpaces(src, i+1) == len(src)
	}
	for {
		key, j, ok := fastKey(src, i)
		if !ok {
			return nil, false
		}
		i = skipSpaces(src, j)
		if i+1 >= len(src) || src[i] != ':' || src[i+1] != ' ' {
			return nil, false
		}
		i = skipSpaces(src, i+1)
		val, j, ok := fastScalar(src, i)
		if !ok {
			return nil, false
		}
		m[key] = val
		if len(m) > fastMaxKeys {
			return nil, false
		}
		i = skipSpaces(src, j)
		if i >= len(src) {
			return nil, false
		}
		switch src[i] {
		case ',':
			i = skipSpaces(src, i+1)
			continue
		case '}':
			return m, skipSpaces(src, i+1) == len(src)
		}
		return nil, false
	}
}

// fastBlock reads a block mapping: KEY: VALUE lines at column 0, where
// VALUE is a one-line scalar or a literal block scalar indented below.
func fastBlock(src []byte) (map[string]any, bool) {
	m := make(map[string]any, 4)
	i := 0
	for n := 0; i < len(src); n++ {
		if n >= fastMaxKeys {
			return nil, false
		}
		key, j, ok := fastKey(src, i)
		if !ok || j+1 >= len(src) || src[j] != ':' || src[j+1] != ' ' {
			return nil, false
		}
		i = skipSpaces(src, j+1)
		if i < len(src) && src[i] == '|' {
			val, j, ok := fastLiteral(src, i)
			if !ok {
				return nil, false
			}
			m[key] = val
			i = j
			continue
		}
		val, j, ok := fastScalar(src, i)
		if !ok {
			return nil, false
		}
		i = skipSpaces(src, j)
		if i < len(src) {
			if src[i] != '\n' {
				return nil, false
			}
			i++
		}
		m[key] = val
	}
	return m, len(m) > 0
}

// fastLiteral reads a literal block scalar whose indicator is at src[i]:
// "|" (clip: one final newline) or "|-" (strip: none), right before the
// line break, then lines indented by the first line's indentation, each
// ending in a line break. It returns the value and the index after the
// block, which is the start of a line at column 0 or the end of src.
func fastLiteral(src []byte, i int) (string, int, bool) {
	strip := false
	i++
	if i < len(src) && src[i] == '-' {
		strip = true
		i++
	}
	if i >= len(src) || src[i] != '\n' {
		return "", 0, false
	}
	i++
	indent := 0
	for i+indent < len(src) && src[i+indent] == ' ' {
		indent++
	}
	if indent == 0 {
		return "", 0, false
	}
	var stack [512]byte
	out := stack[:0]
	for i < len(src) {
		sp := 0
		for i+sp < len(src) && src[i+sp] == ' ' {
			sp++
		}
		if sp == 0 {
			break // the next key
		}
		if sp < indent {
			return "", 0, false
		}
		i += indent
		ls := i
		if i+sp-indent < len(src) && src[i+sp-indent] == '\t' {
			// yaml.v3 takes a tab after leading spaces for indentation.
			return "", 0, false
		}
		for i < len(src) && src[i] != '\n' {
			if src[i] == '\t' {
				i++
				continue
			}
			n := fastChar(src, i)
			if n == 0 {
				return "", 0, false
			}
			i += n
		}
		if i >= len(src) || i == ls+sp-indent {
			// No final line break, or a line of spaces only.
			return "", 0, false
		}
		out = append(out, src[ls:i+1]...)
		i++
	}
	if strip {
		out = out[:len(out)-1]
	}
	return string(out), i, true
}

// fastKey reads a key [A-Za-z_][A-Za-z0-9_]* at src[i].
func fastKey(src []byte, i int) (string, int, bool) {
	ks := i
	for i < len(src) && (isAlpha(src[i]) || src[i] == '_' || (i > ks && isDigit(src[i]))) {
		i++
	}
	if i == ks {
		return "", 0, false
	}
	return internKey(src[ks:i]), i, true
}

// fastScalar reads a one-line plain, single- or double-quoted scalar at
// src[i] and returns its value and the index after it.
func fastScalar(src []byte, i int) (any, int, bool) {
	if i >= len(src) {
		return nil, 0, false
	}
	switch c := src[i]; {
	case c == '\'':
		return fastSingle(src, i)
	case c == '"':
		return fastDouble(src, i)
	case isAlpha(c) || isDigit(c) || c == '_' || c == '.' || c == '/' ||
		((c == '-' || c == '+') && i+1 < len(src) && (isDigit(src[i+1]) || src[i+1] == '.')):
		vs := i
		end := i
		for i < len(src) {
			if isPlainByte(src[i]) {
				i++
				end = i
				continue
			}
			if src[i] == ' ' {
				// A space inside the value only before another value byte.
				if j := skipSpaces(src, i); j < len(src) && isPlainByte(src[j]) {
					i = j
					continue
				}
			}
			break
		}
		if v, ok := internPlain(src[vs:end]); ok {
			return v, end, true
		}
		v, err := resolvePlain(string(src[vs:end]))
		if err != nil {
			return nil, 0, false
		}
		return v, end, true
	}
	return nil, 0, false
}

func isPlainByte(b byte) bool {
	return isAlpha(b) || isDigit(b) || b == '_' || b == '.' || b == '/' || b == '-' || b == '+' || b == '='
}

// fastSingle reads a single-quoted scalar on one line (” is a quote).
func fastSingle(src []byte, i int) (any, int, bool) {
	var stack [256]byte
	i++
	vs := i
	var sb []byte
	for {
		if i >= len(src) {
			return nil, 0, false
		}
		if src[i] == '\'' {
			if i+1 < len(src) && src[i+1] == '\'' {
				if sb == nil {
					sb = stack[:0]
				}
				sb = append(sb, src[vs:i+1]...)
				i += 2
				vs = i
				continue
			}
			break
		}
		n := fastChar(src, i)
		if n == 0 {
			return nil, 0, false
		}
		i += n
	}
	if sb == nil {
		return string(src[vs:i]), i + 1, true
	}
	return string(append(sb, src[vs:i]...)), i + 1, true
}

// fastDouble reads a double-quoted scalar on one line with the escapes
// YAML 1.1 defines (as yaml.v3 reads them).
func fastDouble(src []byte, i int) (any, int, bool) {
	var stack [256]byte
	i++
	vs := i
	var sb []byte
	for {
		if i >= len(src) {
			return nil, 0, false
		}
		c := src[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			n := fastChar(src, i)
			if n == 0 {
				return nil, 0, false
			}
			i += n
			continue
		}
		if sb == nil {
			sb = stack[:0]
		}
		sb = append(sb, src[vs:i]...)
		if i+1 >= len(src) {
			return nil, 0, false
		}
		e := src[i+1]
		i += 2
		code := 0
		switch e {
		case '0':
			sb = append(sb, 0)
		case 'a':
			sb = append(sb, '\a')
		case 'b':
			sb = append(sb, '\b')
		case 't':
			sb = append(sb, '\t')
		case 'n':
			sb = append(sb, '\n')
		case 'v':
			sb = append(sb, '\v')
		case 'f':
			sb = append(sb, '\f')
		case 'r':
			sb = append(sb, '\r')
		case 'e':
			sb = append(sb, 0x1b)
		case ' ', '"', '\'', '\\':
			sb = append(sb, e)
		case 'N':
			sb = utf8.AppendRune(sb, 0x85)
		case '_':
			sb = utf8.AppendRune(sb, 0xa0)
		case 'L':
			sb = utf8.AppendRune(sb, 0x2028)
		case 'P':
			sb = utf8.AppendRune(sb, 0x2029)
		case 'x':
			code = 2
		case 'u':
			code = 4
		case 'U':
			code = 8
		default:
			return nil, 0, false
		}
		if code > 0 {
			if i+code > len(src) {
				return nil, 0, false
			}
			r := 0
			for _, h := range src[i : i+code] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | int(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | int(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | int(h-'A'+10)
				default:
					return nil, 0, false
				}
			}
			if r >= 0xd800 && r <= 0xdfff || r > 0x10ffff {
				return nil, 0, false
			}
			sb = utf8.AppendRune(sb, rune(r))
			i += code
		}
		vs = i
	}
	if sb == nil {
		return string(src[vs:i]), i + 1, true
	}
	return string(append(sb, src[vs:i]...)), i + 1, true
}

// fastChar returns the length of the character at src[i] when it is one
// the fast path takes as is inside quotes and literal blocks: printable
// ASCII, or a printable non-ASCII character that is not one of YAML 1.1's
// line breaks (U+0085, U+2028, U+2029) or a byte order mark. 0 otherwise.
func fastChar(src []byte, i int) int {
	c := src[i]
	if c < utf8.RuneSelf {
		if c >= 0x20 && c <= 0x7e {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(src[i:])
	switch {
	case r == utf8.RuneError, r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff,
		r >= 0xd800 && r <= 0xdfff, r == 0xfffe, r == 0xffff:
		return 0
	}
	return n
}

// internKey returns the common attribute names without allocating.
func internKey(b []byte) string {
	switch string(b) {
	case "ensure":
		return "ensure"
	case "content":
		return "content"
	case "mode":
		return "mode"
	case "owner":
		return "owner"
	case "group":
		return "group"
	case "source":
		return "source"
	case "target":
		return "target"
	case "path":
		return "path"
	case "message":
		return "message"
	case "command":
		return "command"
	case "creates":
		return "creates"
	case "backup":
		return "backup"
	case "replace":
		return "replace"
	case "force":
		return "force"
	case "recurse":
		return "recurse"
	case "name":
		return "name"
	case "provider":
		return "provider"
	}
	return string(b)
}

// internPlain returns common plain values that resolve to themselves as
// strings, without allocating.
func internPlain(b []byte) (any, bool) {
	switch string(b) {
	case "file":
		return "file", true
	case "directory":
		return "directory", true
	case "present":
		return "present", true
	case "absent":
		return "absent", true
	case "link":
		return "link", true
	case "root":
		return "root", true
	case "running":
		return "running", true
	case "stopped":
		return "stopped", true
	case "installed":
		return "installed", true
	case "latest":
		return "latest", true
	}
	return nil, false
}

// internType returns the common type names without allocating.
func internType(b []byte) string {
	switch string(b) {
	case "file":
		return "file"
	case "exec":
		return "exec"
	case "notify":
		return "notify"
	case "package":
		return "package"
	case "service":
		return "service"
	case "user":
		return "user"
	case "group":
		return "group"
	case "cron":
		return "cron"
	case "host":
		return "host"
	case "mount":
		return "mount"
	case "tidy":
		return "tidy"
	}
	return string(b)
}
