package puppetlog

import (
	"testing"
)

func TestEscapeControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain /etc/motd\t[x]":   "plain /etc/motd\t[x]",
		"a\nError: forged":       `a\nError: forged`,
		"\x1b[31mred\x1b[0m":     `\x1b[31mred\x1b[0m`,
		"cr\rover":               `cr\rover`,
		"nul\x00del\x7f":         `nul\x00del\x7f`,
		"bad \xff\xfe utf8":      `bad \xff\xfe utf8`,
		"c1 \u0085 next line":    `c1 \u0085 next line`,
		"ünïcødé and emoji 🙂 ok": "ünïcødé and emoji 🙂 ok",
	} {
		if got := EscapeControls(in); got != want {
			t.Errorf("EscapeControls(%q) = %q, want %q", in, got, want)
		}
	}
}
