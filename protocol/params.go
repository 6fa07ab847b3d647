package protocol

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits on one params document. They bound the work and memory a hostile
// document can cost: aliases are expanded while converting, so a
// billion-laughs document runs into MaxParamsValues long before it costs
// anything, and a self-referencing alias runs into MaxParamsDepth.
const (
	// MaxParamsDepth is the deepest nesting of mappings and sequences.
	MaxParamsDepth = 64
	// MaxParamsValues is the most values (scalars, mappings, sequences,
	// counting every alias expansion) one document may produce.
	MaxParamsValues = 100_000
)

// estimateAbove is the document size from which parseParamsYAML bounds the
// node count before parsing (smaller documents cannot cost much).
const estimateAbove = 16 << 10

// ParamsError says why a params document was refused.
type ParamsError struct {
	// Line and Column locate the problem in the document (1-based; 0 when
	// unknown).
	Line, Column int
	Msg          string
	// Attr is the attribute whose value is at fault, when the fault is in
	// one top-level value and names it usefully (an integer beyond 64
	// bits); "" otherwise.
	Attr string
}

func (e *ParamsError) Error() string {
	if e.Attr != "" {
		if e.Line > 0 {
			return fmt.Sprintf("params: line %d column %d: %s: %s", e.Line, e.Column, e.Attr, e.Msg)
		}
		return "params: " + e.Attr + ": " + e.Msg
	}
	if e.Line > 0 {
		return fmt.Sprintf("params: line %d column %d: %s", e.Line, e.Column, e.Msg)
	}
	return "params: " + e.Msg
}

// ParseParams decodes a params document the way Puppet reads it with Psych
// (YAML 1.1 scalars, safe loading): the document must be a mapping; plain
// yes/no/on/off/true/false in any case are booleans, ~ and null are nil,
// integers may be written in binary, octal (leading 0), hex, with _ or ,
// separators or base 60; dates, times, symbols and Ruby objects are refused
// as Psych's safe loading refuses them.
func ParseParams(src []byte) (map[string]any, error) {
	if m, ok := fastParams(src); ok {
		return m, nil
	}
	return parseParamsYAML(src)
}

// parseParamsYAML is the general path through yaml.v3.
func parseParamsYAML(src []byte) (map[string]any, error) {
	if len(src) > estimateAbove {
		if n := estimateNodes(src, MaxParamsValues); n > MaxParamsValues {
			return nil, &ParamsError{Msg: fmt.Sprintf("document has more than %d values", MaxParamsValues)}
		}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ParamsError{Msg: "empty document; a mapping such as {ensure: file} is required"}
		}
		return nil, yamlErrorLocation(src, err.Error())
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, &ParamsError{Msg: "empty document; a mapping such as {ensure: file} is required"}
		}
		root = root.Content[0]
	}
	for root.Kind == yaml.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	if root.Kind != yaml.MappingNode {
		c := &converter{}
		v, err := c.value(root, 0)
		if err != nil {
			return nil, err
		}
		what := "a " + kindName(v)
		if v == nil {
			what = "null"
		}
		return nil, &ParamsError{Line: root.Line, Column: root.Column,
			Msg: fmt.Sprintf("expected a mapping such as {ensure: file}, got %s", what)}
	}
	c := &converter{}
	m, err := c.mapping(root, 0)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func kindName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64, *big.Int:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// converter turns a yaml.v3 node tree into Go values, counting what it
// makes so that alias expansion stays bounded.
type converter struct {
	n int
}

func (c *converter) count(n *yaml.Node) error {
	c.n++
	if c.n > MaxParamsValues {
		return &ParamsError{Line: n.Line, Column: n.Column,
			Msg: fmt.Sprintf("document expands to more than %d values (alias expansion bomb?)", MaxParamsValues)}
	}
	return nil
}

func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > MaxParamsDepth {
		return nil, &ParamsError{Line: n.Line, Column: n.Column,
			Msg: fmt.Sprintf("nesting deeper than %d levels (or an alias that contains itself)", MaxParamsDepth)}
	}
	if err := c.count(n); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &ParamsError{Line: n.Line, Column: n.Column, Msg: "unknown alias *" + n.Value}
		}
		return c.value(n.Alias, depth+1)
	case yaml.MappingNode:
		if err := checkTag(n, "!!map"); err != nil {
			return nil, err
		}
		return c.mapping(n, depth)
	case yaml.SequenceNode:
		if err := checkTag(n, "!!seq"); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth)
	}
	return nil, &ParamsError{Line: n.Line, Column: n.Column, Msg: "unsupported YAML node"}
}

