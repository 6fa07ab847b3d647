package yamlparams

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// yaml.v3 reports a syntax error with at most a line, and for a parser
// error (an unexpected token) that line is where the enclosing collection
// starts, counted from 0, or nothing when that is the first line. So when
// yaml.v3 refuses a document, locateError reads it again with a small
// scanner of its own, which follows libyaml's tokens far enough to find
// the token the error is about, and names its line and column (1-based,
// columns in characters, as yaml.v3's node positions are). Where the cause
// is a plain scalar that YAML reads as structure (a value with ": " in it,
// or one starting with an indicator such as '@' or '%'), the message says
// to quote it.

// yamlSpot is a located syntax error.
type yamlSpot struct {
	off  int    // byte offset of the token at fault
	msg  string // what is wrong ("" keeps yaml.v3's words)
	hint string // how to fix it, or ""
}

// locateError returns the Error for yaml.v3's message msg about
// src, located by the scanner below when it can.
func locateError(src []byte, msg string) *Error {
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line, msg = n, rest[i+2:]
			}
		}
	}
	l := yamlLocator{src: src}
	spot, ok := l.locate(msg)
	if !ok {
		// Not located: yaml.v3's line is right for scanner errors (a
		// character the scanner refused), not for the parser's.
		if strings.HasPrefix(msg, "did not find expected") && msg != "did not find expected comment or line break" {
			line = 0
		}
		return &Error{Line: line, Msg: "invalid YAML: " + msg}
	}
	text := msg
	if spot.msg != "" {
		text = spot.msg
	}
	if spot.hint != "" {
		text += "; " + spot.hint
	}
	ln, col := lineCol(src, spot.off)
	return &Error{Line: ln, Column: col, Msg: "invalid YAML: " + text}
}

// lineCol turns a byte offset into a 1-based line and column (characters).
func lineCol(src []byte, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return bytes.Count(src[:off], []byte{'\n'}) + 1, utf8.RuneCount(src[start:off]) + 1
}

// yamlLocator scans a document the way libyaml does, as far as finding the
// first token it would refuse. It knows the mistakes people make in
// params: flow mappings and sequences, block mappings and sequences,
// quoted, plain and block scalars, anchors, aliases, tags and comments.
type yamlLocator struct {
	src   []byte
	i     int
	depth int // of flow collections
}

// locate finds the first error in the document; msg is yaml.v3's (without
// its line), used to pick among the faults it might be about.
func (l *yamlLocator) locate(msg string) (yamlSpot, bool) {
	if spot, ok := l.badQuote(); ok {
		return spot, true
	}
	l.i = 0
	l.skipSpace(true)
	if l.i < len(l.src) && (l.src[l.i] == '{' || l.src[l.i] == '[') {
		spot, ok := l.flowNode()
		if ok {
			return spot, true
		}
		l.skipSpace(true)
		if l.i < len(l.src) {
			return yamlSpot{off: l.i}, true
		}
		return yamlSpot{}, false
	}
	return l.block(msg)
}

func isBlankAt(src []byte, i int) bool {
	return i >= len(src) || src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r'
}

// skipSpace skips spaces, tabs, comments and, when lines is set, line
// breaks.
func (l *yamlLocator) skipSpace(lines bool) {
	for l.i < len(l.src) {
		switch c := l.src[l.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case c == '\n' && lines:
			l.i++
		case c == '#' && (l.i == 0 || isBlankAt(l.src, l.i-1)):
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
		default:
			return
		}
	}
}

// badQuote finds a quoted scalar that is never closed: the error is
// yaml.v3's "found unexpected end of stream", located at the quote that
// opens it.
func (l *yamlLocator) badQuote() (yamlSpot, bool) {
	src := l.src
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '#' && (i == 0 || isBlankAt(src, i-1)):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case (c == '\'' || c == '"') && (i == 0 || bytes.IndexByte([]byte(" \t\n[{,:-?"), src[i-1]) >= 0):
			end := quoteEnd(src, i)
			if end < 0 {
				return yamlSpot{off: i, msg: "quoted string is never closed (found unexpected end of stream)"}, true
			}
			i = end - 1
		case c == '|' || c == '>':
			// A block scalar: its lines are text, not tokens.
			if i > 0 && !isBlankAt(src, i-1) {
				continue
			}
			i = blockScalarEnd(src, i) - 1
		case c != ' ' && c != '\t' && c != '\n':
			// A plain scalar: quotes inside it are text.
			for i+1 < len(src) && src[i+1] != '\n' && !(src[i+1] == '#' && isBlankAt(src, i)) &&
				!(src[i] == ':' && isBlankAt(src, i+1)) && bytes.IndexByte([]byte(",[]{}"), src[i+1]) < 0 {
				i++
			}
		}
	}
	return yamlSpot{}, false
}

