package concat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	"gopkg.in/yaml.v3"
)

// merge joins the sorted fragments as format says.
func merge(ps []piece, format string, force bool) (string, error) {
	switch format {
	case "yaml":
		return mergeYAML(ps, force)
	case "json", "json-pretty", "json-array", "json-array-pretty":
		vals := make([]any, 0, len(ps))
		for _, p := range ps {
			v, err := parseJSON(p.content)
			if err != nil {
				return "", fmt.Errorf("fragment %s: %w", strings.SplitN(p.key, "___", 2)[1], err)
			}
			vals = append(vals, v)
		}
		var out any
		if format == "json" || format == "json-pretty" {
			var acc any = &object{}
			for _, v := range vals {
				var err error
				if acc, err = nestedMerge(acc, v, force); err != nil {
					return "", err
				}
			}
			out = acc
		} else {
			out = vals
		}
		var b bytes.Buffer
		writeJSON(&b, out, strings.HasSuffix(format, "pretty"), "")
		return b.String(), nil
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.content)
	}
	return b.String(), nil
}

// object is a JSON or YAML map that keeps its keys' order, as Ruby's
// hashes do.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *object:
		return len(x.keys) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// nestedMerge is the module's nested_merge: maps merged key by key (maps
// and lists in them merged again), lists joined without duplicates, a
// key with two different values an error unless force, the first value
// kept.
func nestedMerge(a, b any, force bool) (any, error) {
	if isEmpty(b) {
		return a, nil
	}
	if isEmpty(a) {
		return b, nil
	}
	if la, ok := a.([]any); ok {
		if lb, ok := b.([]any); ok {
			return uniq(append(append([]any{}, la...), lb...)), nil
		}
	}
	oa, okA := a.(*object)
	ob, okB := b.(*object)
	if !okA || !okB {
		return nil, fmt.Errorf("cannot merge %s with %s", kindOf(a), kindOf(b))
	}
	out := &object{}
	for _, k := range oa.keys {
		out.set(k, oa.vals[k])
	}
	for _, k := range ob.keys {
		v2 := ob.vals[k]
		v1, ok := out.vals[k]
		if !ok {
			out.set(k, v2)
			continue
		}
		_, m1 := v1.(*object)
		_, m2 := v2.(*object)
		_, l1 := v1.([]any)
		_, l2 := v2.([]any)
		if m1 && m2 || l1 && l2 {
			m, err := nestedMerge(v1, v2, force)
			if err != nil {
				return nil, err
			}
			out.set(k, m)
			continue
		}
		if !equal(v1, v2) && !force {
			return nil, fmt.Errorf("Duplicate key '%s' found with values '%s' and %s'. Use 'force' attribute to merge keys.", k, text(v1), text(v2))
		}
	}
	return out, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case *object:
		return "a map"
	case []any:
		return "a list"
	}
	return "a scalar"
}

func text(v any) string {
	var b bytes.Buffer
	writeJSON(&b, v, false, "")
	return strings.Trim(b.String(), `"`)
}

func equal(a, b any) bool {
	var x, y bytes.Buffer
	writeJSON(&x, a, false, "")
	writeJSON(&y, b, false, "")
	return x.String() == y.String()
}

