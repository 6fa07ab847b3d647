package yamlparams

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// resolvePlain reads a plain (unquoted) scalar as Psych's ScalarScanner
// does (Ruby 3.1, Psych 4), with safe loading's refusals as errors.
func resolvePlain(s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	if strings.IndexByte(s, '\n') >= 0 || wordLike(s) {
		if len(s) > 5 {
			return s, nil
		}
		switch s[0] {
		case 'y', 'Y', 't', 'T', 'o', 'O', 'n', 'N', 'f', 'F', '~':
		default:
			return s, nil
		}
		switch {
		case s == "~" || anyLine(s, func(l string) bool { return strings.EqualFold(l, "null") }):
			return nil, nil
		case anyLine(s, func(l string) bool {
			return strings.EqualFold(l, "yes") || strings.EqualFold(l, "true") || strings.EqualFold(l, "on")
		}):
			return true, nil
		case anyLine(s, func(l string) bool {
			return strings.EqualFold(l, "no") || strings.EqualFold(l, "false") || strings.EqualFold(l, "off")
		}):
			return false, nil
		}
		return s, nil
	}
	if isTime(s) {
		return nil, fmt.Errorf("%q is a timestamp, which safe YAML loading refuses; quote it to make it a string", s)
	}
	if isDate(s) {
		return nil, fmt.Errorf("%q is a date, which safe YAML loading refuses; quote it to make it a string", s)
	}
	switch {
	case strings.EqualFold(s, ".inf") || strings.EqualFold(s, "+.inf"):
		return math.Inf(1), nil
	case strings.EqualFold(s, "-.inf"):
		return math.Inf(-1), nil
	case strings.EqualFold(s, ".nan"):
		return math.NaN(), nil
	}
	if len(s) >= 2 && s[0] == ':' {
		return nil, fmt.Errorf("%q is a Ruby symbol, which safe YAML loading refuses; quote it to make it a string", s)
	}
	if v, ok := sexagesimal(s); ok {
		return v, nil
	}
	if isFloat(s) {
		if s == "." || s == "+." || s == "-." {
			return s, nil
		}
		t := strings.NewReplacer("_", "", ",", "").Replace(s)
		// Ruby drops a "." before an exponent or at the end: "1." is 1.0.
		t = strings.Replace(t, ".e", "e", 1)
		t = strings.Replace(t, ".E", "E", 1)
		t = strings.TrimSuffix(t, ".")
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				return f, nil
			}
			return nil, fmt.Errorf("%q is not a valid float", s)
		}
		return f, nil
	}
	if isInteger(s) {
		return parseInt(s)
	}
	return s, nil
}

func anyLine(s string, f func(string) bool) bool {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return f(s)
		}
		if f(s[:i]) {
			return true
		}
		s = s[i+1:]
	}
}

// wordClass is Psych's [[:alpha:]_\s!@#$%^&*(){}<>|/\\~;=].
func wordClass(r rune) bool {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return true
		}
		return strings.IndexRune("_ \t\r\n\f\v!@#$%^&*(){}<>|/\\~;=", r) >= 0
	}
	return unicode.IsLetter(r) || unicode.Is(unicode.M, r)
}

// wordLike is Psych's /^[^\d.:-]?[[:alpha:]_\s!@#$%^&*(){}<>|\/\\~;=]+/ on
// a string without newlines.
func wordLike(s string) bool {
	r0, n := utf8.DecodeRuneInString(s)
	if wordClass(r0) {
		return true
	}
	if (r0 >= '0' && r0 <= '9') || r0 == '.' || r0 == ':' || r0 == '-' {
		return false
	}
	if n >= len(s) {
		return false
	}
	r1, _ := utf8.DecodeRuneInString(s[n:])
	return wordClass(r1)
}

func digits(s string, i int, min, max int) (int, bool) {
	n := 0
	for i+n < len(s) && n < max && s[i+n] >= '0' && s[i+n] <= '9' {
		n++
	}
	return n, n >= min
}

// isDate is Psych's /^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$/.
// Psych asks for the Date class before it parses, so under safe loading
// every match is refused, even 2001-02-30.
func isDate(s string) bool {
	if len(s) < 8 || len(s) > 10 {
		return false
	}
	if n, _ := digits(s, 0, 4, 4); n != 4 || s[4] != '-' {
		return false
	}
	rest := s[5:]
	i := strings.IndexByte(rest, '-')
	if i < 1 || i > 2 {
		return false
	}
	mo, d := rest[:i], rest[i+1:]
	if n, _ := digits(mo, 0, 1, 2); n != len(mo) {
		return false
	}
	if n, _ := digits(d, 0, 1, 2); n != len(d) || len(d) == 0 {
		return false
	}
	if len(mo) == 2 && mo[0] != '0' && !(mo[0] == '1' && mo[1] <= '2') {
		return false
	}
	if len(d) == 2 && d[0] > '3' || d == "32" || (len(d) == 2 && d[0] == '3' && d[1] > '1') {
		return false
	}
	return true
}