// quoteEnd returns the offset after the quoted scalar starting at i, or -1
// when it is not closed.
func quoteEnd(src []byte, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			if q == '\'' && j+1 < len(src) && src[j+1] == '\'' {
				j++
				continue
			}
			return j + 1
		}
	}
	return -1
}

// blockScalarEnd returns the offset of the line after the block scalar
// whose header ('|' or '>') is at i: its lines are the empty ones and those
// indented at least as its first line, which must be indented more than
// the line holding the header.
func blockScalarEnd(src []byte, i int) int {
	ls := bytes.LastIndexByte(src[:i], '\n') + 1
	parent := 0
	for ls+parent < len(src) && src[ls+parent] == ' ' {
		parent++
	}
	j := bytes.IndexByte(src[i:], '\n')
	if j < 0 {
		return len(src)
	}
	j += i + 1
	indent := -1
	for j < len(src) {
		n := 0
		for j+n < len(src) && src[j+n] == ' ' {
			n++
		}
		if j+n < len(src) && src[j+n] != '\n' {
			if indent < 0 {
				indent = n
			}
			if n <= parent || n < indent {
				return j
			}
		}
		k := bytes.IndexByte(src[j:], '\n')
		if k < 0 {
			return len(src)
		}
		j += k + 1
	}
	return len(src)
}

// flowNode reads one node at l.i in flow context; ok reports an error
// found (its spot).
func (l *yamlLocator) flowNode() (yamlSpot, bool) {
	if l.depth > MaxDepth {
		l.i = len(l.src) // too deep to look into: not located
		return yamlSpot{}, false
	}
	l.skipSpace(true)
	l.properties()
	if l.i >= len(l.src) {
		return yamlSpot{}, false
	}
	switch c := l.src[l.i]; c {
	case '{', '[':
		l.depth++
		defer func() { l.depth-- }()
		return l.flowCollection()
	case '\'', '"':
		l.skipQuoted()
		return yamlSpot{}, false
	case '*':
		l.word()
		return yamlSpot{}, false
	case '}', ']', ',', ':':
		return yamlSpot{}, false // an empty node
	}
	if spot, bad := l.indicatorStart(true); bad {
		return spot, true
	}
	l.plain(true)
	return yamlSpot{}, false
}

// properties skips an anchor and a tag before a node.
func (l *yamlLocator) properties() {
	for l.i < len(l.src) && (l.src[l.i] == '&' || l.src[l.i] == '!') {
		l.word()
		l.skipSpace(true)
	}
}

// word skips an anchor, alias or tag: up to a blank or a flow indicator.
func (l *yamlLocator) word() {
	for l.i++; l.i < len(l.src) && !isBlankAt(l.src, l.i) && bytes.IndexByte([]byte(",[]{}"), l.src[l.i]) < 0; l.i++ {
	}
}

// indicatorStart reports a character that cannot start a plain scalar
// here, as libyaml refuses it.
func (l *yamlLocator) indicatorStart(flow bool) (yamlSpot, bool) {
	c := l.src[l.i]
	switch {
	case c == '@' || c == '`' || (c == '%' && (flow || l.i > 0 && l.src[l.i-1] != '\n')) ||
		flow && (c == '|' || c == '>'):
		return yamlSpot{off: l.i, hint: l.quoteHint(flow, fmt.Sprintf("a value starting with '%c' must be quoted", c))}, true
	case c == '-' && isBlankAt(l.src, l.i+1) && flow:
		return yamlSpot{off: l.i, hint: l.quoteHint(flow, `a value starting with "- " must be quoted`)}, true
	}
	return yamlSpot{}, false
}

// plainEnd returns where the plain scalar starting at i ends: before ": "
// (or ':' then a flow indicator in flow context), " #", a line break in
// block context, and in flow context ',', '[', ']', '{', '}'.
func plainEnd(src []byte, i int, flow bool) int {
	end := i
	for j := i; j < len(src); j++ {
		c := src[j]
		if c == ':' && (isBlankAt(src, j+1) || flow && bytes.IndexByte([]byte(",[]{}"), src[j+1]) >= 0) {
			break
		}
		if c == '#' && j > i && isBlankAt(src, j-1) {
			break
		}
		if flow && bytes.IndexByte([]byte(",[]{}"), c) >= 0 || !flow && c == '\n' {
			break
		}
		if !isBlankAt(src, j) {
			end = j + 1
		}
	}
	return end
}

func (l *yamlLocator) plain(flow bool) { l.i = plainEnd(l.src, l.i, flow) }

