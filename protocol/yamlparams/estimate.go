package yamlparams

// yaml.v3 builds a node tree for the whole document before we can count
// anything, at a few hundred bytes per node: an 8 MiB flow list of "1,"
// costs gigabytes. estimateNodes bounds that work beforehand with one
// linear pass over the bytes.
//
// It counts the bytes that can start or separate a node (newlines and the
// indicators , [ ] { } : - ? * & !) outside comments, quoted scalars and
// block scalars. Every node but the first is preceded by one of them, so
// the count (plus one) is an upper bound on the nodes — provided what it
// skips really holds no nodes:
//
//   - a quoted scalar is skipped only when it opens where YAML would start
//     one (after ": ", "- ", "? ", "[", "{", "," or at the start of a line)
//     and closes on the same line. Were the quote really plain text (in a
//     plain scalar's continuation line, say), the rest of that line is
//     plain text too (or a syntax error), so nothing that makes nodes is
//     skipped. Only after ": " may it span lines: ": " cannot occur in a
//     plain scalar, so there the quote does open a quoted scalar;
//   - a block scalar is skipped when "|" or ">" (with chomping indicators,
//     or an indentation indicator) ends a line at a token start: the following
//     blank lines and lines indented deeper than the key it belongs to.
//     Were it not a block scalar, those lines continue a plain scalar, or
//     are a syntax error before any node is built.
//
// Over-counting (a multi-line quoted string full of commas) only matters
// for documents with more than MaxValues such bytes.
func estimateNodes(src []byte, limit int) int {
	n := 1
	lineStart := true // only spaces so far on this line
	keyCol := 0       // column of the first token on this line after "- " and "? "
	prev := byte('\n')
	for i := 0; i < len(src); {
		c := src[i]
		if lineStart {
			// Measure the indentation and the key column of a new line.
			j := i
			for j < len(src) && src[j] == ' ' {
				j++
			}
			k := j
			for k+1 < len(src) && (src[k] == '-' || src[k] == '?') && src[k+1] == ' ' {
				k += 2
				for k < len(src) && src[k] == ' ' {
					k++
				}
			}
			keyCol = k - i
			if j > i {
				i = j
				continue
			}
		}
		switch {
		case c == '\n':
			n++
			lineStart = true
			prev = '\n'
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
			if prev != '\n' {
				prev = ' '
			}
		case c == '#' && (prev == ' ' || prev == '\n'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case (c == '"' || c == '\'') && quoteStart(src, i, prev):
			if end := closeQuote(src, i, afterValueIndicator(src, i)); end > 0 {
				i = end
				n++
				prev = 'x'
				lineStart = false
				continue
			}
			n++
			i++
			prev = c
			lineStart = false
		case (c == '|' || c == '>') && (prev == ' ' || prev == '\n') && blockHeader(src, i):
			// Skip the header line, then the block's lines.
			for i < len(src) && src[i] != '\n' {
				i++
			}
			for i < len(src) {
				j := i + 1
				ind := 0
				for j < len(src) && src[j] == ' ' {
					j++
					ind++
				}
				blank := j >= len(src) || src[j] == '\n' || src[j] == '\r'
				if !blank && ind <= keyCol {
					break
				}
				i = j
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
			n++
			prev = 'x'
			lineStart = false
		default:
			switch c {
			case ',', '[', ']', '{', '}', ':', '-', '?', '*', '&', '!':
				n++
			}
			prev = c
			lineStart = false
			i++
		}
		if n > limit {
			return n
		}
	}
	return n
}

// quoteStart: a quote at i opens a quoted scalar where YAML would start a
// token: at the start of a line, or after one of ": ", "- ", "? " (with
// space between) or "[", "{", ",".
func quoteStart(src []byte, i int, prev byte) bool {
	if prev == '\n' {
		return true
	}
	j := i - 1
	spaced := false
	for j >= 0 && (src[j] == ' ' || src[j] == '\t') {
		j--
		spaced = true
	}
	if j < 0 || src[j] == '\n' {
		return true
	}
	switch src[j] {
	case '[', '{', ',':
		return true
	case ':', '-', '?':
		return spaced
	}
	return false
}

// afterValueIndicator: the quote at i follows ": " (spaces between).
func afterValueIndicator(src []byte, i int) bool {
	j := i - 1
	for j >= 0 && (src[j] == ' ' || src[j] == '\t') {
		j--
	}
	return j >= 0 && j < i-1 && src[j] == ':'
}

// closeQuote returns the index after the quote closing the one at i (on
// the same line unless multiline); 0 when there is none.
func closeQuote(src []byte, i int, multiline bool) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch c := src[j]; {
		case c == '\n' && !multiline:
			return 0
		case q == '"' && c == '\\':
			j++
		case c == q:
			if q == '\'' && j+1 < len(src) && src[j+1] == '\'' {
				j++
				continue
			}
			return j + 1
		}
	}
	return 0
}

// blockHeader: "|" or ">" at i, then only chomping and indentation
// indicators, spaces and an optional comment up to the end of the line.
func blockHeader(src []byte, i int) bool {
	j := i + 1
	for j < len(src) && (src[j] == '+' || src[j] == '-' || src[j] >= '1' && src[j] <= '9') {
		j++
	}
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j < len(src) && src[j] == '#' && j > i+1 && (src[j-1] == ' ' || src[j-1] == '\t') {
		return true
	}
	return j >= len(src) || src[j] == '\n' || src[j] == '\r'
}
