package bench

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/internal/stream"
)

// BenchmarkStream is the receiver's request loop (internal/stream) over
// an engine session, as cmd/receiver wires it, fed a stream of lines in
// memory: everything a request costs between the bytes read and the
// answer written, the provider's work included. Each iteration is one
// line. "notify" is the cheapest resource; "file-unchanged" a file
// already right, the line re-sent (the session's memo answers it).
func BenchmarkStream(b *testing.B) {
	p := filepath.Join(b.TempDir(), "a")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		line []byte
	}{
		{"notify", []byte(`{"type":"notify","title":"hello","params":"{message: hi, loglevel: debug}"}`)},
		{"file-unchanged", fileLine(p, "hello")},
	} {
		b.Run(c.name, func(b *testing.B) { benchStream(b, nil, c.line) })
		// The same after a declaration of 1,000 resources: what a
		// declared run costs a request that does not look at it.
		b.Run(c.name+"-declared", func(b *testing.B) { benchStream(b, [][]byte{declaration(1000, "")}, c.line) })
	}
}

// withDeclare wires the session's Declare, as cmd/receiver does.
func withDeclare(cfg *stream.Config, s *engine.Session) { cfg.Declare = s.Declare }

// declaration is a declaration line of n files under dir (/srv/declared
// when ""), then the extra resources (JSON objects).
func declaration(n int, dir string, extra ...string) []byte {
	if dir == "" {
		dir = "/srv/declared"
	}
	b := []byte(`{"op":"declare","resources":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"file","title":"`+dir+"/f"+strconv.Itoa(i)+`"}`...)
	}
	for _, e := range extra {
		if len(b) > len(`{"op":"declare","resources":[`) {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}

// BenchmarkDeclaredRun is what reads a declared run, one request at a
// time through the stream loop: a concat_file assembled from 10 declared
// fragments, already in sync; a purged directory of 100 files, 50 of
// them declared (left alone), already in sync.
func BenchmarkDeclaredRun(b *testing.B) {
	dir := b.TempDir()
	target := filepath.Join(dir, "motd")
	var frags []string
	for i := range 10 {
		frags = append(frags, `{"type":"concat_fragment","title":"f`+strconv.Itoa(i)+`","params":{"target":"`+target+
			`","content":"line `+strconv.Itoa(i)+`\n","order":`+strconv.Itoa(i)+`}}`)
	}
	concat := []byte(`{"type":"concat_file","title":"` + target + `","params":{"mode":"0644"}}`)
	b.Run("concat-10-fragments", func(b *testing.B) {
		benchStream(b, [][]byte{declaration(0, "", frags...), concat}, concat)
	})

	tree := filepath.Join(dir, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(tree, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	purge := []byte(`{"type":"file","title":"` + tree + `","params":{"ensure":"directory","recurse":true,"purge":true}}`)
	b.Run("purge-100-entries-50-declared", func(b *testing.B) {
		// f0..f49 declared; the first purge removes f50..f99, then
		// every request finds the tree in sync.
		benchStream(b, [][]byte{declaration(50, tree), purge}, purge)
	})
}

// BenchmarkDeclare is one declaration of 1,000 files and 100 fragments
// taken by the stream loop: decoding the line and building the run.
func BenchmarkDeclare(b *testing.B) {
	var frags []string
	for i := range 100 {
		frags = append(frags, `{"type":"concat_fragment","title":"f`+strconv.Itoa(i)+`","params":"{target: /etc/motd, content: 'line `+strconv.Itoa(i)+`', order: `+strconv.Itoa(i)+`}"}`)
	}
	line := declaration(1000, "", frags...)
	b.SetBytes(int64(len(line)))
	benchStream(b, nil, line)
}

// benchStream runs b.N copies of line through one stream loop, after the
// prelude lines, which are not counted: they are read, applied and
// answered before the clock starts.
func benchStream(b *testing.B, prelude [][]byte, line []byte) {
	e := newEngine(b)
	s := e.NewSession()
	var first, rest bytes.Buffer
	for _, l := range prelude {
		first.Write(l)
		first.WriteByte('\n')
	}
	n := b.N
	rest.Grow(n * (len(line) + 1))
	for range n {
		rest.Write(line)
		rest.WriteByte('\n')
	}
	cfg := stream.Config{Decode: s.Decode}
	withDeclare(&cfg, s)
	b.ReportAllocs()
	in := &phased{first: first.Bytes(), rest: &rest, start: func() {
		b.ResetTimer()
		reportCPU(b)
	}}
	if first.Len() == 0 {
		in.start()
		in.started = true
	}
	var out failures
	if code := stream.Run(context.Background(), cfg, s, in, &out, nil); code != stream.ExitOK {
		b.Fatalf("exit %d", code)
	}
	if out.first != nil {
		b.Fatalf("%d answers failed; the first: %s", out.n, out.first)
	}
}

// failures keeps the first failed answer the loop writes, and counts them.
type failures struct {
	n     int
	first []byte
}

func (f *failures) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"failed":true`)) {
		if f.n++; f.first == nil {
			f.first = bytes.Clone(p)
		}
	}
	return len(p), nil
}

// phased reads first, in reads of its own, then calls start once the
// loop asks for more (it has applied and answered every line of first:
// they end in newlines), then reads rest.
type phased struct {
	first   []byte
	rest    io.Reader
	start   func()
	started bool
}

func (p *phased) Read(b []byte) (int, error) {
	if len(p.first) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	if !p.started {
		p.started = true
		p.start()
	}
	return p.rest.Read(b)
}
