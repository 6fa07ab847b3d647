package file

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if c, ok := change[i]; ok {
				b.WriteString(c)
				continue
			}
			b.WriteString("line" + string(rune('a'+i%26)) + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"one change", "a\nb\nc\n", "a\nB\nc\n", "--- o\n+++ n\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"},
		{"append", "a\n", "a\nb\n", "--- o\n+++ n\n@@ -1 +1,2 @@\n a\n+b"},
		{"from empty", "", "x\n", "--- o\n+++ n\n@@ -0,0 +1 @@\n+x"},
		{"no newline at end", "a\nb", "a\nc", "--- o\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file"},
		{"two hunks", lines(20, nil), lines(20, map[int]string{2: "X\n", 18: "Y\n"}),
			"--- o\n+++ n\n@@ -1,5 +1,5 @@\n lineb\n-linec\n+X\n lined\n linee\n linef\n@@ -15,6 +15,6 @@\n linep\n lineq\n liner\n-lines\n+Y\n linet\n lineu"},
		{"binary", "a\x00b", "a\x00c", "Binary files o and n differ"},
		{"too large", strings.Repeat("x", maxDiffInput+1), "y", "Files o and n differ (too large to diff)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, unifiedDiff("o", "n", []byte(tc.old), []byte(tc.new)))
		})
	}
	long := unifiedDiff("o", "n", []byte(strings.Repeat("aaaaaaaaaa\n", 1500)), []byte(strings.Repeat("bbbbbbbbbb\n", 1500)))
	assert.LessOrEqual(t, len(long), maxDiffOutput+100)
	assert.True(t, strings.HasSuffix(long, "(diff truncated)"))
}

func TestApplyMode(t *testing.T) {
	cases := []struct {
		mode  string
		cur   uint32
		isDir bool
		want  uint32
	}{
		{"0644", 0o600, false, 0o644},
		{"0644", 0o600, true, 0o755},
		{"0600", 0o777, true, 0o700},
		{"u+x", 0o644, false, 0o744},
		{"g-r,o-r", 0o644, false, 0o600},
		{"a=rX", 0o600, false, 0o444},
		{"a=rX", 0o700, false, 0o555},
		{"a=rX", 0o600, true, 0o555},
		{"go+X", 0o600, false, 0o600},
		{"ug=rw,o=r", 0o000, false, 0o664},
		{"u+s", 0o755, false, 0o4755},
		{"g+s", 0o755, true, 0o2755},
		{"+t", 0o777, true, 0o1777},
		{"o=u", 0o750, false, 0o757},
		{"=", 0o755, false, 0o000},
	}
	for _, tc := range cases {
		got, err := applyMode(tc.mode, tc.cur, tc.isDir)
		if assert.NoError(t, err, tc.mode) {
			assert.Equal(t, formatMode(tc.want), formatMode(got), "%s on %04o dir=%v", tc.mode, tc.cur, tc.isDir)
		}
	}
	for _, bad := range []any{int64(644), "u*x", "9", "", "rwx", true} {
		_, err := mungeMode(bad)
		assert.Error(t, err, "%v", bad)
	}
	v, err := mungeMode("644")
	assert.NoError(t, err)
	assert.Equal(t, "0644", v)
}
