package protocol

import (
	"bytes"
	"fmt"

	"github.com/pippet/pippet/protocol/internal/intern"
	"github.com/pippet/pippet/protocol/yamlparams"
)

// The legacy decoder: Puppet's own line form, TYPE TITLE PARAMS-YAML
// (a line not starting with '{').

func (d *Decoder) decodeLegacy(line []byte, req *Request) error {
	if bytes.HasPrefix(line, []byte("\uFEFF")) {
		return &DecodeError{Msg: "invalid request: a byte order mark (U+FEFF) starts the line; one is skipped only at the start of the input"}
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return &DecodeError{Msg: "invalid request: expected JSON ({\"type\":...}) or TYPE TITLE YAML, got a single word"}
	}
	rest := line[sp+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 < 0 {
		return &DecodeError{Msg: "invalid request: legacy form TYPE TITLE YAML has no YAML after the title"}
	}
	typ, title, params := d.reader.Strings.String(intern.TypeName, line[:sp]), string(rest[:sp2]), rest[sp2+1:]
	if !validTypeName(typ) {
		return &DecodeError{Msg: fmt.Sprintf("invalid request: %q is not a resource type name", typ)}
	}
	if title == "" {
		return &DecodeError{Msg: "invalid request: empty title (two spaces after the type?)"}
	}
	req.Type, req.Title = typ, title
	m, err := d.parseParams(params)
	var (
		hint   yamlparams.Hint
		spaced bool
	)
	if len(params) > 0 && params[0] != '{' { // (the usual legacy params are a flow mapping)
		hint, spaced = spacedTitle(typ, title, params)
	}
	if err != nil {
		msg := err.Error()
		if spaced {
			msg += "; " + hint.Text
		}
		return &DecodeError{Type: typ, Title: title, Msg: msg, Err: err}
	}
	req.Params = m
	req.Hints = d.reader.Hints()
	if spaced {
		if _, named := m[hint.Key]; named {
			req.Hints = append(req.Hints, hint)
		}
	}
	return nil
}

// spacedTitle: the params of a legacy line whose first key has a space in
// it, as in `exec run backup {command: /bin/true}`, where the title was
// "run backup" and the first key became "backup {command". The hint shows
// the request in the JSON form, which takes any title.
func spacedTitle(typ, title string, src []byte) (yamlparams.Hint, bool) {
	if len(src) == 0 || bytes.IndexByte([]byte("{[\"'#&*!|>%@`-?,"), src[0]) >= 0 {
		return yamlparams.Hint{}, false
	}
	colon := bytes.IndexByte(src, ':')
	if colon < 0 {
		return yamlparams.Hint{}, false
	}
	key := bytes.TrimRight(src[:colon], " \t")
	sp := bytes.LastIndex(key, []byte(" {")) // the params' flow mapping
	if sp < 0 {
		sp = bytes.LastIndexByte(key, ' ') // or their first key
	}
	if sp < 0 {
		return yamlparams.Hint{}, false
	}
	line := []byte(`{"type":`)
	line = AppendString(line, typ)
	line = append(line, `,"title":`...)
	full := title + " " + string(bytes.TrimRight(key[:sp], " \t"))
	if q := full[0]; (q == '"' || q == '\'') && full[len(full)-1] == q {
		full = full[1 : len(full)-1] // the title in quotes, as a shell would take it
	}
	line = AppendString(line, full)
	line = append(line, `,"params":`...)
	line = AppendString(line, string(src[sp+1:]))
	line = append(line, '}')
	return yamlparams.Hint{Key: string(key), Text: "a title with spaces needs the JSON form: " + string(line)}, true
}
