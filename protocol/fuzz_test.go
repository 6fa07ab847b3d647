package protocol

import (
	"encoding/json" // the standard decoder judges the hand-written encoder
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/pippet/pippet/internal/testutil"
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
		`{"op":"declare","resources":[{"type":"file","title":"/a"},{"type":"concat_fragment","title":"b","params":"{target: /m, order: 1}"},{"type":"x","title":"y","params":{"a":[1]}}],"id":1}`,
		`{"op":"declare","resources":[{"type":"x","title":"y","params":"{a: [}"}],"id":2}`,
		`{"op":"declare","resources":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		defer testutil.FuzzWatchdog(line)()
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
		if req.Op == OpDeclare {
			if req.Resources == nil || req.Type != "" || req.Params != nil {
				t.Fatalf("a declaration decoded as %+v", req)
			}
			for _, r := range req.Resources {
				if !validTypeName(r.Type) || r.Title == "" || !utf8.ValidString(r.Title) || r.Params == nil {
					t.Fatalf("declared resource %+v", r)
				}
			}
			return
		}
		if req.Op == OpApply && (req.Type == "" || req.Title == "" || req.Params == nil) {
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
