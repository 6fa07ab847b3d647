package protocol

import (
	"bytes"
	"errors"
	"fmt"

	json "github.com/goccy/go-json"
)

// ErrNotResult is wrapped by DecodeResult's error for a line that is not
// an answer: not a JSON object, or one without the failed, changed and
// error members every receiver sends (the ready banner is such a line).
var ErrNotResult = errors.New("not a result line")

// optBool is a JSON boolean that remembers whether it was present.
type optBool struct{ set, v bool }

func (b *optBool) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &b.v); err != nil {
		return err
	}
	b.set = true
	return nil
}

// wireResult is an answer line as it is read: the members every receiver
// sends are checked for presence.
type wireResult struct {
	Resource  string          `json:"resource"`
	Failed    optBool         `json:"failed"`
	Changed   optBool         `json:"changed"`
	Noop      bool            `json:"noop"`
	Error     optBool         `json:"error"`
	Exception *string         `json:"exception"`
	ID        json.RawMessage `json:"id"`
	Events    []Event         `json:"events"`
	State     State           `json:"state"`
	Params    *string         `json:"params"`
	Instances []Instance      `json:"instances"`
	Decl      json.RawMessage `json:"declaration"`
}

// DecodeResult reads one answer line, as AppendResult writes it or as
// Puppet's receiver does (six members, no id or events). Blanks and the
// line's newline around the object are allowed. The members failed,
// changed and error must be there; exception may be a string or null.
// Its errors never quote the line.
func DecodeResult(line []byte, r *Result) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrNotResult)
	}
	if decodeResultFast(line, r) {
		return nil
	}
	return decodeResultJSON(line, r)
}

// decodeResultJSON is DecodeResult through the JSON decoder.
func decodeResultJSON(line []byte, r *Result) error {
	var w wireResult
	if err := json.Unmarshal(line, &w); err != nil {
		return fmt.Errorf("invalid answer: %w", err)
	}
	if !w.Failed.set || !w.Changed.set || !w.Error.set {
		return fmt.Errorf("%w: lacks failed, changed or error", ErrNotResult)
	}
	*r = Result{
		Resource:  w.Resource,
		Failed:    w.Failed.v,
		Changed:   w.Changed.v,
		Noop:      w.Noop,
		Error:     w.Error.v,
		Events:    w.Events,
		State:     w.State,
		Instances: w.Instances,
	}
	if w.Params != nil {
		r.Params = *w.Params
		if r.State == nil {
			r.State = State{}
		}
	}
	if len(w.Decl) > 0 && !bytes.Equal(w.Decl, []byte("null")) {
		r.Declaration = []byte(w.Decl)
	}
	if len(w.ID) > 0 {
		r.ID = []byte(w.ID)
	}
	if w.Exception != nil {
		r.Exception = *w.Exception
	}
	return nil
}

// decodeResultFast reads, in one pass, the answer AppendResult writes for
// a resource without an exception, named without escapes, with no id or an
// integer one, and with no events or events whose values are strings
// without escapes, booleans or nulls: the answer to a resource already in
// sync, the one a converging engine reads most, and to the plain changes
// (a notify's message, a mode, an ensure). It reports false for any other
// line, which DecodeResult then reads with the JSON decoder; for the lines
// it takes, both give the same Result.
func decodeResultFast(line []byte, r *Result) bool {
	const pre = `{"resource":"`
	if !bytes.HasPrefix(line, []byte(pre)) {
		return false
	}
	rest := line[len(pre):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return false
	}
	name := rest[:q]
	for _, c := range name {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return false // escapes, control or non-ASCII bytes: the decoder's
		}
	}
	rest = rest[q+1:]
	var v [4]bool
	for i, key := range [4]string{`,"failed":`, `,"changed":`, `,"noop":`, `,"error":`} {
		if !bytes.HasPrefix(rest, []byte(key)) {
			return false
		}
		rest = rest[len(key):]
		switch {
		case bytes.HasPrefix(rest, []byte("true")):
			v[i], rest = true, rest[4:]
		case bytes.HasPrefix(rest, []byte("false")):
			rest = rest[5:]
		default:
			return false
		}
	}
	const exc = `,"exception":null`
	if !bytes.HasPrefix(rest, []byte(exc)) {
		return false
	}
	rest = rest[len(exc):]
	var id []byte
	if bytes.HasPrefix(rest, []byte(`,"id":`)) {
		rest = rest[len(`,"id":`):]
		n := 0
		if n < len(rest) && rest[n] == '-' {
			n++
		}
		digits := n
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == digits || (rest[digits] == '0' && n > digits+1) {
			return false // not an integer as JSON writes one
		}
		id, rest = rest[:n], rest[n:]
	}
	var events []Event
	if bytes.HasPrefix(rest, []byte(`,"events":[`)) {
		if events, rest = fastEvents(rest[len(`,"events":[`):]); events == nil {
			return false
		}
	}
	if len(rest) != 1 || rest[0] != '}' {
		return false
	}
	*r = Result{Resource: string(name), Failed: v[0], Changed: v[1], Noop: v[2], Error: v[3], Events: events}
	if id != nil {
		r.ID = append([]byte(nil), id...)
	}
	return true
}

