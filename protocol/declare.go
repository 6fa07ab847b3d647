package protocol

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pippet/pippet/protocol/internal/intern"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// A declaration is the request a controller sends to say which resources
// its run manages, so that the requests that follow see them as a
// catalog's resources see each other (a file's purge leaves alone what
// the run manages, a concat_file gathers its concat_fragments):
//
//	{"op":"declare","resources":[{"type":"concat_fragment","title":"motd header","params":{"target":"/etc/motd","content":"hi\n"}}],"id":1}
//
// Each resource has a type and a title, and params as a request has them
// (a YAML mapping in a string, or a JSON object), which may be left out
// where nothing reads them. The declaration has no type, title or params
// of its own; only the JSON form declares.

// Limits of one declaration, on top of the line's own (--max-line): each
// resource's params are bounded as a request's are (yamlparams.MaxDepth,
// yamlparams.MaxValues), and the whole declaration by these.
const (
	// MaxDeclared is the most resources one declaration holds.
	MaxDeclared = 100_000
	// MaxDeclaredValues is the most values (every scalar, list and
	// mapping of every resource's params, YAML aliases expanded) one
	// declaration holds.
	MaxDeclaredValues = 10 * yamlparams.MaxValues
)

// readResources reads a declaration's "resources" member at s.i: a list
// of resource objects. A resource that is well-formed JSON but refused
// (its params, the declaration's limit) is named by a *DecodeError kept
// in m, and the rest of the line is read on (nothing more kept), so that
// the answer echoes an id that comes after the list; other errors end
// the reading.
func (d *Decoder) readResources(s *jsonScanner, m *jsonMembers) error {
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return s.errf(`"resources" must be a list of {"type","title","params"} objects, found %s`, s.describe())
	}
	s.i++
	out := []RunResource{}
	values := 0
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		m.resources = out
		return nil
	}
	for {
		if len(out) == MaxDeclared {
			return s.errf("more than %d resources in one declaration", MaxDeclared)
		}
		r, n, err := d.readDeclared(s, len(out)+1)
		var de *DecodeError
		switch {
		case errors.As(err, &de):
			if m.declErr == nil {
				m.declErr = de
			}
		case err != nil:
			return err
		case m.declErr != nil:
			// Refused already: read on, for the id, keeping nothing.
		case values+n > MaxDeclaredValues:
			m.declErr = declaredError(r, len(out)+1, fmt.Errorf("the declaration's params hold more than %d values", MaxDeclaredValues))
		default:
			values += n
		}
		out = append(out, r)
		if m.declErr != nil {
			out = out[:0]
		}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
			s.ws()
			continue
		}
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			m.resources = out
			s.n = 0 // the values of the members that follow, as a request's
			return nil
		}
		return s.errf("expected ',' or ']' after a declared resource, found %s", s.describe())
	}
}

