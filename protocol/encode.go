package protocol

import (
	"strconv"
	"unicode/utf8"

	"github.com/pippet/pippet/protocol/internal/swar"
)

// Banner is the line the receiver writes before its first answer. It is
// well under the 80 bytes existing controllers read and discard. Its
// protocol level says what a controller may ask: 1 apply only, 2 also the
// read verbs (the "op" member: find, search, describe), 3 also a
// declaration of the run's resources (op declare).
const Banner = `{"ready":true,"protocol":` + ProtocolLevel + `,"version":"` + Version + `"}` + "\n"

// ProtocolLevel is the level the banner announces (see Banner).
const ProtocolLevel = "3"

// Version of the receiver and its protocol implementation.
const Version = "0.1.0"

// PuppetVersion is the Puppet release whose semantics pippet follows (the
// reference its tests record): what its reports say as puppet_version,
// its agent as clientversion, as tools that read them (PuppetDB, Foreman,
// Puppetboard, the server's report processors) expect a Puppet version.
const PuppetVersion = "7.23.0"

// AppendResult appends r as one JSON answer line (with its newline) to dst.
//
// The first fields keep the order of Puppet's receiver: resource, failed,
// changed, noop, error, exception. An answer that names no resource (a line
// that could not be decoded) has Puppet's shape for it: failed, changed,
// error, exception. Unless compat is set, "id" (when the request had one)
// and "events" (when there are any) follow. Then, in this order and only
// when present, the read verbs' members: "state" and "params" (find),
// "instances" (search), "declaration" (describe).
func AppendResult(dst []byte, r *Result, compat bool) []byte {
	if r.Resource != "" {
		dst = append(dst, `{"resource":`...)
		dst = AppendString(dst, r.Resource)
		dst = append(dst, `,"failed":`...)
		dst = strconv.AppendBool(dst, r.Failed)
		dst = append(dst, `,"changed":`...)
		dst = strconv.AppendBool(dst, r.Changed)
		dst = append(dst, `,"noop":`...)
		dst = strconv.AppendBool(dst, r.Noop)
	} else {
		dst = append(dst, `{"failed":`...)
		dst = strconv.AppendBool(dst, r.Failed)
		dst = append(dst, `,"changed":`...)
		dst = strconv.AppendBool(dst, r.Changed)
	}
	dst = append(dst, `,"error":`...)
	dst = strconv.AppendBool(dst, r.Error)
	dst = append(dst, `,"exception":`...)
	if r.Exception == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendString(dst, r.Exception)
	}
	if !compat {
		if len(r.ID) > 0 {
			dst = append(dst, `,"id":`...)
			dst = append(dst, r.ID...)
		}
		if len(r.Events) > 0 {
			dst = append(dst, `,"events":[`...)
			for i := range r.Events {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendEvent(dst, &r.Events[i])
			}
			dst = append(dst, ']')
		}
	}
	// The read verbs' members: extensions a request asked for by its op,
	// so written in compat mode too.
	if r.State != nil {
		dst = append(dst, `,"state":`...)
		dst = AppendState(dst, r.State)
		dst = append(dst, `,"params":`...)
		dst = AppendString(dst, r.Params)
	}
	if r.Instances != nil {
		dst = append(dst, `,"instances":[`...)
		for i := range r.Instances {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"title":`...)
			dst = AppendString(dst, r.Instances[i].Title)
			dst = append(dst, `,"state":`...)
			dst = AppendState(dst, r.Instances[i].State)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(r.Declaration) > 0 {
		dst = append(dst, `,"declaration":`...)
		dst = append(dst, r.Declaration...)
	}
	return append(dst, '}', '\n')
}

// AppendState appends s as a JSON object, its members in s's order.
func AppendState(dst []byte, s State) []byte {
	dst = append(dst, '{')
	for i := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s[i].Name)
		dst = append(dst, ':')
		dst = AppendValue(dst, s[i].Value)
	}
	return append(dst, '}')
}

func appendEvent(dst []byte, e *Event) []byte {
	dst = append(dst, `{"property":`...)
	dst = AppendString(dst, e.Property)
	dst = append(dst, `,"previous":`...)
	dst = AppendValue(dst, e.Previous)
	dst = append(dst, `,"desired":`...)
	dst = AppendValue(dst, e.Desired)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, e.Message)
	dst = append(dst, `,"status":`...)
	dst = AppendString(dst, e.Status)
	if e.Diff != "" {
		dst = append(dst, `,"diff":`...)
		dst = AppendString(dst, e.Diff)
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Control characters are escaped,
// and bytes that are not UTF-8 become U+FFFD so the line stays valid JSON.
// U+2028 and U+2029 are escaped for JavaScript readers.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = swar.SkipJSONSafe(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
