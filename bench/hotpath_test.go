// Package bench holds the benchmarks of pippet's per-resource hot paths,
// measured in process: the protocol (line decoding, params YAML, answer
// encoding) and the engine applying the real types to real files. The
// end-to-end benchmark against the built binary and a syscall floor is the
// program in bench/e2e; `make bench` runs both.
package bench

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/protocol"
)

var (
	jsonLine   = []byte(`{"type":"file","title":"/srv/app/conf/a.conf","params":"{ensure: file, mode: '0644', content: \"hello\\n\"}"}`)
	legacyLine = []byte(`file /srv/app/conf/a.conf {ensure: file, mode: '0644', content: "hello\n"}`)
	blockLine  = []byte(`{"type":"file","title":"/srv/app/conf/a.conf","params":"ensure: file\nmode: '0644'\ncontent: |\n  hello\n  world\n"}`)
)

// BenchmarkProtocol is decoding, params YAML and answer encoding together:
// everything the receiver does per resource besides applying it, with one
// Decoder and answer buffer reused from line to line as the receiver does.
func BenchmarkProtocol(b *testing.B) {
	for _, c := range []struct {
		name string
		line []byte
	}{{"json-flow", jsonLine}, {"legacy-flow", legacyLine}, {"json-block", blockLine}} {
		b.Run(c.name, func(b *testing.B) {
			var (
				req protocol.Request
				out []byte
			)
			res := protocol.Result{Resource: "File[/srv/app/conf/a.conf]"}
			b.ReportAllocs()
			reportCPU(b)
			for b.Loop() {
				if err := dec.DecodeLine(c.line, &req); err != nil {
					b.Fatal(err)
				}
				out = protocol.AppendResult(out[:0], &res, false)
			}
		})
	}
}

// cpuTime is the process' user + system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op, the process' CPU time per iteration (GC
// included): unlike ns/op it does not grow when other processes load the
// machine. Call it first; it reports when the benchmark ends.
func reportCPU(b *testing.B) {
	start := cpuTime()
	b.Cleanup(func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	})
}

func newEngine(b *testing.B) *engine.Engine {
	b.Helper()
	return engine.New(applier.Default, &applier.Env{Options: applier.Options{StateDir: b.TempDir()}})
}

// dec decodes the lines of every benchmark, reused as the receiver loop
// reuses its own (benchmarks run one at a time).
var dec protocol.Decoder

func apply(b *testing.B, e *engine.Engine, line []byte, wantChanged bool) {
	var req protocol.Request
	if err := dec.DecodeLine(line, &req); err != nil {
		b.Fatal(err)
	}
	res := e.Apply(context.Background(), &req)
	if res.Failed || res.Changed != wantChanged {
		b.Fatalf("%s: %+v", line, res)
	}
}

func fileLine(path, content string) []byte {
	return []byte(`{"type":"file","title":"` + path + `","params":"{ensure: file, mode: '0644', content: \"` + content + `\"}"}`)
}

// BenchmarkFileUnchanged: a file whose content and mode are already right.
func BenchmarkFileUnchanged(b *testing.B) {
	e := newEngine(b)
	p := filepath.Join(b.TempDir(), "a")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		b.Fatal(err)
	}
	line := fileLine(p, "hello")
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		apply(b, e, line, false)
	}
}

// BenchmarkFileUnchangedResent is BenchmarkFileUnchanged as a converging
// engine sends it: the same line again and again, which the receiver's
// engine session decodes once and validates once (applier/engine's
// memo.go): the loop applies the session's kept request, as the session
// hands it over for every copy of the line. The file is read afresh every
// time.
func BenchmarkFileUnchangedResent(b *testing.B) {
	e := newEngine(b)
	p := filepath.Join(b.TempDir(), "a")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		b.Fatal(err)
	}
	s, req := resent(b, e, fileLine(p, "hello"))
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		if res := s.Apply(context.Background(), req); res.Failed || res.Changed {
			b.Fatalf("%+v", res)
		}
	}
}

// resent sends line through a new session of e three times, as a
// converging engine re-sends it (kept on the second sighting, built and
// its build kept on the third), and returns the session and the request
// it now hands over for every copy of the line.
func resent(b *testing.B, e *engine.Engine, line []byte) (*engine.Session, *protocol.Request) {
	b.Helper()
	s := e.NewSession()
	var req *protocol.Request
	for range 3 {
		var err error
		if req, _, err = s.Decode(line); err != nil {
			b.Fatal(err)
		}
		s.Apply(context.Background(), req)
	}
	return s, req
}

// BenchmarkSyscall is what this machine charges for the system calls an
// unchanged file costs (lstat, open, fstat, pread, close) and for the
// cheapest one (getppid): the floor under every row here. In a virtual
// machine whose system calls trap to the hypervisor it is several times a
// bare machine's.
func BenchmarkSyscall(b *testing.B) {
	p := filepath.Join(b.TempDir(), "a")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		b.Fatal(err)
	}
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Close(fd) })
	var st syscall.Stat_t
	var buf [64]byte
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"getppid", func() error { syscall.Getppid(); return nil }},
		{"lstat", func() error { return syscall.Lstat(p, &st) }},
		{"fstat", func() error { return syscall.Fstat(fd, &st) }},
		{"open-close", func() error {
			f, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			return syscall.Close(f)
		}},
		{"pread", func() error { _, err := syscall.Pread(fd, buf[:], 0); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFileChanged: the content flips every time (atomic replace, fsync).
func BenchmarkFileChanged(b *testing.B) {
	e := newEngine(b)
	p := filepath.Join(b.TempDir(), "a")
	lines := [2][]byte{fileLine(p, "one"), fileLine(p, "two")}
	apply(b, e, lines[1], true)
	b.ReportAllocs()
	reportCPU(b)
	i := 0
	for b.Loop() {
		apply(b, e, lines[i%2], true)
		i++
	}
}

// BenchmarkExecCreates: an exec whose `creates` file exists, so nothing runs.
func BenchmarkExecCreates(b *testing.B) {
	e := newEngine(b)
	p := filepath.Join(b.TempDir(), "marker")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"type":"exec","title":"/bin/true","params":"{creates: ` + p + `}"}`)
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		apply(b, e, line, false)
	}
}

// BenchmarkNotify: the cheapest real resource.
func BenchmarkNotify(b *testing.B) {
	e := newEngine(b)
	line := []byte(`{"type":"notify","title":"hello","params":"{message: hi}"}`)
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		apply(b, e, line, true)
	}
}

// BenchmarkUserUnchanged: root as it is (uid, gid, home, shell from
// /etc/passwd, kept while the file is unchanged).
func BenchmarkUserUnchanged(b *testing.B) {
	e := newEngine(b)
	line := []byte(`{"type":"user","title":"root","params":"{ensure: present, uid: 0, gid: 0, home: /root}"}`)
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		apply(b, e, line, false)
	}
}

// BenchmarkGroupUnchanged: the root group as it is.
func BenchmarkGroupUnchanged(b *testing.B) {
	e := newEngine(b)
	line := []byte(`{"type":"group","title":"root","params":"{ensure: present, gid: 0}"}`)
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		apply(b, e, line, false)
	}
}