// readDeclared reads the nth resource object of a declaration; values is
// how many values its params hold.
func (d *Decoder) readDeclared(s *jsonScanner, n int) (r RunResource, values int, err error) {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return r, 0, s.errf(`declared resource %d must be a {"type","title","params"} object, found %s`, n, s.describe())
	}
	s.i++
	var (
		seen             uint8
		yamlErr          error
		hasType, hasName bool
	)
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return r, 0, s.errf("expected a member name in double quotes, found %s", s.describe())
			}
			keyPos := s.i + 1
			key, err := s.str()
			if err != nil {
				return r, 0, err
			}
			bit := memberBit(key)
			if bit&(memberType|memberTitle|memberParams) == 0 {
				return r, 0, &jsonError{pos: keyPos, msg: fmt.Sprintf("unknown member %q in declared resource %d (expected type, title, params)", key, n)}
			}
			if seen&bit != 0 {
				return r, 0, &jsonError{pos: keyPos, msg: fmt.Sprintf("member %q given twice in declared resource %d", key, n)}
			}
			seen |= bit
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return r, 0, s.errf("expected ':' after member name %q, found %s", key, s.describe())
			}
			s.i++
			s.ws()
			switch bit {
			case memberType, memberTitle:
				if s.i >= len(s.b) || s.b[s.i] != '"' {
					return r, 0, s.errf("%q of declared resource %d must be a string, found %s", key, n, s.describe())
				}
				v, err := s.str()
				if err != nil {
					return r, 0, err
				}
				if bit == memberType {
					r.Type, hasType = strings.ToLower(d.reader.Strings.String(intern.TypeName, v)), true
				} else {
					r.Title, hasName = string(v), true
				}
			case memberParams:
				switch {
				case s.i < len(s.b) && s.b[s.i] == '"':
					v, err := s.str()
					if err != nil {
						return r, 0, err
					}
					// Parsed now: v may be the scanner's buffer, which
					// the next string reuses. An error is reported once
					// the resource is named.
					p, err := d.reader.ParseInto(v, nil)
					if err != nil {
						yamlErr = err
					} else {
						r.Params, values = p, countValues(p)
					}
				case s.i < len(s.b) && s.b[s.i] == '{':
					s.n = 0
					v, err := s.value(0)
					if err != nil {
						return r, 0, err
					}
					r.Params, values = v.(map[string]any), s.n
				default:
					return r, 0, s.errf("\"params\" of declared resource %d must be a YAML string or a JSON object, found %s", n, s.describe())
				}
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
			return r, 0, s.errf("expected ',' or '}' after a member, found %s", s.describe())
		}
	}
	switch {
	case !hasType:
		return r, 0, &jsonError{pos: s.i, msg: fmt.Sprintf("declared resource %d has no \"type\"", n)}
	case !validTypeName(r.Type):
		return r, 0, &jsonError{pos: s.i, msg: fmt.Sprintf("declared resource %d: %q is not a resource type name", n, r.Type)}
	case !hasName || r.Title == "":
		return r, 0, &jsonError{pos: s.i, msg: fmt.Sprintf("declared resource %d (type %s) has no \"title\" or an empty one", n, r.Type)}
	case strings.IndexByte(r.Title, 0) >= 0:
		return r, 0, &jsonError{pos: s.i, msg: fmt.Sprintf("the title of declared resource %d contains a NUL character", n)}
	case yamlErr != nil:
		return r, 0, declaredError(r, n, yamlErr)
	}
	if r.Params == nil {
		r.Params = map[string]any{}
	}
	return r, values, nil
}

// declaredError is the error about the nth declared resource, r, named.
func declaredError(r RunResource, n int, err error) *DecodeError {
	return &DecodeError{Type: r.Type, Title: r.Title,
		Msg: fmt.Sprintf("invalid declaration: resource %d (%s): %v", n, Ref(r.Type, r.Title), err), Err: err}
}

// countValues is how many values v holds, itself included.
func countValues(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 1
		for _, e := range x {
			n += countValues(e)
		}
		return n
	case []any:
		n := 1
		for _, e := range x {
			n += countValues(e)
		}
		return n
	}
	return 1
}

// finishDeclaration checks a declaration's members: "resources" and
// nothing of a resource's own.
func finishDeclaration(req *Request, m *jsonMembers) error {
	if req.Op != OpDeclare {
		return unnamed(errors.New(`"resources" belongs to a declaration ("op":"declare") only`))
	}
	var extra []string
	for _, x := range []struct {
		bit  uint8
		name string
	}{{memberType, "type"}, {memberTitle, "title"}, {memberParams, "params"}, {memberRefresh, "refresh"}} {
		if m.seen&x.bit != 0 {
			extra = append(extra, `"`+x.name+`"`)
		}
	}
	if len(extra) > 0 {
		return &DecodeError{ID: req.ID, Msg: fmt.Sprintf("invalid request: a declaration takes no %s: its resources are in \"resources\"", strings.Join(extra, ", "))}
	}
	if m.seen&memberResources == 0 {
		return &DecodeError{ID: req.ID, Msg: `invalid request: a declaration needs "resources", a list of {"type","title","params"} objects (an empty list clears the run)`}
	}
	if m.declErr != nil {
		m.declErr.ID = req.ID
		return m.declErr
	}
	req.Type, req.Title, req.Params = "", "", nil
	req.Resources = m.resources
	return nil
}
