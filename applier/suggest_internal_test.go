package applier

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	attrs := []string{"ensure", "content", "mode", "owner", "group", "source", "target", "path", "backup", "replace", "force", "links"}
	types := []string{"cron", "exec", "file", "group", "host", "mount", "notify", "package", "service", "user"}
	tests := []struct {
		word       string
		candidates []string
		want       string
	}{
		{"contnet", attrs, "content"},  // two letters swapped
		{"conten", attrs, "content"},   // one missing
		{"contentt", attrs, "content"}, // one extra
		{"ensrue", attrs, "ensure"},
		{"onwer", attrs, "owner"},
		{"Mode", attrs, ""}, // the same word in another case is not a typo of it
		{"modes", attrs, "mode"},
		{"bogus", attrs, ""},
		{"colour", attrs, ""},
		{"x", attrs, ""}, // too short to be a typo of anything
		{"flie", types, "file"},
		{"fiel", types, "file"},
		{"packge", types, "package"},
		{"usr", types, "user"},
		{"starship", types, ""},
		{"btime", []string{"atime", "mtime", "ctime"}, ""}, // equally close to three: no guess
		{"runing", []string{"stopped", "running"}, "running"},
		{"flase", []string{"true", "false"}, "false"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, closest(tt.word, tt.candidates), tt.word)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"content", "content", 2, 0},
		{"contnet", "content", 2, 1},
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3}, // over max: max+1
		{"a", "abcdef", 2, 3},
		{"", "ab", 2, 2},
		{"ca", "abc", 3, 3}, // optimal string alignment, not full Damerau
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, editDistance(tt.a, tt.b, tt.max), "%s/%s", tt.a, tt.b)
	}
}