// flowCollection reads a flow mapping or sequence at l.i.
func (l *yamlLocator) flowCollection() (yamlSpot, bool) {
	open := l.i
	closer := byte('}')
	want := "did not find expected ',' or '}'"
	if l.src[l.i] == '[' {
		closer, want = ']', "did not find expected ',' or ']'"
	}
	l.i++
	for {
		l.skipSpace(true)
		if l.i >= len(l.src) {
			ln, col := lineCol(l.src, open)
			return yamlSpot{off: l.i, msg: fmt.Sprintf("%s: the %q opened at line %d column %d is not closed", want, l.src[open], ln, col)}, true
		}
		if l.src[l.i] == closer {
			l.i++
			return yamlSpot{}, false
		}
		if l.src[l.i] == '?' && isBlankAt(l.src, l.i+1) {
			l.i++
		}
		entry := l.i
		if spot, bad := l.flowNode(); bad {
			return spot, true
		}
		l.skipSpace(true)
		if l.i < len(l.src) && l.src[l.i] == ':' {
			l.i++
			l.skipSpace(true)
			entry = l.i
			if spot, bad := l.flowNode(); bad {
				return spot, true
			}
			l.skipSpace(true)
		}
		if l.i >= len(l.src) {
			continue // reported as not closed
		}
		switch l.src[l.i] {
		case ',':
			l.i++
			continue
		case closer:
			l.i++
			return yamlSpot{}, false
		}
		spot := yamlSpot{off: l.i, msg: want}
		if l.src[l.i] == ':' && entry < len(l.src) && !isFlowStart(l.src[entry]) {
			// key: value: more, the value plain.
			l.i = entry
			spot.hint = l.quoteHint(true, `a value containing ": " must be quoted`)
		}
		return spot, true
	}
}

// skipQuoted skips the quoted scalar at l.i (to the end when it is not
// closed, which badQuote reports first).
func (l *yamlLocator) skipQuoted() {
	if l.i = quoteEnd(l.src, l.i); l.i < 0 {
		l.i = len(l.src)
	}
}

func isFlowStart(c byte) bool { return c == '{' || c == '[' || c == '\'' || c == '"' }

// quoteHint says what is wrong with the plain value starting at l.i and
// shows it quoted: the text up to the end of the entry (flow) or line.
func (l *yamlLocator) quoteHint(flow bool, what string) string {
	end := l.i
	depth := 0
	for ; end < len(l.src); end++ {
		c := l.src[end]
		if c == '\n' && !flow || c == '#' && isBlankAt(l.src, end-1) {
			break
		}
		if flow {
			if c == '[' || c == '{' {
				depth++
			} else if c == ']' || c == '}' || c == ',' {
				if depth == 0 {
					break
				}
				if c != ',' {
					depth--
				}
			}
		}
	}
	v := strings.TrimSpace(string(l.src[l.i:end]))
	if v == "" || strings.ContainsAny(v, "\n") || len(v) > 60 {
		return what
	}
	return fmt.Sprintf("%s, as in '%s'", what, strings.ReplaceAll(v, "'", "''"))
}

// block locates the error in a block document line by line: the key of
// each entry, what follows its ':', and the indentation of each line
// against the open mappings and sequences.
func (l *yamlLocator) block(msg string) (yamlSpot, bool) {
	src := l.src
	type level struct {
		indent int
		seq    bool
	}
	var (
		levels    []level
		opener    = true  // the previous line may open a deeper level (first line, "key:" or "- ")
		plainOpen = false // the previous line ended in a plain scalar, which the next may continue
	)
	i := 0
	for i < len(src) {
		ls := i
		n := 0
		for i < len(src) && src[i] == ' ' {
			i++
			n++
		}
		le := bytes.IndexByte(src[i:], '\n')
		if le < 0 {
			le = len(src)
		} else {
			le += i
		}
		if i < len(src) && src[i] == '\t' {
			return yamlSpot{off: i, msg: "found a tab character that violates indentation (indent with spaces)"}, true
		}
		if i >= le || src[i] == '#' {
			i = le + 1
			continue
		}
		if i == ls && bytes.HasPrefix(src[i:], []byte("---")) || bytes.HasPrefix(src[i:], []byte("...")) && i == ls {
			i = le + 1
			continue
		}
		// The indentation against the open levels.
		top := -1
		if len(levels) > 0 {
			top = levels[len(levels)-1].indent
		}
		isSeq := src[i] == '-' && isBlankAt(src, i+1)
		switch {
		case n > top && (opener || top < 0):
			levels = append(levels, level{indent: n, seq: isSeq})
		case n > top && plainOpen:
			// A continuation line of a plain scalar: its text folds in,
			// and a ": " in it is what libyaml refuses.
			if c := valueColon(src, i, le); c >= 0 {
				return yamlSpot{off: c, msg: "mapping values are not allowed in this context",
					hint: "this line continues the plain value above it, where \": \" is not allowed: quote the value, or start the key in the column of the keys before it"}, true
			}
			i = le + 1
			continue
		case n > top:
			return yamlSpot{off: i, msg: "did not find expected key (this line is indented more than the entries before it)"}, true
		case n < top:
			for len(levels) > 0 && levels[len(levels)-1].indent > n {
				levels = levels[:len(levels)-1]
			}
			if len(levels) == 0 || levels[len(levels)-1].indent != n {
				return yamlSpot{off: i, msg: "did not find expected key (this line's indentation matches no entry above it)"}, true
			}
		}
		opener, plainOpen = false, false
		cur := &levels[len(levels)-1]
		if isSeq != cur.seq {
			if isSeq {
				return yamlSpot{off: i, msg: "did not find expected key (a '-' list entry among mapping keys)"}, true
			}
			return yamlSpot{off: i, msg: "did not find expected '-' indicator"}, true
		}
		// One line: "- " entries, then "key: value" or a value.
		for isSeq && i < le && src[i] == '-' && isBlankAt(src, i+1) {
			i++
			for i < le && src[i] == ' ' {
				i++
			}
			if i >= le || src[i] == '#' {
				opener = true
				break
			}
			// "- key: value" opens a mapping at this column.
			if valueColon(src, i, le) >= 0 {
				levels = append(levels, level{indent: i - ls})
			}
		}
		if i >= le || src[i] == '#' {
			i = le + 1
			continue
		}
		l.i = i
		spot, bad, afterKey, plain := l.blockLine(le)
		if bad {
			return spot, true
		}
		opener = afterKey
		plainOpen = plain
		if l.i > le {
			le = l.i - 1 // a block scalar or a quoted scalar ran on
		}
		i = le + 1
	}
	_ = msg
	return yamlSpot{}, false
}