func uniq(l []any) []any {
	var out []any
	for _, v := range l {
		dup := false
		for _, w := range out {
			dup = dup || equal(v, w)
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// parseJSON reads one JSON value, maps as *object, numbers as written.
func parseJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := readJSON(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func readJSON(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			o := &object{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readJSON(d)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			l := []any{}
			for d.More() {
				v, err := readJSON(d)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := d.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", x)
	}
	return t, nil
}

// writeJSON writes v as Ruby's to_json (compact) or
// JSON.pretty_generate (two-space indent) would.
func writeJSON(b *bytes.Buffer, v any, pretty bool, indent string) {
	switch x := v.(type) {
	case *object:
		if len(x.keys) == 0 {
			if pretty { // as Ruby's pretty_generate writes an empty one
				b.WriteString("{\n" + indent + "}")
			} else {
				b.WriteString("{}")
			}
			return
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if pretty {
				b.WriteString("\n" + indent + "  ")
			}
			writeString(b, k)
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
			writeJSON(b, x.vals[k], pretty, indent+"  ")
		}
		if pretty {
			b.WriteString("\n" + indent)
		}
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			if pretty {
				b.WriteString("[\n\n" + indent + "]")
			} else {
				b.WriteString("[]")
			}
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if pretty {
				b.WriteString("\n" + indent + "  ")
			}
			writeJSON(b, e, pretty, indent+"  ")
		}
		if pretty {
			b.WriteString("\n" + indent)
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		fmt.Fprint(b, x)
	}
}

func writeString(b *bytes.Buffer, s string) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// mergeYAML merges the fragments as YAML maps (or lists) and writes the
// result as a YAML document.
func mergeYAML(ps []piece, force bool) (string, error) {
	var acc any = &object{}
	for _, p := range ps {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(p.content), &n); err != nil {
			return "", fmt.Errorf("fragment %s: %w", strings.SplitN(p.key, "___", 2)[1], err)
		}
		v := fromYAML(&n)
		var err error
		if acc, err = nestedMerge(acc, v, force); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString("---")
	writeYAML(&b, acc, "")
	b.WriteByte('\n')
	return b.String(), nil
}

func fromYAML(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return fromYAML(n.Content[0])
	case yaml.MappingNode:
		o := &object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			o.set(n.Content[i].Value, fromYAML(n.Content[i+1]))
		}
		return o
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			l = append(l, fromYAML(c))
		}
		return l
	case yaml.AliasNode:
		return fromYAML(n.Alias)
	}
	var v any
	_ = n.Decode(&v)
	return v
}

// writeYAML writes v in the layout of Ruby's Psych (to_yaml): a map's
// keys at its indentation, a list under a key not indented, "- " items,
// empty collections as {} and [], multi-line strings as literal blocks.
// v follows what was written before it on the line (a key, "---", "- ").
func writeYAML(b *strings.Builder, v any, indent string) {
	switch x := v.(type) {
	case *object:
		if len(x.keys) == 0 {
			b.WriteString(" {}")
			return
		}
		for _, k := range x.keys {
			b.WriteString("\n" + indent)
			b.WriteString(yamlScalar(k, indent) + ":")
			val := x.vals[k]
			if l, ok := val.([]any); ok && len(l) > 0 {
				writeYAML(b, l, indent)
			} else {
				writeYAML(b, val, indent+"  ")
			}
		}
	case []any:
		if len(x) == 0 {
			b.WriteString(" []")
			return
		}
		for _, e := range x {
			b.WriteString("\n" + indent + "-")
			switch ev := e.(type) {
			case *object:
				if len(ev.keys) == 0 {
					b.WriteString(" {}")
					continue
				}
				for i, k := range ev.keys {
					if i == 0 {
						b.WriteString(" ")
					} else {
						b.WriteString("\n" + indent + "  ")
					}
					b.WriteString(yamlScalar(k, indent+"  ") + ":")
					val := ev.vals[k]
					if l, ok := val.([]any); ok && len(l) > 0 {
						writeYAML(b, l, indent+"  ")
					} else {
						writeYAML(b, val, indent+"    ")
					}
				}
			case []any:
				writeYAML(b, ev, indent+"  ")
			default:
				writeYAML(b, e, indent+"  ")
			}
		}
	case nil:
		// Psych writes nothing after the key
	default:
		b.WriteString(" " + yamlScalar(x, indent))
	}
}

var yamlSpecial = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "true": true, "false": true,
	"on": true, "off": true, "null": true, "~": true}

// yamlScalar renders a scalar as Psych does in the common cases: a plain
// string when it reads back as the same string, else single-quoted; a
// string of several lines as a literal block.
func yamlScalar(v any, indent string) string {
	s, ok := v.(string)
	if !ok {
		switch x := v.(type) {
		case bool:
			if x {
				return "true"
			}
			return "false"
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return fmt.Sprint(v)
	}
	if strings.Contains(s, "\n") {
		head := "|-"
		body := s
		if strings.HasSuffix(s, "\n") {
			head, body = "|", strings.TrimSuffix(s, "\n")
		}
		return head + "\n" + indent + "  " + strings.ReplaceAll(body, "\n", "\n"+indent+"  ")
	}
	var probe any
	plain := s != "" && !yamlSpecial[strings.ToLower(s)] && yaml.Unmarshal([]byte(s), &probe) == nil && probe == s &&
		!strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@` ") && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, ":") &&
		!strings.Contains(s, ": ") && !strings.Contains(s, " #")
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
