package yamlparams

import (
	"unicode/utf8"

	"github.com/pippet/pippet/protocol/internal/intern"
	"github.com/pippet/pippet/protocol/internal/swar"
)

// fastParams reads the two most common documents without building a YAML
// tree:
//
//   - a one-line flow mapping such as {ensure: file, mode: '0644', content: "hi\n"};
//   - a block mapping of one "key: value" per line, where a value may also
//     be a literal block scalar (content: |), as controllers write file
//     content.
//
// Keys are simple words; values are plain words (with single spaces
// inside), single-quoted or double-quoted strings (the escapes \\ \" \n
// \t \r only). Plain values go through the same resolvePlain as the
// general path. It answers ok=false for anything outside that narrow
// grammar, and for any value the general path would refuse, so that the
// general path decides and reports. FuzzParse checks both agree.
func fastParams(src []byte) (m map[string]any, ok bool) {
	var r Reader
	return r.fast(src, nil)
}

// fast is fastParams filling m (empty, or nil for a new map), with r's
// buffer and cache. When it declines, m may hold some entries: the caller
// clears it.
func (r *Reader) fast(src []byte, m map[string]any) (map[string]any, bool) {
	if m == nil {
		m = make(map[string]any, 4)
	}
	if len(src) > estimateAbove && estimateNodes(src, MaxValues) > MaxValues {
		return nil, false // the general path refuses it
	}
	i := skipSpaces(src, 0)
	var (
		entries int
		ok      bool
	)
	if i < len(src) && src[i] == '{' {
		entries, ok = fastFlow(src, i+1, m, r)
	} else {
		entries, ok = fastBlock(src, m, r)
	}
	// The general path counts the mapping, every key and every value.
	if !ok || 1+2*entries > MaxValues {
		return nil, false
	}
	return m, true
}

// fastFlow reads the flow mapping whose '{' is before i into m and
// returns its number of entries.
func fastFlow(src []byte, i int, m map[string]any, st *Reader) (int, bool) {
	i = skipSpaces(src, i)
	if i < len(src) && src[i] == '}' {
		return 0, skipSpaces(src, i+1) == len(src)
	}
	for n := 1; ; n++ {
		key, j, ok := fastKey(src, i, st)
		if !ok {
			return 0, false
		}
		val, j, ok := fastValue(src, j, true, st)
		if !ok {
			return 0, false
		}
		m[key] = val
		i = skipSpaces(src, j)
		if i >= len(src) {
			return 0, false
		}
		switch src[i] {
		case ',':
			i = skipSpaces(src, i+1)
			continue
		case '}':
			return n, skipSpaces(src, i+1) == len(src)
		}
		return 0, false
	}
}

// fastBlock reads "key: value" lines starting in column 0, and literal
// block scalars whose lines are all indented alike.
func fastBlock(src []byte, m map[string]any, st *Reader) (int, bool) {
	i, n := 0, 0
	for i < len(src) {
		key, j, ok := fastKey(src, i, st)
		if !ok || i > 0 && src[i-1] != '\n' {
			return 0, false
		}
		n++
		j = skipSpaces(src, j)
		if j < len(src) && src[j] == '|' {
			val, next, ok := fastLiteral(src, j, st)
			if !ok {
				return 0, false
			}
			m[key] = val
			i = next
			continue
		}
		val, j, ok := fastValue(src, j, false, st)
		if !ok {
			return 0, false
		}
		m[key] = val
		j = skipSpaces(src, j)
		if j < len(src) && src[j] != '\n' {
			return 0, false
		}
		i = j + 1
	}
	if n == 0 {
		return 0, false
	}
	return n, true
}

// fastKey reads [A-Za-z_][A-Za-z0-9_]* then optional spaces, ':' and at
// least one space, or ':' at the end of the line in block context (which
// fastValue then declines).
func fastKey(src []byte, i int, st *Reader) (string, int, bool) {
	ks := i
	for i < len(src) && (isAlpha(src[i]) || src[i] == '_' || (i > ks && isDigit(src[i]))) {
		i++
	}
	if i == ks {
		return "", 0, false
	}
	key := st.Strings.String(intern.Key, src[ks:i])
	i = skipSpaces(src, i)
	if i+1 >= len(src) || src[i] != ':' || src[i+1] != ' ' {
		return "", 0, false
	}
	return key, skipSpaces(src, i+1), true
}