// checkTag refuses the tags on collections that Psych's safe loading
// refuses (Ruby classes, sets, ordered maps); any other tag, !foo or !!foo
// alike, leaves a plain list or mapping, as in Psych.
func checkTag(n *yaml.Node, plain string) error {
	if n.Style&yaml.TaggedStyle == 0 || n.Tag == plain || n.Tag == "" {
		return nil
	}
	switch t := n.Tag; {
	case strings.HasPrefix(t, "!ruby/"), t == "!!set", t == "!set", t == "!!omap", t == "!omap", t == "!!pairs",
		strings.HasPrefix(t, "!seq:"), strings.HasPrefix(t, "!map:"):
		return &ParamsError{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("tag %s is not allowed", n.Tag)}
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	if depth > MaxParamsDepth {
		return nil, &ParamsError{Line: n.Line, Column: n.Column,
			Msg: fmt.Sprintf("nesting deeper than %d levels (or an alias that contains itself)", MaxParamsDepth)}
	}
	m := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && k.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
			if err := c.merge(m, v, depth); err != nil {
				return nil, err
			}
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		val, err := c.value(v, depth+1)
		if err != nil {
			var pe *ParamsError
			if depth == 0 && errors.As(err, &pe) && pe.Attr == "" && strings.HasSuffix(pe.Msg, intRangeSuffix) {
				pe.Attr = key
			}
			return nil, err
		}
		m[key] = val
	}
	return m, nil
}

// merge applies a << key the way Psych does: a mapping's keys override what
// is there; for a list of mappings, earlier ones win over later ones.
func (c *converter) merge(m map[string]any, v *yaml.Node, depth int) error {
	val, err := c.value(v, depth+1)
	if err != nil {
		return err
	}
	switch x := val.(type) {
	case map[string]any:
		for k, e := range x {
			m[k] = e
		}
		return nil
	case []any:
		h := map[string]any{}
		for i := len(x) - 1; i >= 0; i-- {
			e, ok := x[i].(map[string]any)
			if !ok {
				m["<<"] = val
				return nil
			}
			for k, ev := range e {
				h[k] = ev
			}
		}
		for k, e := range h {
			m[k] = e
		}
		return nil
	}
	m["<<"] = val
	return nil
}

// key renders a mapping key. Attribute names are strings; a key Psych would
// read as another scalar (1, true, ~) keeps the text it was written as, so
// that the engine names it in its "unknown attribute" error.
func (c *converter) key(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", &ParamsError{Line: k.Line, Column: k.Column, Msg: "a mapping key must be a scalar"}
	}
	if err := c.count(k); err != nil {
		return "", err
	}
	return k.Value, nil
}

func scalar(n *yaml.Node) (any, error) {
	s := n.Value
	if n.Style&yaml.TaggedStyle != 0 && strings.ContainsAny(n.Tag, ",[]{}") {
		// libyaml (Psych) ends a tag at a flow indicator and then fails.
		return nil, &ParamsError{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("invalid tag %s", n.Tag)}
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return taggedScalar(n)
	}
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return s, nil
	}
	v, err := resolvePlain(s)
	if err != nil {
		return nil, &ParamsError{Line: n.Line, Column: n.Column, Msg: err.Error()}
	}
	return v, nil
}

// taggedScalar follows Psych's deserialize for an explicitly tagged scalar
// (quoted or not): binary is base64, str is the text, float is Float() of
// the resolved value, Ruby classes are refused, and any other tag (!!int,
// !!bool, !foo, ...) resolves the text as if it were plain.
func taggedScalar(n *yaml.Node) (any, error) {
	s := n.Value
	at := func(err error) error { return &ParamsError{Line: n.Line, Column: n.Column, Msg: err.Error()} }
	switch t := n.Tag; {
	case t == "!!binary" || t == "!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, at(fmt.Errorf("%q is not valid base64", s))
		}
		if !utf8.Valid(b) {
			return nil, at(errors.New("!!binary value is not UTF-8 text"))
		}
		return string(b), nil
	case t == "!!str" || t == "!str" || t == "!ruby/string":
		return s, nil
	case t == "!!float" || t == "!float":
		v, err := resolvePlain(s)
		if err != nil {
			return nil, at(err)
		}
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil && !strings.ContainsAny(x, "_ \t") {
				return f, nil
			}
		}
		return nil, at(fmt.Errorf("%q is not a valid float", s))
	case rubyScalarTag(t):
		return nil, at(fmt.Errorf("tag %s is not allowed", t))
	}
	v, err := resolvePlain(s)
	if err != nil {
		return nil, at(err)
	}
	return v, nil
}

// rubyScalarTag: the scalar tags for which Psych makes a Ruby object
// (refused by safe loading, or no value Puppet could use). Other !ruby/
// tags, like unknown ones, just resolve the text.
func rubyScalarTag(t string) bool {
	switch t {
	case "!ruby/object:BigDecimal", "!ruby/object:DateTime", "!ruby/encoding", "!ruby/object:Complex",
		"!ruby/object:Rational", "!ruby/class", "!ruby/module", "!ruby/regexp", "!ruby/range":
		return true
	}
	return strings.HasPrefix(t, "!ruby/sym") || strings.HasPrefix(t, "!ruby/string:") || strings.HasPrefix(t, "!str:")
}

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

func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
