package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pippet/pippet/protocol/internal/intern"
	"github.com/pippet/pippet/protocol/internal/swar"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// The JSON decoder: a line starting with '{', read by a small strict
// scanner into a Request without an intermediate map.

// jsonScanner is a small strict JSON reader over one line. Positions in
// its errors are 1-based byte offsets into the line.
type jsonScanner struct {
	b     []byte
	i     int
	n     int    // values made (bounded like YAML params)
	buf   []byte // holds a string with escapes; see str
	spare []byte // the other buffer (see the params member)
}

type jsonError struct {
	pos int
	msg string
}

func (e *jsonError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.pos, e.msg) }

func (s *jsonScanner) errf(format string, args ...any) error {
	return &jsonError{pos: s.i + 1, msg: fmt.Sprintf(format, args...)}
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) describe() string {
	if s.i >= len(s.b) {
		return "end of line"
	}
	r, _ := utf8.DecodeRune(s.b[s.i:])
	return strconv.QuoteRune(r)
}

// A JSON request's members, each a bit of jsonMembers.seen.
const (
	memberType uint8 = 1 << iota
	memberTitle
	memberParams
	memberID
	memberRefresh
	memberOp
	memberResources
)

// jsonMembers is what a JSON request's members gave that is checked only
// once the whole object is read: the members seen, the params in their
// three forms, an op not known.
type jsonMembers struct {
	seen       uint8
	params     []byte         // a params string (YAML), parsed last
	paramsObj  map[string]any // params as a JSON object
	paramsNull bool
	badOp      []byte        // an unknown op, named once type and title are known
	resources  []RunResource // a declaration's resources (declare.go)
	declErr    *DecodeError  // a declared resource refused (declare.go)
}

// decodeJSONRequest reads the request object, then checks what it gave and
// reads its params. A request that cannot be read (bad JSON, a member
// unknown, repeated or of the wrong kind, no type) is answered, as Puppet
// answers it, without naming a resource; once type and title are known, an
// error names them.
func (d *Decoder) decodeJSONRequest(s *jsonScanner, req *Request) error {
	var m jsonMembers
	if err := d.readMembers(s, req, &m); err != nil {
		return unnamed(err)
	}
	return d.finishJSONRequest(req, &m)
}

// unnamed is the error for a line that could not be read as a request.
func unnamed(err error) error {
	return &DecodeError{Msg: "invalid request: " + err.Error(), Err: err}
}

// readMembers reads the request object's members into req and m, and
// nothing may follow the object.
func (d *Decoder) readMembers(s *jsonScanner, req *Request, m *jsonMembers) error {
	s.ws()
	s.i++ // '{'
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return s.errf("expected a member name in double quotes, found %s", s.describe())
			}
			keyPos := s.i + 1
			key, err := s.str()
			if err != nil {
				return err
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return s.errf("expected ':' after member name %q, found %s", key, s.describe())
			}
			s.i++
			s.ws()
			var bit uint8
			switch string(key) {
			case "type":
				bit = memberType
			case "title":
				bit = memberTitle
			case "params":
				bit = memberParams
			case "id":
				bit = memberID
			case "refresh":
				bit = memberRefresh
			case "op":
				bit = memberOp
			case "resources":
				bit = memberResources
			default:
				return &jsonError{pos: keyPos, msg: fmt.Sprintf("unknown member %q (expected type, title, params, id, refresh, op, resources)", key)}
			}
			if m.seen&bit != 0 {
				return &jsonError{pos: keyPos, msg: fmt.Sprintf("member %q given twice", key)}
			}
			m.seen |= bit
			if err := d.readMember(s, bit, key, req, m); err != nil {
				return err
			}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == '}' {
				s.i++
				break
			}
			return s.errf("expected ',' or '}' after a member, found %s", s.describe())
		}
	}
	s.ws()
	if s.i < len(s.b) {
		return s.errf("unexpected %s after the request object", s.describe())
	}
	return nil
}