// fastValue reads one scalar at i: in flow context a plain value ends
// before spaces and ',' or '}', in block context at the end of the line.
func fastValue(src []byte, i int, flow bool, st *Reader) (any, int, bool) {
	if i >= len(src) {
		return nil, 0, false
	}
	switch c := src[i]; {
	case c == '\'':
		var sb []byte // the value so far, from the first escape on
		escaped := false
		i++
		start := i
		for {
			i = swar.SkipPrintableASCII(src, i, '\'')
			if i >= len(src) {
				return nil, 0, false
			}
			b := src[i]
			if b == '\'' {
				if i+1 < len(src) && src[i+1] == '\'' {
					if !escaped {
						sb, escaped = st.buf[:0], true
					}
					sb = append(sb, src[start:i+1]...)
					i += 2
					start = i
					continue
				}
				if !escaped {
					return st.Strings.Value(intern.Quoted, src[start:i]), i + 1, true
				}
				sb = append(sb, src[start:i]...)
				st.buf = sb[:0]
				return string(sb), i + 1, true
			}
			n, ok := printable(src, i)
			if !ok {
				return nil, 0, false
			}
			i += n
		}
	case c == '"':
		var sb []byte // the value so far, from the first escape on
		escaped := false
		i++
		start := i
		for {
			i = swar.SkipPrintableASCII(src, i, '"')
			if i >= len(src) {
				return nil, 0, false
			}
			b := src[i]
			switch b {
			case '"':
				if !escaped {
					return st.Strings.Value(intern.Quoted, src[start:i]), i + 1, true
				}
				sb = append(sb, src[start:i]...)
				st.buf = sb[:0]
				return string(sb), i + 1, true
			case '\\':
				if i+1 >= len(src) {
					return nil, 0, false
				}
				var e byte
				switch src[i+1] {
				case '\\', '"':
					// (Not \/: yaml.v3, the general path, refuses it.)
					e = src[i+1]
				case 'n':
					e = '\n'
				case 't':
					e = '\t'
				case 'r':
					e = '\r'
				default:
					return nil, 0, false
				}
				if !escaped {
					sb, escaped = st.buf[:0], true
				}
				sb = append(sb, src[start:i]...)
				sb = append(sb, e)
				i += 2
				start = i
				continue
			}
			n, ok := printable(src, i)
			if !ok {
				return nil, 0, false
			}
			i += n
		}
	case isAlpha(c) || isDigit(c) || c == '_' || c == '.' || c == '/' ||
		((c == '-' || c == '+') && i+1 < len(src) && (isDigit(src[i+1]) || src[i+1] == '.')):
		vs := i
		end := i
		for i < len(src) {
			b := src[i]
			if isAlpha(b) || isDigit(b) || b == '_' || b == '.' || b == '/' || b == '-' || b == '+' || b == '=' {
				i++
				end = i
				continue
			}
			if b == ' ' {
				// A space inside the value only before another value byte.
				j := skipSpaces(src, i)
				if j < len(src) && src[j] != '#' && src[j] != '\n' && (!flow || src[j] != ',' && src[j] != '}') {
					i = j
					continue
				}
			}
			break
		}
		v, ok := st.Strings.Resolved(src[vs:end], resolvePlain)
		if !ok {
			return nil, 0, false
		}
		return v, end, true
	}
	return nil, 0, false
}

// printable: the character at i is printable ASCII, or a UTF-8 character
// YAML counts as printable (no C1 controls, BOM or non-characters) and
// not a line break (U+2028, U+2029). It
// returns the character's length.
func printable(src []byte, i int) (int, bool) {
	b := src[i]
	if b < utf8.RuneSelf {
		return 1, b >= 0x20 && b < 0x7f
	}
	r, n := utf8.DecodeRune(src[i:])
	if r == utf8.RuneError || r < 0xa0 || r == 0xfeff || r == 0xfffe || r == 0xffff ||
		r == 0x2028 || r == 0x2029 { // YAML 1.1 line breaks
		return 0, false
	}
	return n, true
}

// fastLiteral reads a literal block scalar whose header "|", "|-" or "|+"
// is at i (then only the end of the line): lines indented by the first
// line's indentation, empty lines (no spaces) among them; it ends at a
// line in column 0 or the end of the document. It declines leading empty
// lines, lines of only spaces, tabs and anything not printable.
func fastLiteral(src []byte, i int, st *Reader) (string, int, bool) {
	i++
	chomp := byte(0)
	if i < len(src) && (src[i] == '-' || src[i] == '+') {
		chomp = src[i]
		i++
	}
	i = skipSpaces(src, i)
	if i >= len(src) || src[i] != '\n' {
		return "", 0, false
	}
	i++
	indent := 0
	for i+indent < len(src) && src[i+indent] == ' ' {
		indent++
	}
	if indent == 0 {
		return "", 0, false // empty block, or one starting with an empty line
	}
	text := st.buf[:0]
	breaks := 0 // line breaks not yet written (trailing empty lines)
	for i < len(src) {
		if src[i] == '\n' {
			breaks++
			i++
			continue
		}
		n := 0
		for i+n < len(src) && src[i+n] == ' ' {
			n++
		}
		if n == 0 {
			break // the next key
		}
		if n < indent || i+n >= len(src) || src[i+n] == '\n' {
			return "", 0, false // less indented, or only spaces
		}
		for ; breaks > 0; breaks-- {
			text = append(text, '\n')
		}
		j := i + indent
		for {
			j = swar.SkipPrintableASCII(src, j, '\n')
			if j >= len(src) || src[j] == '\n' {
				break
			}
			k, ok := printable(src, j)
			if !ok {
				return "", 0, false
			}
			j += k
		}
		text = append(text, src[i+indent:j]...)
		if j >= len(src) {
			i = j
			break // last line without its newline: there is no final break
		}
		breaks = 1
		i = j + 1
	}
	switch chomp {
	case '-':
	case '+':
		for ; breaks > 0; breaks-- {
			text = append(text, '\n')
		}
	default:
		if breaks > 0 {
			text = append(text, '\n')
		}
	}
	st.buf = text[:0]
	return string(text), i, true
}

func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
