package linefile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier/types/internal/linefile"
)

func TestRubyLineRules(t *testing.T) {
	for in, want := range map[string]string{"a\n": "a", "a\r\n": "a", "a\r": "a", "a": "a", "a\n\n": "a\n", "": ""} {
		assert.Equal(t, want, string(linefile.Chomp([]byte(in))), "chomp %q", in)
	}
	assert.Equal(t, "a\r", string(linefile.NoNewline([]byte("a\r\n"))))
	assert.Equal(t, "x\ny\n", string(linefile.Puts(linefile.Puts(nil, []byte("x")), []byte("y\n"))))
	assert.Equal(t, "\n", string(linefile.Puts(nil, nil)), "puts of an empty line writes a newline")
}

func TestRegexpCached(t *testing.T) {
	a, err := linefile.Regexp("^x+$")
	assert.NoError(t, err)
	b, _ := linefile.Regexp("^x+$")
	assert.Same(t, a, b)
	_, err = linefile.Regexp("(?=x)")
	assert.Error(t, err)
}