// readMember reads the value of the member bit (named key) at s.i.
func (d *Decoder) readMember(s *jsonScanner, bit uint8, key []byte, req *Request, m *jsonMembers) error {
	switch bit {
	case memberType, memberTitle:
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.errf("%q must be a string, found %s", key, s.describe())
		}
		v, err := s.str()
		if err != nil {
			return err
		}
		if bit == memberType {
			req.Type = d.reader.Strings.String(intern.TypeName, v)
		} else {
			req.Title = string(v)
		}
	case memberParams:
		switch {
		case s.i < len(s.b) && s.b[s.i] == '"':
			v, err := s.str()
			if err != nil {
				return err
			}
			// v (perhaps in s.buf) is parsed before DecodeLine returns; a
			// later string gets the other buffer.
			m.params = v
			s.buf, s.spare = s.spare, s.buf
		case s.i < len(s.b) && s.b[s.i] == '{':
			v, err := s.value(0)
			if err != nil {
				return err
			}
			m.paramsObj = v.(map[string]any)
		case bytes.HasPrefix(s.b[s.i:], []byte("null")):
			s.i += 4
			m.paramsNull = true
		default:
			return s.errf("\"params\" must be a YAML string or a JSON object, found %s", s.describe())
		}
	case memberOp:
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.errf("\"op\" must be a string, found %s", s.describe())
		}
		v, err := s.str()
		if err != nil {
			return err
		}
		op, ok := ParseOp(string(v))
		if !ok {
			m.badOp = append([]byte(nil), v...)
		}
		req.Op = op
	case memberRefresh:
		switch {
		case bytes.HasPrefix(s.b[s.i:], []byte("true")):
			s.i += 4
			req.Refresh = true
		case bytes.HasPrefix(s.b[s.i:], []byte("false")):
			s.i += 5
		default:
			return s.errf("\"refresh\" must be true or false, found %s", s.describe())
		}
	case memberResources:
		return d.readResources(s, m)
	case memberID:
		start := s.i
		if _, err := s.value(0); err != nil {
			return err
		}
		req.ID = append(d.id[:0], s.b[start:s.i]...)
		d.id = keptBuf(req.ID)
	}
	return nil
}

// finishJSONRequest checks the members together (a type, a title unless a
// read verb, a known op, params unless a read verb) and reads the params.
func (d *Decoder) finishJSONRequest(req *Request, m *jsonMembers) error {
	if req.Op == OpDeclare || m.seen&memberResources != 0 && m.badOp == nil {
		return finishDeclaration(req, m)
	}
	if m.badOp != nil && m.seen&memberType == 0 {
		return unnamed(errors.New(UnknownOp(string(m.badOp))))
	}
	if m.seen&memberType == 0 {
		return unnamed(fmt.Errorf("missing member \"type\""))
	}
	if !validTypeName(req.Type) {
		return unnamed(fmt.Errorf("%q is not a resource type name", req.Type))
	}
	named := func(msg string) error {
		return &DecodeError{Type: req.Type, Title: req.Title, ID: req.ID, Msg: "invalid request: " + msg}
	}
	if m.badOp != nil {
		return named(UnknownOp(string(m.badOp)))
	}
	if req.Op == OpApply && (m.seen&memberTitle == 0 || req.Title == "") {
		return unnamed(fmt.Errorf("missing or empty \"title\" for type %s", req.Type))
	}
	if strings.IndexByte(req.Title, 0) >= 0 {
		return unnamed(fmt.Errorf("title contains a NUL character"))
	}
	switch {
	case m.paramsObj != nil:
		req.Params = m.paramsObj
	case m.seen&memberParams == 0 && req.Op != OpApply:
		// The read verbs need no params.
	case m.seen&memberParams == 0:
		return named("missing member \"params\" (use \"{}\" for none)")
	case m.paramsNull:
		return named("\"params\" is null; a mapping such as \"{ensure: file}\" is required")
	default:
		p, err := d.parseParams(m.params)
		if err != nil {
			return &DecodeError{Type: req.Type, Title: req.Title, ID: req.ID, Msg: err.Error(), Err: err}
		}
		req.Params = p
		req.Hints = d.reader.Hints()
	}
	return nil
}

