package yamlparams

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/protocol/internal/intern"
)

// Limits on one params document. They bound the work and memory a hostile
// document can cost: aliases are expanded while converting, so a
// billion-laughs document runs into MaxValues long before it costs
// anything, and a self-referencing alias runs into MaxDepth.
const (
	// MaxDepth is the deepest nesting of mappings and sequences.
	MaxDepth = 64
	// MaxValues is the most values (scalars, mappings, sequences,
	// counting every alias expansion) one document may produce.
	MaxValues = 100_000
)

// estimateAbove is the document size from which parseYAML bounds the
// node count before parsing (smaller documents cannot cost much).
const estimateAbove = 16 << 10

// Error says why a params document was refused.
type Error struct {
	// Line and Column locate the problem in the document (1-based; 0 when
	// unknown).
	Line, Column int
	Msg          string
	// Attr is the attribute whose value is at fault, when the fault is in
	// one top-level value and names it usefully (an integer beyond 64
	// bits); "" otherwise.
	Attr string
}

func (e *Error) Error() string {
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

// Parse decodes a params document the way Puppet reads it with Psych
// (YAML 1.1 scalars, safe loading): the document must be a mapping; plain
// yes/no/on/off/true/false in any case are booleans, ~ and null are nil,
// integers may be written in binary, octal (leading 0), hex, with _ or ,
// separators or base 60; dates, times, symbols and Ruby objects are refused
// as Psych's safe loading refuses them. Values are string, int64, float64,
// bool, nil, []any and map[string]any. Errors are *Error.
func Parse(src []byte) (map[string]any, error) {
	if m, ok := fastParams(src); ok {
		return m, nil
	}
	return parseYAML(src, nil)
}

// Reader parses documents one after another as Parse does, reusing its
// buffer from one to the next. The zero Reader is ready; it is not safe
// for concurrent use.
type Reader struct {
	// Strings, when not nil, shares the short keys and values repeated
	// from document to document (a type's attribute names, a mode, an
	// owner). The values it shares are never changed, so they may be
	// kept.
	Strings *intern.Cache
	buf     []byte // where the fast path puts together quoted values with escapes
	hints   []Hint // the last document's
}

// A Hint says how a top-level key was probably meant, when reading the
// document made it out of something else: in {mode: u=rw,go=r} a plain
// value ends at the comma, and go=r becomes a key of its own. A request
// refused for that key (an unknown parameter) can say Text too.
type Hint struct {
	Key  string
	Text string
}

// Hints returns the hints about the document ParseInto read last; nil for
// nearly every document (none comes from the fast path's grammar).
func (r *Reader) Hints() []Hint { return r.hints }

// maxKeptBuf bounds the buffer a Reader keeps between documents: one left
// bigger by an unusual document is dropped rather than reused.
const maxKeptBuf = 64 << 10

// ParseInto is Parse filling m, which must be empty (nil: a new map), when
// the document takes the fast path; otherwise it clears m and returns a new
// map.
func (r *Reader) ParseInto(src []byte, m map[string]any) (map[string]any, error) {
	r.hints = nil
	got, ok := r.fast(src, m)
	if cap(r.buf) > maxKeptBuf {
		r.buf = nil
	}
	if ok {
		return got, nil
	}
	clear(m)
	return parseYAML(src, &r.hints)
}

// parseYAML is the general path through yaml.v3. With hints not nil, it
// sets the hints about the document there.
func parseYAML(src []byte, hints *[]Hint) (map[string]any, error) {
	if len(src) > estimateAbove {
		if n := estimateNodes(src, MaxValues); n > MaxValues {
			return nil, &Error{Msg: fmt.Sprintf("document has more than %d values", MaxValues)}
		}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Msg: "empty document; a mapping such as {ensure: file} is required"}
		}
		return nil, locateError(src, err.Error())
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, &Error{Msg: "empty document; a mapping such as {ensure: file} is required"}
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
		return nil, &Error{Line: root.Line, Column: root.Column,
			Msg: fmt.Sprintf("expected a mapping such as {ensure: file}, got %s", what)}
	}
	c := &converter{}
	m, err := c.mapping(root, 0)
	if err != nil {
		return nil, err
	}
	if hints != nil && root.Style&yaml.FlowStyle != 0 {
		*hints = commaHints(root)
	}
	return m, nil
}

// commaHints finds, in a flow mapping, the keys without a value that
// follow a plain value: {mode: u=rw,go=r} meant the mode u=rw,go=r, but a
// plain value ends at the first comma. Each key of such a run gets the
// hint to quote the whole value.
func commaHints(n *yaml.Node) []Hint {
	var hints []Hint
	plain := func(s *yaml.Node) bool {
		return s.Kind == yaml.ScalarNode && s.Style == 0 && s.Tag != "!!merge"
	}
	for i := 0; i+3 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !plain(k) || !plain(v) || v.Value == "" {
			continue
		}
		value, j := v.Value, i+2
		for ; j+1 < len(n.Content); j += 2 {
			ck, cv := n.Content[j], n.Content[j+1]
			if !plain(ck) || ck.Value == "" || !plain(cv) || cv.Value != "" {
				break
			}
			value += "," + ck.Value
		}
		text := fmt.Sprintf("quote a value that holds a comma, as in %s: '%s' (in a flow mapping a plain value ends at the first ',')",
			k.Value, strings.ReplaceAll(value, "'", "''"))
		for e := i + 2; e < j; e += 2 {
			hints = append(hints, Hint{Key: n.Content[e].Value, Text: text})
		}
		i = j - 2
	}
	return hints
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
	if c.n > MaxValues {
		return &Error{Line: n.Line, Column: n.Column,
			Msg: fmt.Sprintf("document expands to more than %d values (alias expansion bomb?)", MaxValues)}
	}
	return nil
}

func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, &Error{Line: n.Line, Column: n.Column,
			Msg: fmt.Sprintf("nesting deeper than %d levels (or an alias that contains itself)", MaxDepth)}
	}
	if err := c.count(n); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &Error{Line: n.Line, Column: n.Column, Msg: "unknown alias *" + n.Value}
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
	return nil, &Error{Line: n.Line, Column: n.Column, Msg: "unsupported YAML node"}
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
		return &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("tag %s is not allowed", n.Tag)}
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node, depth int) (map[string]any, error) {
	if depth > MaxDepth {
		return nil, &Error{Line: n.Line, Column: n.Column,
			Msg: fmt.Sprintf("nesting deeper than %d levels (or an alias that contains itself)", MaxDepth)}
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
			var pe *Error
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
		return "", &Error{Line: k.Line, Column: k.Column, Msg: "a mapping key must be a scalar"}
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
		return nil, &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("invalid tag %s", n.Tag)}
	}
	if n.Style&yaml.TaggedStyle != 0 {
		return taggedScalar(n)
	}
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return s, nil
	}
	v, err := resolvePlain(s)
	if err != nil {
		return nil, &Error{Line: n.Line, Column: n.Column, Msg: err.Error()}
	}
	return v, nil
}

// taggedScalar follows Psych's deserialize for an explicitly tagged scalar
// (quoted or not): binary is base64, str is the text, float is Float() of
// the resolved value, Ruby classes are refused, and any other tag (!!int,
// !!bool, !foo, ...) resolves the text as if it were plain.
func taggedScalar(n *yaml.Node) (any, error) {
	s := n.Value
	at := func(err error) error { return &Error{Line: n.Line, Column: n.Column, Msg: err.Error()} }
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