// valueColon returns the offset of the first ':' that is a value
// indicator between i and le outside quotes, or -1.
func valueColon(src []byte, i, le int) int {
	for j := i; j < le; j++ {
		switch c := src[j]; {
		case c == '\'' || c == '"':
			if e := quoteEnd(src, j); e > 0 {
				j = e - 1
			}
		case c == '#' && j > i && isBlankAt(src, j-1):
			return -1
		case c == ':' && isBlankAt(src, j+1):
			return j
		}
	}
	return -1
}

// blockLine reads what follows the indentation of a block line, ending at
// le (or later, for a block scalar or a multi-line quoted scalar, leaving
// l.i after it). afterKey: the line is "key:" with nothing after it, so the
// next line may open a deeper level; plain: it ended in a plain scalar.
func (l *yamlLocator) blockLine(le int) (spot yamlSpot, bad, afterKey, plain bool) {
	src := l.src
	keyDone := false
	valStart := -1
	for {
		for l.i < le && src[l.i] == ' ' {
			l.i++
		}
		if keyDone && valStart < 0 {
			valStart = l.i
		}
		if l.i >= le || src[l.i] == '#' {
			return yamlSpot{}, false, keyDone, false
		}
		l.properties()
		if l.i >= le {
			return yamlSpot{}, false, keyDone, false
		}
		switch c := src[l.i]; {
		case c == '{' || c == '[':
			if s, b := l.flowCollection(); b {
				return s, true, false, false
			}
		case c == '\'' || c == '"':
			l.skipQuoted()
		case c == '|' || c == '>':
			if !keyDone {
				break
			}
			l.i = blockScalarEnd(src, l.i)
			return yamlSpot{}, false, false, false
		case c == '*':
			l.word()
		case c == '-' && isBlankAt(src, l.i+1):
			return yamlSpot{off: l.i, msg: "block sequence entries are not allowed in this context",
				hint: l.quoteHint(false, `a value starting with "- " must be quoted`) + " (a list goes on the lines below its key)"}, true, false, false
		default:
			if s, b := l.indicatorStart(false); b {
				return s, true, false, false
			}
			l.plain(false)
			plain = true
		}
		for l.i < le && (src[l.i] == ' ' || src[l.i] == '\t') {
			l.i++
		}
		if l.i < le && src[l.i] == ':' && isBlankAt(src, l.i+1) {
			if keyDone {
				spot := yamlSpot{off: l.i, msg: "mapping values are not allowed in this context"}
				if plain {
					l.i = valStart
					spot.hint = l.quoteHint(false, `a value containing ": " must be quoted`)
				}
				return spot, true, false, false
			}
			keyDone, plain = true, false
			l.i++
			continue
		}
		if l.i >= le || src[l.i] == '#' {
			return yamlSpot{}, false, false, plain
		}
		if !keyDone {
			return yamlSpot{}, false, false, plain
		}
		return yamlSpot{off: l.i}, true, false, false
	}
}
