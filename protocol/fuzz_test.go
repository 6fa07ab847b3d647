package protocol

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// FuzzDecodeLine: no input panics, every error is a *DecodeError whose
// answer is valid JSON, and a decoded request survives being answered.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"file","title":"/tmp/x","params":"{ensure: file}"}`,
		`{"type":"file","title":"/tmp/x","params":{"ensure":"file","n":[1,2.5,null,true]},"id":{"k":[1]}}`,
		"file /tmp/x { ensure: file }",
		"notify spec { message: This is a test message }",
		`{"type":"file", "title": "/a": "/b": "/x", "what": "{ ensure: file }"}`,
		"{not json", "# comment", "", "file /a /b /x what { ensure: file }",
		`{"type":"notify","title":"\ud83d\ude00","params":"{message: \"\\u00e9\"}"}`,
		"notify x {a: &a [1, *a]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		defer watchdog(line)()
		var req Request
		err := DecodeLine(line, &req)
		// A Decoder that has decoded other lines first agrees.
		var d Decoder
		var reused Request
		for _, prev := range fuzzPrevLines {
			if perr := d.DecodeLine(prev, &reused); perr != nil {
				t.Fatalf("%s: %v", prev, perr)
			}
		}
		if rerr := d.DecodeLine(line, &reused); errText(rerr) != errText(err) ||
			err == nil && !reflect.DeepEqual(req, reused) {
			t.Fatalf("reused Decoder: %+v, %v; DecodeLine: %+v, %v", reused, rerr, req, err)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError: %v", err, err)
			}
			r := ErrorResult(de.Type+de.Title, de.Msg)
			r.ID = de.ID
			if out := AppendResult(nil, &r, false); !json.Valid(out) {
				t.Fatalf("answer is not JSON: %q", out)
			}
			return
		}
		if req.Type == "" || req.Title == "" || req.Params == nil {
			t.Fatalf("decoded without type, title or params: %+v", req)
		}
		if !utf8.ValidString(req.Title) {
			t.Fatalf("title is not UTF-8: %q", req.Title)
		}
		if req.ID != nil && !json.Valid(req.ID) {
			t.Fatalf("id is not JSON: %q", req.ID)
		}
		r := Result{Resource: req.Type + "[" + req.Title + "]", ID: req.ID,
			Events: []Event{{Property: "p", Previous: req.Params, Desired: req.Title}}}
		if out := AppendResult(nil, &r, false); !json.Valid(out) {
			t.Fatalf("answer is not JSON: %q", out)
		}
	})
}

// fuzzPrevLines leave a Decoder's mapping, id and buffers in use.
var fuzzPrevLines = [][]byte{
	[]byte(`{"type":"file","title":"/p","params":"{ensure: file, mode: '0644', content: \"p\\n\", owner: root}","id":[1,2]}`),
	[]byte(`{"type":"file","title":"/q\"","params":"ensure: file\ncontent: |\n  q\n","id":"\u00e9"}`),
}

// FuzzParseParams: no input panics; the fast path, when it answers, agrees
// with the general yaml.v3 path; results hold only the documented types.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{
		"{ensure: file, mode: '0644'}", "{ensure: file}", "{}", "ensure: file\ncontent: |\n  a\n  b\n",
		"{a: yes, b: No, c: ~, d: 0644, e: 1:20, f: 1.5, g: .inf, h: 0x1F, i: 1_000}",
		"{a: 'it''s', b: \"q\\n\", c: [1, 2], d: {e: f}}", "{<<: {a: 1}, b: 2}", "[a]", "~", "",
		"{a: &x [1, *x]}", "{a: 2001-12-14}", "{this: will: not: parse}", "{a: !!binary aGk=}",
		"{ ensure : file , owner : root }", "{a: -.5, b: +1, c: 0b1, d: 09, e: '', f: ''''}",
		"{a: b c, d: e#f, g: h #i}", "{a: :sym}", "{'a': b, \"c\": d}",
		"{a: \"\\x41\\u00e9\\U0001F600\\0\\e\\N\\_\\L\\P\\ \\'\\\"\\t\"}", "{a: 'caf\u00e9 \u65e5'}",
		"ensure: file\nmode: '0644'\ncontent: |-\n  a\n    b\towner: \"x\\ny\"\n", "a: |\n  \tx\nb: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		defer watchdog(src)()
		got, err := ParseParams(src)
		checkEstimate(t, src)
		if fast, ok := fastParams(src); ok {
			slow, serr := parseParamsYAML(src)
			if serr != nil {
				t.Fatalf("fast path accepted %q, yaml.v3 path refused: %v", src, serr)
			}
			if !equalValues(fast, slow) {
				t.Fatalf("fast path %#v, yaml.v3 path %#v for %q", fast, slow, src)
			}
		}
		if err != nil {
			var pe *ParamsError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParamsError: %v", err, err)
			}
			return
		}
		if got == nil {
			t.Fatalf("nil mapping without error for %q", src)
		}
		checkTypes(t, got, 0)
	})
}

// checkEstimate: whatever yaml.v3 builds from src has at most twice the
// estimated nodes (plus one): the estimate is a sound bound.
func checkEstimate(t *testing.T, src []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return
	}
	nodes := countNodes(&doc)
	if est := estimateNodes(src, math.MaxInt); nodes > 2*est+1 {
		t.Fatalf("yaml.v3 built %d nodes, estimate %d for %q", nodes, est, src)
	}
}

func countNodes(n *yaml.Node) int {
	c := 1
	if n.Kind == yaml.DocumentNode {
		c = 0
	}
	for _, e := range n.Content {
		c += countNodes(e)
	}
	return c
}

// watchdog crashes the fuzz worker when one input takes more than two
// seconds, so that the fuzzer records it (a hang is otherwise never
// reported).
// It is armed only while fuzzing: seed runs under -race on a loaded
// machine may be slow without anything being wrong.
func watchdog(in []byte) (stop func()) {
	if f := flag.Lookup("test.fuzz"); f == nil || f.Value.String() == "" {
		return func() {}
	}
	t := time.AfterFunc(2*time.Second, func() { panic(fmt.Sprintf("input took more than 2s: %q", in)) })
	return func() { t.Stop() }
}

func checkTypes(t *testing.T, v any, depth int) {
	if depth > MaxParamsDepth+2 {
		t.Fatalf("deeper than the limit")
	}
	switch x := v.(type) {
	case nil, string, int64, float64, bool:
	case []any:
		for _, e := range x {
			checkTypes(t, e, depth+1)
		}
	case map[string]any:
		for _, e := range x {
			checkTypes(t, e, depth+1)
		}
	default:
		t.Fatalf("unexpected type %T", v)
	}
}

// equalValues compares decoded values, NaN equal to NaN.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equalValues(e, f) {
				return false
			}
		}
		return true
	}
	return a == b
}
