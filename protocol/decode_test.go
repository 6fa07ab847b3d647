package protocol

import (
	"encoding/json" // the standard decoder is the reference here
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol/internal/intern"
	"github.com/pippet/pippet/protocol/yamlparams"
)

func TestDecodeLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Request
	}{
		{"json", `{"type":"file","title":"/tmp/x","params":"{ensure: file}"}`,
			Request{Type: "file", Title: "/tmp/x", Params: map[string]any{"ensure": "file"}}},
		{"json spaces and CR", " { \"type\" : \"File\" , \"title\" : \"/tmp/x\" , \"params\" : \"{}\" } \r",
			Request{Type: "File", Title: "/tmp/x", Params: map[string]any{}}},
		{"json id number", `{"id":7,"type":"notify","title":"x","params":"{message: hi}"}`,
			Request{Type: "notify", Title: "x", Params: map[string]any{"message": "hi"}, ID: []byte("7")}},
		{"json id object kept verbatim", `{"type":"notify","title":"x","params":"{}","id":{"a": [1, "b"]}}`,
			Request{Type: "notify", Title: "x", Params: map[string]any{}, ID: []byte(`{"a": [1, "b"]}`)}},
		{"json params object", `{"type":"file","title":"/x","params":{"ensure":"file","mode":"0644","n":3,"f":1.5,"b":true,"z":null,"l":[1,"a"],"m":{"k":"v"}}}`,
			Request{Type: "file", Title: "/x", Params: map[string]any{"ensure": "file", "mode": "0644", "n": int64(3), "f": 1.5, "b": true, "z": nil,
				"l": []any{int64(1), "a"}, "m": map[string]any{"k": "v"}}}},
		{"json escapes", `{"type":"file","title":"/tmp/a \"b\" \u00e9 \ud83d\ude00","params":"ensure: file\ncontent: \"x\\ty\"\n"}`,
			Request{Type: "file", Title: "/tmp/a \"b\" é 😀", Params: map[string]any{"ensure": "file", "content": "x\ty"}}},
		{"json multi-line yaml", `{"type": "file", "title": "/a", "params": "ensure: file\ncontent: |\n  line1\n  line2\n"}`,
			Request{Type: "file", Title: "/a", Params: map[string]any{"ensure": "file", "content": "line1\nline2\n"}}},
		{"legacy", "file /tmp/x { ensure: file }",
			Request{Type: "file", Title: "/tmp/x", Params: map[string]any{"ensure": "file"}}},
		{"legacy message with spaces", "notify spec { message: This is a test message }",
			Request{Type: "notify", Title: "spec", Params: map[string]any{"message": "This is a test message"}}},
		{"legacy block yaml", "notify spec message: hi",
			Request{Type: "notify", Title: "spec", Params: map[string]any{"message": "hi"}}},
		// Psych reads this as a mapping too; the type then refuses the
		// attribute "/b /x what { ensure", and the hint shows the title
		// with spaces in the JSON form.
		{"legacy garbled is a mapping", "file /a /b /x what { ensure: file }",
			Request{Type: "file", Title: "/a", Params: map[string]any{"/b /x what { ensure": "file }"},
				Hints: []yamlparams.Hint{{Key: "/b /x what { ensure",
					Text: `a title with spaces needs the JSON form: {"type":"file","title":"/a /b /x what","params":"{ ensure: file }"}`}}}},
		{"namespaced type", `{"type":"foo::bar","title":"x","params":"{}"}`,
			Request{Type: "foo::bar", Title: "x", Params: map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req Request
			require.NoError(t, DecodeLine([]byte(tt.line), &req))
			assert.Equal(t, tt.want, req)
		})
	}
}

