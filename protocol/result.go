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
	// Provider: pippet-bridge names the provider Puppet applied the
	// resource with (Result.Provider, for the run's report).
	Provider string `json:"provider"`
	// RunChanges: pippet-bridge's changes to other resources of the run
	// (Result.RunChanges).
	RunChanges []wireRunChange `json:"run_changes"`
}

// wireRunChange is one member of an answer's run_changes.
type wireRunChange struct {
	Type   string         `json:"type"`
	Title  string         `json:"title"`
	Params map[string]any `json:"params"`
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
		Provider:  w.Provider,
	}
	for _, c := range w.RunChanges {
		if c.Type != "" && len(c.Params) > 0 {
			r.RunChanges = append(r.RunChanges, RunResource{Type: c.Type, Title: c.Title, Params: c.Params})
		}
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
	f := fastReader{b: line, ok: true}
	f.lit(`{"resource":`)
	name := f.str()
	var v [4]bool
	for i, key := range [4]string{`,"failed":`, `,"changed":`, `,"noop":`, `,"error":`} {
		f.lit(key)
		v[i] = f.boolean()
	}
	f.lit(`,"exception":null`)
	var id []byte
	if f.maybe(`,"id":`) {
		rest := f.b
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
		id, f.b = rest[:n], rest[n:]
	}
	var events []Event
	if f.maybe(`,"events":[`) {
		events = f.events()
	}
	if !f.ok || len(f.b) != 1 || f.b[0] != '}' {
		return false
	}
	*r = Result{Resource: string(name), Failed: v[0], Changed: v[1], Noop: v[2], Error: v[3], Events: events}
	if id != nil {
		r.ID = append([]byte(nil), id...)
	}
	return true
}

// fastReader reads, for decodeResultFast, the one shape AppendResult
// writes; ok turns false at the first byte out of that shape, and every
// read after it reads nothing.
type fastReader struct {
	b  []byte
	ok bool
}

// lit consumes p, which must come next.
func (f *fastReader) lit(p string) {
	if !f.maybe(p) {
		f.ok = false
	}
}

// maybe consumes p if it comes next.
func (f *fastReader) maybe(p string) bool {
	if f.ok && bytes.HasPrefix(f.b, []byte(p)) {
		f.b = f.b[len(p):]
		return true
	}
	return false
}

// str reads a JSON string of printable ASCII without escapes (escapes,
// control and non-ASCII bytes are the JSON decoder's).
func (f *fastReader) str() []byte {
	if f.ok && len(f.b) > 0 && f.b[0] == '"' {
		for i := 1; i < len(f.b); i++ {
			switch c := f.b[i]; {
			case c == '"':
				s := f.b[1:i]
				f.b = f.b[i+1:]
				return s
			case c < 0x20 || c == '\\' || c >= 0x80:
				f.ok = false
				return nil
			}
		}
	}
	f.ok = false
	return nil
}

// boolean reads true or false.
func (f *fastReader) boolean() bool {
	switch {
	case f.maybe("true"):
		return true
	case f.maybe("false"):
		return false
	}
	f.ok = false
	return false
}

// scalar reads a str, true, false or null.
func (f *fastReader) scalar() any {
	switch {
	case f.maybe("null"):
		return nil
	case f.maybe("true"):
		return true
	case f.maybe("false"):
		return false
	}
	return string(f.str())
}

// events reads the events after their '[', in the order AppendResult
// writes their members, up to and past the ']'; nil with ok false for
// anything else (an empty list included: the decoder's is not nil).
func (f *fastReader) events() []Event {
	var evs []Event
	for f.ok {
		var ev Event
		f.lit(`{"property":`)
		ev.Property = string(f.str())
		f.lit(`,"previous":`)
		ev.Previous = f.scalar()
		f.lit(`,"desired":`)
		ev.Desired = f.scalar()
		f.lit(`,"message":`)
		ev.Message = string(f.str())
		f.lit(`,"status":`)
		ev.Status = string(f.str())
		if f.maybe(`,"diff":`) {
			ev.Diff = string(f.str())
		}
		f.lit("}")
		if !f.ok {
			return nil
		}
		evs = append(evs, ev)
		if f.maybe("]") {
			return evs
		}
		f.lit(",")
	}
	return nil
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
		out = append(out, Property{Name: name, Value: Numbers(v)})
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

// Numbers turns the json.Number values a decoder's UseNumber left in v
// (in place, through lists and mappings) into the values a request's
// params hold: int64 for an integer, float64 for any other number, and
// the number's text for one beyond float64's range.
func Numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case []any:
		for k := range x {
			x[k] = Numbers(x[k])
		}
	case map[string]any:
		for k := range x {
			x[k] = Numbers(x[k])
		}
	}
	return v
}
