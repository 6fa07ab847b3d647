package file

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/pippet/pippet/applier"
)

var (
	symbolicMode = regexp.MustCompile(`^([ugoa]*[-=+][-=+rstwxXugo]*)(,[ugoa]*[-=+][-=+rstwxXugo]*)*$`)
)

// mungeMode accepts only strings (an unquoted YAML 0644 is an integer and
// an error, as in Puppet) and normalises octal modes by dropping leading
// zeros, so "0644" and "644" are the same value.
func mungeMode(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		if k := applier.RubyClass(v); k == "Integer" || k == "Float" {
			// mode: 644 or 0644 unquoted: YAML reads a number.
			return nil, fmt.Errorf("the file mode specification must be a string, not '%s'; quote the mode as a string, e.g. '0644'", k)
		}
		return nil, fmt.Errorf("the file mode specification must be a string, not '%s'", applier.RubyClass(v))
	}
	if len(s) == 4 && s[0] == '0' && isOctal(s[1]) && isOctal(s[2]) && isOctal(s[3]) {
		return v, nil // the usual '0644': already normal
	}
	s = strings.TrimSpace(s)
	if isNumericMode(s) {
		n, _ := strconv.ParseUint(s, 8, 32)
		return fmt.Sprintf("%04o", n), nil
	}
	if !symbolicMode.MatchString(s) {
		return nil, fmt.Errorf("the file mode specification is invalid: %q", s)
	}
	// Catch what the pattern lets through (e.g. "u+X" is fine, "u=X" is not).
	if _, err := applyMode(s, 0o644, false); err != nil {
		return nil, err
	}
	return s, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// isNumericMode reports whether a munged mode is octal.
// isNumericMode: one to four octal digits, or five with a leading zero
// (what `^0?[0-7]{1,4}$` matches; checked by hand, since every unchanged
// file with a mode asks).
func isNumericMode(m string) bool {
	n := len(m)
	if n == 0 || n > 5 {
		return false
	}
	for i := 0; i < n; i++ {
		if !isOctal(m[i]) {
			return false
		}
	}
	return n <= 4 || m[0] == '0'
}

// applyMode computes the mode bits a (munged) mode gives a file whose
// current bits are cur. Numeric modes on directories get the search bit
// wherever the read bit is set, as Puppet does.
func applyMode(mode string, cur uint32, isDir bool) (uint32, error) {
	if isNumericMode(mode) {
		n, _ := strconv.ParseUint(mode, 8, 32)
		v := uint32(n)
		if isDir {
			if v&0o400 != 0 {
				v |= 0o100
			}
			if v&0o040 != 0 {
				v |= 0o010
			}
			if v&0o004 != 0 {
				v |= 0o001
			}
		}
		return v, nil
	}
	orig := map[byte]uint32{'s': (cur & 0o7000) >> 9, 'u': (cur & 0o700) >> 6, 'g': (cur & 0o70) >> 3, 'o': cur & 0o7}
	anyX := cur&0o111 != 0
	final := map[byte]uint32{'s': orig['s'], 'u': orig['u'], 'g': orig['g'], 'o': orig['o']}
	for _, part := range strings.Split(mode, ",") {
		part = strings.TrimSpace(part)
		i := strings.IndexAny(part, "+-=")
		if i < 0 {
			return 0, fmt.Errorf("missing action at %q in symbolic mode %q", part, mode)
		}
		who, dsl := part[:i], part[i:]
		if who == "" {
			who = "a"
		}
		who = strings.ReplaceAll(who, "a", "ugo")
		snap := map[byte]uint32{'s': final['s'], 'u': final['u'], 'g': final['g'], 'o': final['o']}
		seen := map[byte]bool{}
		for w := 0; w < len(who); w++ {
			c := who[w]
			if seen[c] {
				continue
			}
			seen[c] = true
			value := snap[c]
			var action byte
			apply := func(m, v uint32) uint32 {
				if action == '-' {
					return m &^ v
				}
				return m | v
			}
			for j := 0; j < len(dsl); j++ {
				op := dsl[j]
				switch op {
				case '+', '-', '=':
					action = op
					if op == '=' {
						value = 0
					}
				case 'u', 'g', 'o':
					value = apply(value, snap[op])
				case 'r':
					value = apply(value, 4)
				case 'w':
					value = apply(value, 2)
				case 'x':
					value = apply(value, 1)
				case 'X':
					// As chmod(1) (Puppet allows X only after '+').
					if isDir || anyX {
						value = apply(value, 1)
					}
				case 's', 't':
					var bit uint32
					switch {
					case op == 't':
						bit = 1
					case c == 'u':
						bit = 4
					case c == 'g':
						bit = 2
					default:
						bit = 1
					}
					final['s'] = apply(final['s'], bit)
				default:
					return 0, fmt.Errorf("unknown operation %q in symbolic mode %q", op, mode)
				}
			}
			final[c] = value
		}
	}
	return final['s']<<9 | final['u']<<6 | final['g']<<3 | final['o'], nil
}

// formatMode prints mode bits the way Puppet's events do: '0644'.
func formatMode(m uint32) string { return fmt.Sprintf("%04o", m&0o7777) }