func TestDecodeLineErrors(t *testing.T) {
	tests := []struct {
		name      string
		line      string
		msg       string
		typ, titl string // named resource, when the error can name it
		id        string
	}{
		{"garbled json", `{"type":"file", "title": "/a": "/b": "/x", "what": "{ ensure: file }"}`, "invalid JSON at byte 30: expected ',' or '}'", "", "", ""},
		{"not json", "{not json", "invalid JSON at byte 2", "", "", ""},
		{"unterminated", `{"type":"file","title":"/a`, "unterminated string", "", "", ""},
		{"trailing", `{"type":"file","title":"/a","params":"{}"} x`, "after the request object", "", "", ""},
		{"unknown member", `{"type":"file","title":"/a","parms":"{}"}`, `unknown member "parms"`, "", "", ""},
		{"duplicate member", `{"type":"file","type":"exec","title":"/a","params":"{}"}`, `member "type" given twice`, "", "", ""},
		{"missing type", `{"title":"/a","params":"{}"}`, `missing member "type"`, "", "", ""},
		{"bad type", `{"type":"fi le","title":"/a","params":"{}"}`, `"fi le" is not a resource type name`, "", "", ""},
		{"missing title", `{"type":"file","params":"{}"}`, `missing or empty "title"`, "", "", ""},
		{"missing params", `{"type":"file","title":"/a"}`, `missing member "params"`, "file", "/a", ""},
		{"null params", `{"type":"file","title":"/a","params":null}`, `"params" is null`, "file", "/a", ""},
		{"numeric params", `{"type":"file","title":"/a","params":3}`, `must be a YAML string or a JSON object`, "", "", ""},
		{"title number", `{"type":"file","title":3,"params":"{}"}`, `"title" must be a string`, "", "", ""},
		{"yaml broken names resource", `{"type":"file","title":"/a","params":"{this: will: not: parse}","id":"q"}`, "invalid YAML", "file", "/a", `"q"`},
		{"yaml list", `{"type":"file","title":"/a","params":"[a]"}`, "got a list", "file", "/a", ""},
		{"yaml empty", `{"type":"file","title":"/a","params":""}`, "empty document", "file", "/a", ""},
		{"lone surrogate", `{"type":"file","title":"\ud800","params":"{}"}`, "unpaired surrogate", "", "", ""},
		{"bad escape", `{"type":"file","title":"\x","params":"{}"}`, `invalid escape \x`, "", "", ""},
		{"NUL escape in title", `{"type":"file","title":"/a\u0000","params":"{}"}`, "NUL", "", "", ""},
		{"raw NUL", "{\"type\":\"file\",\x00}", "NUL byte at byte 16", "", "", ""},
		{"control char", "file /a {ensure:\x01 file}", "control character 0x01 at byte 17", "", "", ""},
		{"invalid utf8", "{\"type\":\"file\",\"title\":\"/a\xff\",\"params\":\"{}\"}", "not valid UTF-8 at byte 27", "", "", ""},
		{"legacy one word", "file", "single word", "", "", ""},
		{"legacy two words", "file /a", "no YAML after the title", "", "", ""},
		{"legacy bad type", "fi-le /a {}", "not a resource type name", "", "", ""},
		{"legacy empty title", "file  {}", "empty title", "", "", ""},
		{"json deep params", `{"type":"file","title":"/a","params":` + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + "}", "nesting deeper", "", "", ""},
		{"json bad number", `{"type":"file","title":"/a","params":{"a":01}}`, "expected ',' or '}' in an object", "", "", ""},
		{"json huge number", `{"type":"file","title":"/a","params":{"a":1e999}}`, "out of range", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req Request
			err := DecodeLine([]byte(tt.line), &req)
			require.Error(t, err)
			var de *DecodeError
			require.True(t, errors.As(err, &de), "%T", err)
			assert.Contains(t, de.Msg, tt.msg)
			assert.Equal(t, tt.typ, de.Type)
			assert.Equal(t, tt.titl, de.Title)
			assert.Equal(t, tt.id, string(de.ID))
		})
	}
}

func TestSkip(t *testing.T) {
	for _, tt := range []struct {
		line string
		skip bool
	}{
		{"", true}, {"   ", true}, {"\t\r", true}, {"# comment", true}, {"  # indented", true},
		{"file /a {}", false}, {"{}", false}, {"x#", false},
	} {
		assert.Equal(t, tt.skip, Skip([]byte(tt.line)), "%q", tt.line)
	}
}