// fastEvents reads the events of decodeResultFast after their '[', in
// the order AppendResult writes their members, up to and past the ']';
// nil for anything else (an empty list included: the decoder's is not nil).
func fastEvents(b []byte) ([]Event, []byte) {
	var evs []Event
	for {
		var ev Event
		var ok bool
		var s []byte
		if !bytes.HasPrefix(b, []byte(`{"property":`)) {
			return nil, nil
		}
		if s, b, ok = fastString(b[len(`{"property":`):]); !ok {
			return nil, nil
		}
		ev.Property = string(s)
		if !bytes.HasPrefix(b, []byte(`,"previous":`)) {
			return nil, nil
		}
		if ev.Previous, b, ok = fastScalar(b[len(`,"previous":`):]); !ok {
			return nil, nil
		}
		if !bytes.HasPrefix(b, []byte(`,"desired":`)) {
			return nil, nil
		}
		if ev.Desired, b, ok = fastScalar(b[len(`,"desired":`):]); !ok {
			return nil, nil
		}
		if !bytes.HasPrefix(b, []byte(`,"message":`)) {
			return nil, nil
		}
		if s, b, ok = fastString(b[len(`,"message":`):]); !ok {
			return nil, nil
		}
		ev.Message = string(s)
		if !bytes.HasPrefix(b, []byte(`,"status":`)) {
			return nil, nil
		}
		if s, b, ok = fastString(b[len(`,"status":`):]); !ok {
			return nil, nil
		}
		ev.Status = string(s)
		if len(b) < 2 || b[0] != '}' {
			return nil, nil
		}
		evs = append(evs, ev)
		switch b[1] {
		case ',':
			b = b[2:]
		case ']':
			return evs, b[2:]
		default:
			return nil, nil
		}
	}
}

// fastString reads a JSON string of printable ASCII without escapes.
func fastString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i], b[i+1:], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// fastScalar reads a fastString, true, false or null.
func fastScalar(b []byte) (v any, rest []byte, ok bool) {
	switch {
	case bytes.HasPrefix(b, []byte("null")):
		return nil, b[4:], true
	case bytes.HasPrefix(b, []byte("true")):
		return true, b[4:], true
	case bytes.HasPrefix(b, []byte("false")):
		return false, b[5:], true
	}
	s, rest, ok := fastString(b)
	if !ok {
		return nil, nil, false
	}
	return string(s), rest, true
}

// MarshalJSON writes the answer line AppendResult writes, without its
// newline.
func (r Result) MarshalJSON() ([]byte, error) {
	b := AppendResult(nil, &r, false)
	return b[:len(b)-1], nil
}

// UnmarshalJSON reads an answer as DecodeResult does.
func (r *Result) UnmarshalJSON(data []byte) error { return DecodeResult(data, r) }

// UnmarshalJSON reads a JSON object keeping its members' order. Integers
// read as int64, other numbers as float64.
func (s *State) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*s = nil
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("state: not a JSON object")
	}
	out := State{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("state: member name is not a string")
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("state: %s: %w", name, err)
		}
		out = append(out, Property{Name: name, Value: numbers(v)})
	}
	*s = out
	return nil
}

// MarshalJSON writes the state as AppendState does.
func (s State) MarshalJSON() ([]byte, error) { return AppendState(nil, s), nil }

// UnmarshalJSON reads an instance of a search's answer.
func (i *Instance) UnmarshalJSON(data []byte) error {
	var w struct {
		Title string `json:"title"`
		State State  `json:"state"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	i.Title, i.State = w.Title, w.State
	return nil
}

// numbers turns json.Number values into int64 (integers) or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}
