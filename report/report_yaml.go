package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	json "github.com/goccy/go-json"
)

// emitYAML writes a JSON document as block YAML, laid out the way Ruby's
// Psych lays it out (a sequence under a key at the key's indentation), for
// a reader of YAML 1.1 (Psych) as much as of 1.2: a string is plain only
// when it cannot be read as anything else, else double-quoted with JSON's
// escapes; a float keeps its dot (1.0e-05); null is left empty. Made from
// the JSON's tokens, the YAML is the JSON's document by construction;
// yaml.v3's encoder, through its nodes, took some 12 times as long for a
// report of a thousand resources.
func emitYAML(w io.Writer, data []byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	e := &emitter{w: bw, dec: dec}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if err := e.value(tok, 0, false, true); err != nil {
		return err
	}
	return bw.Flush()
}

type emitter struct {
	w   *bufio.Writer
	dec *json.Decoder
}

func (e *emitter) indent(n int) {
	for i := 0; i < n; i++ {
		e.w.WriteByte(' ')
	}
}

// value writes the value starting with tok. inline: the line it starts
// on is written up to "- " (a sequence's item); top: it is the document.
// After a key (neither), a container starts on the next line.
func (e *emitter) value(tok json.Token, ind int, inline, top bool) error {
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		t, err := scalarText(tok)
		if err != nil {
			return err
		}
		if !inline && !top {
			if t != "" {
				e.w.WriteByte(' ')
			}
		}
		e.w.WriteString(t)
		e.w.WriteByte('\n')
		return nil
	}
	if !e.dec.More() {
		if _, err := e.dec.Token(); err != nil { // the closing delimiter
			return err
		}
		if !inline && !top {
			e.w.WriteByte(' ')
		}
		if d == '{' {
			e.w.WriteString("{}\n")
		} else {
			e.w.WriteString("[]\n")
		}
		return nil
	}
	if !inline && !top {
		e.w.WriteByte('\n')
	}
	first := true
	for e.dec.More() {
		if !first || !inline {
			e.indent(ind)
		}
		first = false
		if d == '{' {
			k, err := e.dec.Token()
			if err != nil {
				return err
			}
			kt, err := scalarText(k)
			if err != nil {
				return err
			}
			e.w.WriteString(kt)
			e.w.WriteByte(':')
			v, err := e.dec.Token()
			if err != nil {
				return err
			}
			next := ind + 2
			if vd, ok := v.(json.Delim); ok && vd == '[' {
				next = ind // a sequence under a key at the key's indentation
			}
			if err := e.value(v, next, false, false); err != nil {
				return err
			}
			continue
		}
		v, err := e.dec.Token()
		if err != nil {
			return err
		}
		if _, ok := v.(json.Delim); !ok {
			if t, err := scalarText(v); err != nil {
				return err
			} else if t == "" {
				e.w.WriteString("-\n")
				continue
			}
		}
		e.w.WriteString("- ")
		if err := e.value(v, ind+2, true, false); err != nil {
			return err
		}
	}
	_, err := e.dec.Token() // the closing delimiter
	return err
}

// scalarText is a JSON scalar as YAML text ("" for null).
func scalarText(tok json.Token) (string, error) {
	switch v := tok.(type) {
	case nil:
		return "", nil
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v.String(), nil
		}
		return rubyFloat(v.String()), nil
	case string:
		if plain(v) {
			return v, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	return "", fmt.Errorf("unexpected JSON token %v", tok)
}

// plain: s may be written unquoted and read back as this string by YAML
// 1.1 and 1.2 readers: it starts with a letter or a slash, holds only
// letters, digits, spaces and _ . / - [ ] ( ) @ + = , and is none of the
// words YAML 1.1 reads as a boolean or null.
func plain(s string) bool {
	if s == "" || s[len(s)-1] == ' ' {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_./-[]()@+=, ", c) >= 0:
		default:
			return false
		}
	}
	if len(s) <= 5 {
		switch strings.ToLower(s) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
			return false
		}
	}
	return true
}