// str reads a JSON string at s.i (which is '"') and returns its decoded
// bytes: a slice of the line when there is no escape, else s.buf (valid
// until the next call).
func (s *jsonScanner) str() ([]byte, error) {
	s.i++
	start := s.i
	var buf []byte
	escaped := false
	for {
		j := swar.SkipJSONPlain(s.b, s.i)
		if escaped {
			buf = append(buf, s.b[s.i:j]...)
		}
		s.i = j
		if j >= len(s.b) {
			break
		}
		c := s.b[j]
		if c == '"' {
			s.i++
			if !escaped {
				return s.b[start:j], nil
			}
			s.buf = buf
			return buf, nil
		}
		if c != '\\' {
			return nil, s.errf("control character 0x%02x in a string", c)
		}
		if !escaped {
			buf = append(s.buf[:0], s.b[start:j]...)
			escaped = true
		}
		s.i++
		if s.i >= len(s.b) {
			break
		}
		e := s.b[s.i]
		s.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || s.i+1 >= len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
					return nil, s.errf("unpaired surrogate in \\u escape")
				}
				s.i += 2
				r2, ok := s.hex4()
				if !ok {
					return nil, s.errf("invalid \\u escape")
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return nil, s.errf("unpaired surrogate in \\u escape")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			s.i--
			return nil, s.errf("invalid escape \\%c", e)
		}
	}
	if escaped {
		s.buf = buf
	}
	return nil, s.errf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// value reads any JSON value into the Go values params use.
func (s *jsonScanner) value(depth int) (any, error) {
	if depth > yamlparams.MaxDepth {
		return nil, s.errf("nesting deeper than %d levels", yamlparams.MaxDepth)
	}
	s.n++
	if s.n > yamlparams.MaxValues {
		return nil, s.errf("more than %d values", yamlparams.MaxValues)
	}
	s.ws()
	if s.i >= len(s.b) {
		return nil, s.errf("expected a value, found end of line")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		return string(v), nil
	case c == '{':
		s.i++
		m := map[string]any{}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return m, nil
		}
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return nil, s.errf("expected a member name in double quotes, found %s", s.describe())
			}
			k, err := s.str()
			if err != nil {
				return nil, err
			}
			key := string(k)
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return nil, s.errf("expected ':' after member name %q, found %s", key, s.describe())
			}
			s.i++
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[key] = v
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == '}' {
				s.i++
				return m, nil
			}
			return nil, s.errf("expected ',' or '}' in an object, found %s", s.describe())
		}
	case c == '[':
		s.i++
		a := []any{}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return a, nil
		}
		for {
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == ']' {
				s.i++
				return a, nil
			}
			return nil, s.errf("expected ',' or ']' in an array, found %s", s.describe())
		}
	case c == 't':
		return s.literal("true", true)
	case c == 'f':
		return s.literal("false", false)
	case c == 'n':
		return s.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return nil, s.errf("unexpected %s where a value was expected", s.describe())
}

func (s *jsonScanner) literal(word string, v any) (any, error) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return nil, s.errf("unexpected %s where a value was expected", s.describe())
	}
	s.i += len(word)
	return v, nil
}

// number reads a JSON number: an int64 when it is an integer that fits,
// otherwise a float64.
func (s *jsonScanner) number() (any, error) {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		return nil, s.errf("invalid number")
	}
	isInt := true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		isInt = false
		s.i++
		d := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == d {
			return nil, s.errf("invalid number: no digits after '.'")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		isInt = false
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		d := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == d {
			return nil, s.errf("invalid number: no digits in the exponent")
		}
	}
	text := string(s.b[start:s.i])
	if isInt {
		if v, err := strconv.ParseInt(text, 10, 64); err == nil {
			return v, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return nil, &jsonError{pos: start + 1, msg: fmt.Sprintf("invalid number %s", text)}
	}
	if math.IsInf(f, 0) {
		return nil, &jsonError{pos: start + 1, msg: fmt.Sprintf("number %s is out of range", text)}
	}
	return f, nil
}