// isTime approximates Psych's TIME regex:
// ^-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|\s+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:\s*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?$
func isTime(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	n, ok := digits(s, i, 4, 4)
	if !ok || n != 4 {
		return false
	}
	i += 4
	for k := 0; k < 2; k++ {
		if i >= len(s) || s[i] != '-' {
			return false
		}
		i++
		n, ok = digits(s, i, 1, 2)
		if !ok {
			return false
		}
		i += n
	}
	if i >= len(s) {
		return false
	}
	if s[i] == 'T' || s[i] == 't' {
		i++
	} else {
		j := i
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == j {
			return false
		}
	}
	n, ok = digits(s, i, 1, 2)
	if !ok {
		return false
	}
	i += n
	for k := 0; k < 2; k++ {
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i++
		n, _ = digits(s, i, 2, 2)
		if n != 2 {
			return false
		}
		i += 2
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i == len(s) {
		return true
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == 'Z' {
		return i+1 == len(s)
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
		n, ok = digits(s, i, 1, 2)
		if !ok {
			return false
		}
		i += n
		if i < len(s) && s[i] == ':' {
			i++
		}
		if i == len(s) {
			return true
		}
		n, _ = digits(s, i, 2, 2)
		return n == 2 && i+2 == len(s)
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'
}

// sexagesimal: ^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$ (integer) and the same
// followed by \.[0-9_]* (float). Psych sums part * 60 ** |index - 2| with
// the sign on the first part only, so "1:20" is 4800 and "-1:20" is -40;
// we keep its arithmetic.
func sexagesimal(s string) (any, bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return nil, false
	}
	j := i
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
		j++
	}
	parts := []string{strings.ReplaceAll(s[:j], "_", "")}
	i = j
	for len(parts) < 3 && i < len(s) && s[i] == ':' {
		i++
		n, _ := digits(s, i, 1, 2)
		if n == 0 || (n == 2 && s[i] > '5') {
			return nil, false
		}
		parts = append(parts, s[i:i+n])
		i += n
	}
	if len(parts) < 2 {
		return nil, false
	}
	frac := ""
	isF := false
	if i < len(s) && s[i] == '.' {
		isF = true
		j := i + 1
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
			j++
		}
		frac = strings.ReplaceAll(s[i:j], "_", "")
		i = j
	}
	if i != len(s) {
		return nil, false
	}
	if isF {
		var f float64
		for e, p := range parts {
			if e == len(parts)-1 {
				p += frac
			}
			x, _ := strconv.ParseFloat(strings.TrimSuffix(p, "."), 64)
			f += x * math.Pow(60, math.Abs(float64(e-2)))
		}
		return f, true
	}
	var v int64
	for e, p := range parts {
		x, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, false
		}
		w := int64(1)
		for k := 0; k < abs(e-2); k++ {
			w *= 60
		}
		if x > math.MaxInt64/w || x < math.MinInt64/w {
			return nil, false
		}
		v += x * w
	}
	return v, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// isFloat: ^[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?$
func isFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && s[i] >= '0' && s[i] <= '9' {
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '_' || s[i] == ',') {
			i++
		}
	}
	if i >= len(s) || s[i] != '.' {
		return false
	}
	i++
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i >= len(s) || (s[i] != '-' && s[i] != '+') {
			return false
		}
		i++
		n, _ := digits(s, i, 1, len(s))
		if n == 0 {
			return false
		}
		i += n
	}
	return i == len(s)
}

// isInteger is Psych's INTEGER regex: binary 0b, octal 0, decimal with _
// or , between digits, hex 0x; all with an optional sign.
func isInteger(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	t := s[i:]
	all := func(t string, ok func(byte) bool) bool {
		if t == "" {
			return false
		}
		for k := 0; k < len(t); k++ {
			if !ok(t[k]) {
				return false
			}
		}
		return true
	}
	switch {
	case strings.HasPrefix(t, "0b"):
		return all(t[2:], func(c byte) bool { return c == '0' || c == '1' || c == '_' || c == ',' })
	case strings.HasPrefix(t, "0x"):
		return all(t[2:], func(c byte) bool {
			return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '_' || c == ','
		})
	case t == "0":
		return true
	case strings.HasPrefix(t, "0"):
		return all(t[1:], func(c byte) bool { return c >= '0' && c <= '7' || c == '_' || c == ',' })
	}
	if t == "" || t[0] < '1' || t[0] > '9' {
		return false
	}
	for k := 1; k < len(t); k++ {
		c := t[k]
		if c >= '0' && c <= '9' {
			continue
		}
		if (c == '_' || c == ',') && k+1 < len(t) && t[k+1] >= '0' && t[k+1] <= '9' {
			k++
			continue
		}
		return false
	}
	return true
}

// intSeparators are what Ruby's Integer() ignores in a number.
var intSeparators = strings.NewReplacer("_", "", ",", "")

// intRangeSuffix ends the error for an integer beyond 64 bits; the
// top-level mapping adds the attribute's name to it.
const intRangeSuffix = " is out of range (64 bits)"

// parseInt is Ruby's Integer() on the scalar with _ and , removed.
func parseInt(s string) (any, error) {
	t := s
	if strings.ContainsAny(s, "_,") {
		t = intSeparators.Replace(s)
	}
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(t, "0b"):
		base, t = 2, t[2:]
	case strings.HasPrefix(t, "0x"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" {
		return nil, fmt.Errorf("%q is not a valid integer", s)
	}
	u, err := strconv.ParseUint(t, base, 64)
	if err != nil || (!neg && u > math.MaxInt64) || (neg && u > 1<<63) {
		return nil, fmt.Errorf("integer %s%s", s, intRangeSuffix)
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}
