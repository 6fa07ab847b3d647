package applier

import "strings"

// didYouMean returns "; did you mean 'x'?" for the closest of candidates
// to word, or "" when none is close (see closest).
func didYouMean(word string, candidates []string) string {
	if c := closest(word, candidates); c != "" {
		return "; did you mean '" + c + "'?"
	}
	return ""
}

// closest returns the one of candidates that word is likely a typo of (a
// letter wrong, missing, extra, or two swapped: contnet for content, flie
// for file), or "" when none is close, or when two are equally close.
// Closeness is case-insensitive, and at most one edit for words up to four
// letters, two for longer ones, and never half the word.
func closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	max := 1
	if len(w) > 4 {
		max = 2
	}
	best, bestD, tie := "", max+1, false
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == w {
			continue
		}
		d := editDistance(w, lc, max)
		switch {
		case d < bestD:
			best, bestD, tie = c, d, false
		case d == bestD && c != best:
			tie = true
		}
	}
	if best == "" || tie || 2*bestD >= len(w) {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and swaps of adjacent bytes), or
// max+1 when it is over max.
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	if len(a) > 64 || len(b) > 64 {
		return max + 1 // no name is that long: not a typo of one
	}
	var rows [3][65]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			low = min(low, v)
		}
		if low > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	if prev[len(b)] > max {
		return max + 1
	}
	return prev[len(b)]
}

// suggestParam is didYouMean over the attributes of t and the
// metaparameters.
func (t *Type) suggestParam(name string) string {
	names := make([]string, 0, len(t.Attrs)+len(metaparams))
	for _, a := range t.Attrs {
		names = append(names, a.Name)
	}
	for m := range metaparams {
		names = append(names, m)
	}
	return didYouMean(name, names)
}

// suggestType is didYouMean over the registered type names.
func (g *Registry) suggestType(name string) string {
	types := g.Types()
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return didYouMean(name, names)
}

// Closest returns the one of candidates that word is likely a typo of,
// or "" when none is: for a type whose Puppet semantics take any word (a
// file's ensure takes a link target) and which warns, with the
// suggestion, where Puppet would silently do what the typo says.
func Closest(word string, candidates []string) string { return closest(word, candidates) }
