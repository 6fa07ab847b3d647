package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's top directory, seen from this package.
const root = ".."

// pages returns every Markdown page of the documentation: the README,
// BENCHMARKS.md and everything under docs/.
func pages(t *testing.T) []string {
	t.Helper()
	list := []string{filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			list = append(list, p)
		}
		return nil
	})
	require.NoError(t, err)
	return list
}

// prose returns a page's lines outside fenced code blocks, keeping the
// line numbers (a line inside a block is empty).
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return lines
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	idRE      = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	codeRE    = regexp.MustCompile("`[^`]*`")
)

// slug is the anchor GitHub gives a heading: lower case, punctuation
// other than '-' and '_' dropped, spaces made '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors a page defines: its headings' slugs (a
// repeated one numbered as GitHub numbers it) and its explicit ids.
func anchors(text string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		if m := headingRE.FindStringSubmatch(l); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				set[s+"-"+strconv.Itoa(n)] = true
			} else {
				set[s] = true
			}
			seen[s]++
		}
		for _, m := range idRE.FindAllStringSubmatch(l, -1) {
			set[m[1]] = true
		}
	}
	return set
}

// Every relative link of the README, BENCHMARKS.md and docs/ names a file
// that exists, and every #anchor one its page defines.
func TestLinks(t *testing.T) {
	cache := map[string]map[string]bool{}
	anchorsOf := func(p string) map[string]bool {
		if a, ok := cache[p]; ok {
			return a
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		cache[p] = anchors(string(b))
		return cache[p]
	}
	n := 0
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for i, l := range prose(string(b)) {
			l = codeRE.ReplaceAllString(l, "")
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				where := page + ":" + strconv.Itoa(i+1)
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
					_, err := os.Stat(dest)
					if !assert.NoError(t, err, "%s: link to %s", where, target) {
						continue
					}
				}
				if frag != "" {
					if !strings.HasSuffix(dest, ".md") {
						continue
					}
					assert.True(t, anchorsOf(dest)[frag], "%s: link to %s: no anchor #%s in %s", where, target, frag, dest)
				}
			}
		}
	}
	assert.Greater(t, n, 30, "links checked")
}

// The slugs are GitHub's.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Find, search, describe":    "find-search-describe",
		"puppet:// sources":         "puppet-sources",
		"The Go runner (`runner/`)": "the-go-runner-runner",
		"Signals and exit status":   "signals-and-exit-status",
	} {
		assert.Equal(t, want, slug(in), in)
	}
}