// The JSON reader agrees with encoding/json on what is valid, for the
// values params can hold.
func TestJSONValueAgreesWithStdlib(t *testing.T) {
	for _, in := range []string{
		`{}`, `{"a":1}`, `{"a":-0}`, `{"a":1.5e3}`, `{"a":[]}`, `{"a":[1,2,[3]]}`, `{"a":"\u00e9\n"}`,
		`{"a":true,"b":false,"c":null}`, `{"a":1,}`, `{"a":.5}`, `{"a":1.}`, `{"a":+1}`, `{"a":"x}`,
		`{"a":tru}`, `{"a" 1}`, `{"a":[1,]}`, `{"a":"\u12"}`, `{"a":-}`, `{"a":1e}`, `{"a":0.1E+2}`,
	} {
		var want any
		stdErr := json.Unmarshal([]byte(in), &want)
		s := &jsonScanner{b: []byte(in)}
		got, err := s.value(0)
		if err == nil {
			s.ws()
			if s.i != len(s.b) {
				err = errors.New("trailing")
			}
		}
		assert.Equal(t, stdErr == nil, err == nil, "%s: stdlib %v, ours %v", in, stdErr, err)
		if err == nil && stdErr == nil {
			assert.Equal(t, normalize(want), normalize(got), in)
		}
	}
}

// normalize makes stdlib float64 numbers and our int64 comparable.
func normalize(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

// A Decoder used for line after line gives what DecodeLine gives for each
// line alone, whatever came before: its reused mapping, id and buffers
// never leak one line into the next.
func TestDecoderReuseAgreesWithDecodeLine(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"type":"notify","title":"many","params":"{`)
	for i := range maxKeptEntries + 10 {
		if i > 0 {
			many.WriteString(", ")
		}
		many.WriteString("k" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26) + ": v")
	}
	many.WriteString(`}"}`)
	lines := []string{
		`{"type":"file","title":"/a","params":"{ensure: file, mode: '0644', content: \"a\\n\"}","id":1}`,
		`{"type":"file","title":"/b","params":"{ensure: absent}"}`,
		`{"type":"file","title":"/c \"q\" \u00e9","params":"ensure: file\ncontent: |\n  x\n","id":"two"}`,
		`{"type":"file","title":"/d","params":"{ensure: [not, fast]}"}`, // the general path
		`{"type":"file","title":"/e","params":{"ensure":"file","id":[1]}}`,
		`{"type":"file","title":"/f","params":"{ensure: file, bad: [}","id":3}`, // an error with an id
		many.String(),
		"notify g {message: legacy}",
		`{"type":"file","title":"/h","params":"{}"}`,
		`{"type":"notify","title":"/i","params":"{message: \"\\u00e9\", x: 'it''s'}","id":{"k":"\u00e9"}}`,
	}
	var (
		d   Decoder
		req Request
	)
	for round := range 3 {
		for _, line := range lines {
			var want Request
			wantErr := DecodeLine([]byte(line), &want)
			gotErr := d.DecodeLine([]byte(line), &req)
			require.Equal(t, errText(wantErr), errText(gotErr), line)
			if wantErr != nil {
				var wd, gd *DecodeError
				require.ErrorAs(t, wantErr, &wd)
				require.ErrorAs(t, gotErr, &gd)
				assert.Equal(t, wd.ID, gd.ID, line)
				continue
			}
			assert.Equal(t, want, req, "round %d: %s", round, line)
		}
	}
	// Fast-path lines fill one mapping, reused; one of more than
	// maxKeptEntries entries is dropped rather than kept.
	ptr := func(line string) uintptr {
		require.NoError(t, d.DecodeLine([]byte(line), &req))
		return reflect.ValueOf(req.Params).Pointer()
	}
	small := `{"type":"file","title":"/a","params":"{ensure: file}"}`
	p1 := ptr(small)
	assert.Equal(t, p1, ptr(lines[1]), "the mapping is reused")
	big := ptr(many.String())
	assert.Equal(t, p1, big, "the big document fills the reused mapping")
	assert.NotEqual(t, big, ptr(small), "then the grown mapping is dropped")
}

