package file

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Diff bounds: inputs larger than maxDiffInput are not diffed, and the
// output is cut at maxDiffOutput bytes.
const (
	maxDiffInput  = 1 << 20
	maxDiffOutput = 16 << 10
	maxDiffCells  = 4 << 20 // lines(old) * lines(new) for the LCS table
)

// diffTimeLayout is GNU diff -u's for a header's time, which Puppet's
// diffs carry (it runs diff -u).
const diffTimeLayout = "2006-01-02 15:04:05.000000000 -0700"

// diffSide names one side of a diff: its name and, when known, its time.
type diffSide struct {
	name string
	time time.Time
}

// header is the side's part of a "---"/"+++" line: the name (quoted as
// GNU diff quotes one with control characters, so that a name can never
// start a line of its own) and a tab and the time when known.
func (d diffSide) header() string {
	n := quoteName(d.name)
	if d.time.IsZero() {
		return n
	}
	return n + "\t" + d.time.Format(diffTimeLayout)
}

func quoteName(name string) string {
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == '"' || r == '\\' }) >= 0 || !utf8.ValidString(name) {
		return strconv.Quote(name)
	}
	return name
}

// unifiedDiff renders a unified diff (3 lines of context) of old and new,
// labelled with the two names. It says so instead when either side is
// binary or too large, and truncates long output.
func unifiedDiff(oldName, newName string, old, new []byte) string {
	return unifiedDiffOf(diffSide{name: oldName}, diffSide{name: newName}, old, new)
}

// unifiedDiffOf is unifiedDiff with each side's time in its header, as
// diff -u writes them.
func unifiedDiffOf(o, n diffSide, old, new []byte) string {
	oldName, newName := quoteName(o.name), quoteName(n.name)
	if len(old) > maxDiffInput || len(new) > maxDiffInput {
		return fmt.Sprintf("Files %s and %s differ (too large to diff)", oldName, newName)
	}
	if isBinary(old) || isBinary(new) {
		return fmt.Sprintf("Binary files %s and %s differ", oldName, newName)
	}
	a, b := splitLines(old), splitLines(new)
	if len(a)*len(b) > maxDiffCells {
		return fmt.Sprintf("Files %s and %s differ (too many lines to diff)", oldName, newName)
	}
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", o.header(), n.header())
	const ctx = 3
	var changes []int
	for k, o := range ops {
		if o.kind != ' ' {
			changes = append(changes, k)
		}
	}
	for c := 0; c < len(changes); {
		first, last := changes[c], changes[c]
		c++
		for c < len(changes) && changes[c]-last <= 2*ctx+1 {
			last = changes[c]
			c++
		}
		start, end := max(0, first-ctx), min(len(ops), last+ctx+1)
		aStart, aLen, bStart, bLen := ops[start].ai, 0, ops[start].bi, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
			if out.Len() > maxDiffOutput {
				return out.String()[:maxDiffOutput] + "\n... (diff truncated)"
			}
		}
	}
	return strings.TrimSuffix(out.String(), "\n")
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type diffOp struct {
	kind   byte // ' ', '-', '+'
	line   string
	ai, bi int // positions in a and b before this op
}

// diffLines is a longest-common-subsequence diff (inputs are bounded).
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([]int32, (n+1)*(m+1))
	w := m + 1
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else if lcs[(i+1)*w+j] >= lcs[i*w+j+1] {
				lcs[i*w+j] = lcs[(i+1)*w+j]
			} else {
				lcs[i*w+j] = lcs[i*w+j+1]
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
