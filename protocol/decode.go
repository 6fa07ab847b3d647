package protocol

import (
	"fmt"
	"unicode/utf8"

	"github.com/pippet/pippet/protocol/internal/intern"
	"github.com/pippet/pippet/protocol/internal/swar"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// DecodeError says why a request line was refused. Type and Title are set
// when the line was read far enough to name the resource (a bad params
// document in an otherwise fine request), so the answer can name it.
type DecodeError struct {
	Type, Title string
	// ID is the request's id when it was read before the problem.
	ID []byte
	// Msg says what is wrong and where.
	Msg string
	// Err is the underlying error, if any (a *yamlparams.Error for params).
	Err error
}

func (e *DecodeError) Error() string { return e.Msg }

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Skip reports whether a line gets no answer: blank (spaces, tabs, a
// trailing CR) or a comment starting with '#'.
func Skip(line []byte) bool {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '#':
			return true
		}
		return false
	}
	return true
}

// DecodeLine decodes one request line (without its newline; a trailing CR
// is ignored) into req, which it overwrites. The line may be reused by the
// caller afterwards: nothing in req refers to it.
//
// A line whose first non-blank byte is '{' is JSON:
//
//	{"type":"file","title":"/tmp/x","params":"{ensure: file}","id":7}
//
// anything else is the legacy form TYPE TITLE YAML, split on the first two
// spaces. Errors are *DecodeError. Each form has its decoder in a file of
// its own (decode_json.go, decode_legacy.go); this file holds what both
// share: the line's checks, the Decoder and its reused memory.
func DecodeLine(line []byte, req *Request) error {
	d := Decoder{oneLine: true}
	return d.DecodeLine(line, req)
}

// Decoder decodes request lines as DecodeLine does, reusing its memory from
// one line to the next: the Params mapping (cleared first) and ID of the
// request it fills (and a DecodeError's ID), its scratch buffers, and a
// small cache of short strings repeated from line to line (intern.Cache). So
// what it puts in a Request is only valid until its next DecodeLine: the
// caller, and the Applier it hands the request to, must not keep req.Params
// or req.ID (values inside Params are not reused and may be kept). The
// zero Decoder is ready; it is not safe for concurrent use.
//
// Memory kept between lines stays small: a mapping of more than
// maxKeptEntries entries or a buffer over maxKeptBuf bytes, left by an
// unusual line, is dropped rather than reused.
type Decoder struct {
	params     map[string]any
	id         []byte
	buf, spare []byte            // the JSON scanner's string buffers
	reader     yamlparams.Reader // params: the fast path's buffer and the string cache
	oneLine    bool              // DecodeLine's own: no cache for a single line
}

const (
	maxKeptEntries = 64
	maxKeptBuf     = 64 << 10
)

// DecodeLine decodes one line into req; see the package function and the
// Decoder's rule on what req may be kept.
func (d *Decoder) DecodeLine(line []byte, req *Request) error {
	*req = Request{}
	if d.reader.Strings == nil && !d.oneLine {
		d.reader.Strings = new(intern.Cache)
	}
	if len(d.params) > maxKeptEntries {
		d.params = nil
	}
	clear(d.params)
	for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n-- {
		line = line[:n-1]
	}
	if err := checkBytes(line); err != nil {
		return err
	}
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i < len(line) && line[i] == '{' {
		s := jsonScanner{b: line, buf: d.buf, spare: d.spare}
		err := d.decodeJSONRequest(&s, req)
		d.buf, d.spare = keptBuf(s.buf), keptBuf(s.spare)
		return err
	}
	return d.decodeLegacy(line[i:], req)
}

// keptBuf returns b emptied, or nil when it is too big to keep.
func keptBuf(b []byte) []byte {
	if cap(b) > maxKeptBuf {
		return nil
	}
	return b[:0]
}

// parseParams is yamlparams.Parse filling the Decoder's mapping on the
// fast path.
func (d *Decoder) parseParams(src []byte) (map[string]any, error) {
	if d.params == nil {
		d.params = make(map[string]any, 8)
	}
	return d.reader.ParseInto(src, d.params)
}

// checkBytes refuses invalid UTF-8 and control characters (other than tab)
// anywhere in the line, naming the first offending byte. Only non-ASCII and
// control bytes need a closer look (swar.SkipText finds them).
func checkBytes(line []byte) error {
	for i := 0; i < len(line); {
		if i = swar.SkipText(line, i); i >= len(line) {
			break
		}
		c := line[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' {
				if c == 0 {
					return &DecodeError{Msg: fmt.Sprintf("invalid request: NUL byte at byte %d", i+1)}
				}
				return &DecodeError{Msg: fmt.Sprintf("invalid request: control character 0x%02x at byte %d", c, i+1)}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n == 1 {
			return &DecodeError{Msg: fmt.Sprintf("invalid request: not valid UTF-8 at byte %d (0x%02x)", i+1, c)}
		}
		i += n
	}
	return nil
}

func validTypeName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == ':'):
		default:
			return false
		}
	}
	return true
}
