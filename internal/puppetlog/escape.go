package puppetlog

import (
	"strings"
	"unicode/utf8"
)

// EscapeControls makes s safe to print as part of one log line: control
// characters other than tab (newlines, carriage returns, ESC sequences,
// NUL, DEL, the C1 range) and bytes that are not UTF-8 are written as
// Go-style escapes (\n, \r, \x1b, \u0085), so no title, message or
// command output can end a log line early, forge one that looks like
// another record, or drive a terminal.
func EscapeControls(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&15])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 && r != '\t' || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		case r >= 0x80 && r < 0xa0:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
