package runner

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// Resource is one resource to converge, as a graph engine holds it.
//
// Its params are given one of two ways. Params is a YAML mapping in a
// string, read by the receiver as Puppet reads it (Psych's YAML 1.1: plain
// yes is a boolean, plain 0644 an octal integer). Values is the same as Go
// data, sent as a JSON object, so nothing needs quoting by hand:
//
//	Go value                                  YAML kind the receiver sees
//	string                                    string, always ("yes", "0644" stay strings)
//	bool                                      boolean
//	int, int8 … int64, uint … uint64          integer (a uint64 above MaxInt64 is refused)
//	float32, float64                          float, even when integral (1.0 stays a float;
//	                                          NaN and ±Inf are refused)
//	nil, a nil pointer                        null
//	slice or array ([]any, []string, …)       list
//	map with string keys (map[string]any, …)  mapping
//	pointer, interface                        what it points to
//
// Any other Go type (a struct, a channel) is refused with an error wrapping
// ErrInvalidRequest, as is invalid UTF-8 in a key or a string, nesting
// deeper than yamlparams.MaxDepth, or both Params and Values set. Our
// receiver takes either form; Puppet's own receiver reads only a string,
// so use Params with it.
type Resource struct {
	// Type is the resource type's name, e.g. "file" or "exec".
	Type string
	// Title is the resource's title; it fills the type's namevar unless
	// the params name it.
	Title string
	// Params is a YAML mapping in a string, e.g. "{ensure: file, mode: '0644'}".
	// JSON is YAML, so a JSON object in a string works too. Empty (and
	// Values nil) means "{}".
	Params string
	// Values are the params as Go data (see the table above); when not
	// nil, Params must be empty.
	Values map[string]any
	// Refresh sends "refresh": true: a notify edge of the caller's graph
	// fired into this resource (docs/protocol.md, Refresh). Puppet's own receiver
	// refuses the member; leave it false with it.
	Refresh bool
}

// Ref is the resource's reference as Puppet writes it, and as the receiver
// answers it: protocol.Ref (File[/tmp/x], Apt::Source[main]).
func (r *Resource) Ref() string { return protocol.Ref(r.Type, r.Title) }

// ErrInvalidRequest is wrapped by the error Apply returns, before sending
// anything, for a Resource that cannot be sent as it is: invalid UTF-8 in
// its type, title or params (JSON would carry it as U+FFFD, another name
// and other content), params that cannot be encoded, a request longer
// than the receiver reads.
var ErrInvalidRequest = errors.New("invalid request")

// maxRefInError bounds a title quoted in an error message; the Result
// keeps everything.
const maxRefInError = 256

// shortRef is the reference for an error message: the title cut short
// when it is long.
func shortRef(r *Resource) string {
	t := r.Title
	if len(t) > maxRefInError {
		cut := maxRefInError
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = fmt.Sprintf("%s...(%d bytes)", t[:cut], len(r.Title))
	}
	return protocol.Ref(strings.ToValidUTF8(r.Type, "\uFFFD"), strings.ToValidUTF8(t, "\uFFFD"))
}

// clip bounds a message quoted in an error.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:cut], len(s))
}

// encodeRequest writes res as one request line. noop adds the noop
// metaparameter (Check).
func encodeRequest(res *Resource, noop bool) ([]byte, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", shortRef(res), ErrInvalidRequest, fmt.Sprintf(format, args...))
	}
	if !utf8.ValidString(res.Type) {
		return nil, invalid("the type is not valid UTF-8 (byte %d)", badByte(res.Type))
	}
	if !utf8.ValidString(res.Title) {
		return nil, invalid("the title is not valid UTF-8 (byte %d)", badByte(res.Title))
	}
	if !utf8.ValidString(res.Params) {
		return nil, invalid("params are not valid UTF-8 (byte %d)", badByte(res.Params))
	}
	blank := strings.TrimSpace(res.Params) == ""
	if res.Values != nil && !blank {
		return nil, invalid("both Params and Values are set; give one")
	}
	values := res.Values
	if noop {
		// The noop metaparameter goes into the mapping, so params in a
		// string are read here as the receiver reads them.
		m := map[string]any{}
		if !blank {
			parsed, err := yamlparams.Parse([]byte(res.Params))
			if err != nil {
				return nil, fmt.Errorf("%s: %w: params: %w", shortRef(res), ErrInvalidRequest, err)
			}
			m = parsed
		}
		for k, v := range res.Values {
			m[k] = v
		}
		m["noop"] = true
		values = m
	}
	b := make([]byte, 0, 32+len(res.Type)+len(res.Title)+len(res.Params)+idRoom) // room for withID's id
	b = append(b, `{"type":`...)
	b = protocol.AppendString(b, res.Type)
	b = append(b, `,"title":`...)
	b = protocol.AppendString(b, res.Title)
	b = append(b, `,"params":`...)
	switch {
	case values != nil:
		var err error
		if b, err = protocol.AppendExactValue(b, values); err != nil {
			return nil, fmt.Errorf("%s: %w: params: %w", shortRef(res), ErrInvalidRequest, err)
		}
	case blank:
		b = append(b, `"{}"`...)
	default:
		b = protocol.AppendString(b, res.Params)
	}
	if res.Refresh {
		b = append(b, `,"refresh":true`...)
	}
	return append(b, '}', '\n'), nil
}

// badByte is the offset of the first byte of s that is not UTF-8.
func badByte(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return -1
}
