// Package typetest runs requests through the engine exactly as the
// receiver does, for the tests of type packages: the request line is
// decoded by the protocol's own decoder (so params follow the receiver's
// Psych rules: `yes` is a boolean, `0644` an octal integer, `'0644'` a
// string), validated and munged by the type's declaration, and converged
// by the engine with the type's real providers.
//
//	e := typetest.New(t, []*applier.Type{user.Type})
//	res := e.Apply("user", "fidu1", "{ensure: present, uid: 47101}")
//	require.True(t, res.Changed, res.Exception)
//
// Each Engine keeps its state (the filebucket) in a temporary directory
// of the test and captures the log.
package typetest

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/protocol"
)

// Engine is an engine.Engine over the given types, with its log.
type Engine struct {
	*engine.Engine
	t   testing.TB
	dec protocol.Decoder
	log *syncBuffer
}

// New returns an engine over a registry holding types, its state
// directory a temporary directory of t, logging at debug level. opts may
// adjust the environment before the engine is made (facts, options).
func New(t testing.TB, types []*applier.Type, opts ...func(*applier.Env)) *Engine {
	t.Helper()
	reg := applier.NewRegistry()
	for _, ty := range types {
		reg.Add(ty)
	}
	buf := &syncBuffer{}
	env := &applier.Env{
		Options: applier.Options{StateDir: t.TempDir()},
		Log:     slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(env)
	}
	return &Engine{Engine: engine.New(reg, env), t: t, log: buf}
}

// Apply sends one request whose params are a YAML mapping (as the
// protocol's "params" string carries it), decoded as the receiver decodes
// it. A request the decoder refuses fails the test.
func (e *Engine) Apply(typ, title, params string) protocol.Result {
	e.t.Helper()
	line, err := json.Marshal(map[string]string{"type": typ, "title": title, "params": params})
	if err != nil {
		e.t.Fatalf("encoding the request: %v", err)
	}
	return e.ApplyLine(string(line))
}

// ApplyLine sends one request line, JSON or legacy, as the receiver reads
// it. A line the decoder refuses fails the test; use Decode to test
// refusals.
func (e *Engine) ApplyLine(line string) protocol.Result {
	e.t.Helper()
	var req protocol.Request
	if err := e.dec.DecodeLine([]byte(line), &req); err != nil {
		e.t.Fatalf("the receiver's decoder refuses %s: %v", line, err)
	}
	return e.Engine.Apply(context.Background(), &req)
}

// Decode decodes a request line as the receiver does, for tests of what
// the decoder refuses.
func (e *Engine) Decode(line string) (protocol.Request, error) {
	var req protocol.Request
	err := e.dec.DecodeLine([]byte(line), &req)
	return req, err
}

// Log returns what the engine logged so far.
func (e *Engine) Log() string { return e.log.String() }

// Summary renders a result's outcome compactly for table tests:
// "changed", "unchanged", "failed: EXCEPTION" or "error: EXCEPTION".
func Summary(r protocol.Result) string {
	exc := ""
	if r.Exception != "" {
		exc = ": " + r.Exception
	}
	switch {
	case r.Error:
		return "error" + exc
	case r.Failed:
		return "failed" + exc
	case r.Changed:
		return "changed"
	}
	return "unchanged"
}

// Events renders a result's events one a line: "property: message (status)".
func Events(r protocol.Result) string {
	var b strings.Builder
	for _, ev := range r.Events {
		b.WriteString(ev.Property + ": " + ev.Message + " (" + string(ev.Status) + ")\n")
	}
	return b.String()
}

// Find reads one resource as the find verb does ({"op":"find"}), params
// (a YAML mapping, "" for none) decoded as the receiver decodes them. A
// request the decoder refuses fails the test.
func (e *Engine) Find(typ, title, params string) protocol.Result {
	e.t.Helper()
	return e.verbLine("find", typ, title, params)
}

// Search lists a type's instances as the search verb does
// ({"op":"search"}); params ("" for none) scope and filter the listing.
func (e *Engine) Search(typ, params string) protocol.Result {
	e.t.Helper()
	return e.verbLine("search", typ, "", params)
}

func (e *Engine) verbLine(op, typ, title, params string) protocol.Result {
	e.t.Helper()
	m := map[string]string{"op": op, "type": typ}
	if title != "" {
		m["title"] = title
	}
	if params != "" {
		m["params"] = params
	}
	line, err := json.Marshal(m)
	if err != nil {
		e.t.Fatalf("encoding the request: %v", err)
	}
	return e.ApplyLine(string(line))
}

// Instance returns the state of the instance titled title in a search's
// answer, and whether it is listed.
func Instance(r protocol.Result, title string) (protocol.State, bool) {
	for _, in := range r.Instances {
		if in.Title == title {
			return in.State, true
		}
	}
	return nil, false
}