// BenchmarkDecoder: one Decoder over a stream of lines, as the receiver
// decodes them: values unique to each line (a path), and values repeated
// from line to line (owner, group, an attribute no table knows).
func BenchmarkDecoder(b *testing.B) {
	for _, c := range []struct {
		name string
		line func(i int) string
	}{
		{"file-content", func(i int) string {
			return fmt.Sprintf(`{"type":"file","title":"/srv/d/f%d","params":"{ensure: file, mode: '0644', content: \"hello %d\\n\"}"}`, i, i)
		}},
		{"exec-creates", func(i int) string {
			return fmt.Sprintf(`{"type":"exec","title":"/bin/true %d","params":"{creates: /srv/d/f%d}"}`, i, i)
		}},
		{"dir-owner", func(i int) string {
			return fmt.Sprintf(`{"type":"file","title":"/srv/d/d%d","params":"{ensure: directory, owner: deploy, group: www-data, mode: '0750', seltype: httpd_sys_content_t}"}`, i)
		}},
		{"mixed-types", func(i int) string {
			return [...]string{
				fmt.Sprintf(`{"type":"user","title":"u%d","params":"{ensure: present, uid: %d, gid: 100, shell: /bin/bash, home: /home/u%d, managehome: true}"}`, i, 2000+i, i),
				fmt.Sprintf(`{"type":"package","title":"p%d","params":"{ensure: installed, provider: apt}"}`, i),
				fmt.Sprintf(`{"type":"service","title":"s%d","params":"{ensure: running, enable: true, hasrestart: true}"}`, i),
				fmt.Sprintf(`{"type":"cron","title":"c%d","params":"{command: /usr/bin/backup, user: root, hour: '2', minute: '30', environment: MAILTO=ops}"}`, i),
				fmt.Sprintf(`{"type":"ssh_authorized_key","title":"k%d","params":"{ensure: present, user: deploy, type: ssh-ed25519, key: AAAAC3NzaC1lZDI1NTE5AAAAI}"}`, i),
			}[i%5]
		}},
	} {
		lines := make([][]byte, 1000)
		for i := range lines {
			lines[i] = []byte(c.line(i))
		}
		b.Run(c.name, func(b *testing.B) {
			var (
				d   Decoder
				req Request
			)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := d.DecodeLine(lines[i%len(lines)], &req); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// The Decoder's string cache hands back what decoding afresh gives, for
// values of every kind whose texts collide in its few slots, and a value
// repeated from line to line costs no allocation.
func TestDecoderCache(t *testing.T) {
	values := []string{"deploy", "'deploy'", "\"deploy\"", "0644", "'0644'", "yes", "'yes'", "~", "1_000",
		"www-data", "/srv/app", "'/srv/app'", "0x1F", "12.5", ".inf", "other"}
	var d Decoder
	var req Request
	for i := range 3 * intern.Slots * len(values) {
		v := values[i%len(values)]
		if i%7 == 0 {
			v = fmt.Sprintf("v%d", i) // one-off values, pushing others out
		}
		line := fmt.Sprintf(`{"type":"file","title":"/t","params":"{k%d: %s, owner: %s}"}`, i%5, v, v)
		var want Request
		wantErr := DecodeLine([]byte(line), &want)
		gotErr := d.DecodeLine([]byte(line), &req)
		require.Equal(t, errText(wantErr), errText(gotErr), line)
		require.Equal(t, want, req, line)
	}

	line := []byte(`{"type":"file","title":"/srv/d","params":"{ensure: directory, owner: deploy, group: www-data, seltype: httpd_sys_content_t}"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if err := d.DecodeLine(line, &req); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, 1.0, allocs, "only the title is a new string")
	assert.Equal(t, map[string]any{"ensure": "directory", "owner": "deploy", "group": "www-data", "seltype": "httpd_sys_content_t"}, req.Params)
}

// Values unique to each line (titles, paths) pass through the cache
// without pushing out the type name and keys repeated on every line: over
// a long stream each line costs its own strings only, whatever set its
// unique values fall in.
func TestDecoderCacheKeepsRepeated(t *testing.T) {
	var (
		d   Decoder
		req Request
	)
	lines := make([][]byte, 4*intern.Slots)
	for i := range lines {
		lines[i] = []byte(fmt.Sprintf(`{"type":"exec","title":"/bin/true %d","params":"{creates: /srv/d/f%d, cwd: /srv}"}`, i, i))
	}
	for _, l := range lines {
		require.NoError(t, d.DecodeLine(l, &req))
	}
	i := 0
	allocs := testing.AllocsPerRun(len(lines), func() {
		if err := d.DecodeLine(lines[i%len(lines)], &req); err != nil {
			t.Fatal(err)
		}
		i++
	})
	// The title, and the creates path as a string and as a value.
	assert.Equal(t, 3.0, allocs)
	assert.Equal(t, "exec", req.Type)
}

// checkBytes, which skips plain ASCII eight bytes at a time, agrees with
// the byte-at-a-time definition wherever in a word, or across words, the
// bytes it stops at are: every pair of them at every two places of a line.
func TestCheckBytesAgreesWithBytewise(t *testing.T) {
	special := []string{"\t", "\n", "\x00", "\x1f", "\x7f", "\x80", "\xff", "\u00e9", "\u65e5", "\U0001F600", "\xe2\x82", "\xc3"}
	for i := range 18 {
		for j := i; j < 18; j++ {
			for _, a := range special {
				for _, b := range special {
					line := []byte(strings.Repeat("a", i) + a + strings.Repeat("b", j-i) + b + strings.Repeat("c", 18-j))
					if got, want := errText(checkBytes(line)), errText(checkBytesBytewise(line)); got != want {
						t.Fatalf("checkBytes(%q) = %q, bytewise %q", line, got, want)
					}
				}
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkBytesBytewise is checkBytes one byte at a time.
func checkBytesBytewise(line []byte) error {
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' {
				if c == 0 {
					return fmt.Errorf("invalid request: NUL byte at byte %d", i+1)
				}
				return fmt.Errorf("invalid request: control character 0x%02x at byte %d", c, i+1)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("invalid request: not valid UTF-8 at byte %d (0x%02x)", i+1, c)
		}
		i += n
	}
	return nil
}

// A legacy line whose title has spaces, and a flow value cut at a comma,
// decode as Puppet reads them, with a hint for the parameter name they
// make; Explain adds it to a failed answer that names that parameter.
func TestDecodeHints(t *testing.T) {
	for _, tt := range []struct {
		line, key, hint string
	}{
		{"exec run backup {command: /bin/true}", "backup {command",
			`a title with spaces needs the JSON form: {"type":"exec","title":"run backup","params":"{command: /bin/true}"}`},
		{"exec 'run my backup' command: /bin/true", "my backup' command",
			`a title with spaces needs the JSON form: {"type":"exec","title":"run my backup","params":"command: /bin/true"}`},
		{`{"type":"file","title":"/x","params":"{mode: u=rw,go=r}"}`, "go=r",
			"quote a value that holds a comma, as in mode: 'u=rw,go=r' (in a flow mapping a plain value ends at the first ',')"},
		{"file /x {mode: u=rw,go=r}", "go=r",
			"quote a value that holds a comma, as in mode: 'u=rw,go=r' (in a flow mapping a plain value ends at the first ',')"},
	} {
		var d Decoder
		var req Request
		require.NoError(t, d.DecodeLine([]byte(tt.line), &req), tt.line)
		require.Contains(t, req.Params, tt.key, tt.line)
		require.Equal(t, []yamlparams.Hint{{Key: tt.key, Text: tt.hint}}, req.Hints, tt.line)

		puppets := "no parameter named '" + tt.key + "' on X[y]"
		res := ErrorResult("X[y]", puppets)
		req.Explain(&res)
		assert.Equal(t, puppets+"; "+tt.hint, res.Exception)
		other := ErrorResult("X[y]", "no parameter named 'bogus' on X[y]")
		req.Explain(&other)
		assert.Equal(t, "no parameter named 'bogus' on X[y]", other.Exception, "a hint only for its parameter")
	}

	// A refused document says it too; lines without the mistake have no hints.
	err := DecodeLine([]byte("exec run backup {command: /bin/true, creates: /tmp}"), new(Request))
	assert.ErrorContains(t, err, `a title with spaces needs the JSON form: {"type":"exec","title":"run backup","params":"{command: /bin/true, creates: /tmp}"}`)
	assert.ErrorContains(t, DecodeLine([]byte("exec run "), new(Request)), "empty document")
	for _, line := range []string{"exec run {command: /bin/true}", "exec run command: /bin/true", `{"type":"file","title":"/x","params":"{mode: 'u=rw,go=r'}"}`} {
		var req Request
		require.NoError(t, DecodeLine([]byte(line), &req), line)
		assert.Nil(t, req.Hints, line)
	}
}
