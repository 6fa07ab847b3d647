package main

// The synchronous mode (-sync): one request at a time, as a graph engine
// drives the receiver (write one line, wait for its answer, only then
// write the next). Beside the receiver runs a minimal Go process that does
// the same reads and the same answer write for the same lines (minimal,
// below: this harness's own binary started again with minimalEnv set); the
// harness alternates between the two, request by request, so that both
// see the same machine load, and reports the median and the 99th
// percentile of each one's round trips (the wall time from the write of
// the request to the read of its answer's newline) and their ratios.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// minimalEnv, when set in the environment, makes this binary the minimal
// process instead of the harness.
const minimalEnv = "PIPPET_E2E_MINIMAL"

// syncWarmup is how many requests each process answers before the timed
// ones (the first requests pay for page faults, the receiver's first
// type lookups, the caches of the kernel).
const syncWarmup = 1000

// syncPool is how many different resources the requests name in turn:
// a converging engine sends the same resources again and again.
const syncPool = 1000

// syncScenarios are the scenarios of the synchronous mode.
func syncScenarios() []scenario {
	want := map[string]bool{"file unchanged (content + mode)": true, "exec unchanged (creates)": true, "notify": true}
	var out []scenario
	for _, sc := range scenarios() {
		if want[sc.name] {
			out = append(out, sc)
		}
	}
	return out
}

// roundTrips holds one process's round trips of one run.
type roundTrips []time.Duration

func (r roundTrips) quantile(q float64) time.Duration {
	s := append(roundTrips(nil), r...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

// peer is one process answering requests one at a time.
type peer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startPeer(ctx context.Context, argv []string, env []string) (*peer, error) {
	c, _, err := startReceiverEnv(ctx, argv[0], env, argv[1:]...)
	if err != nil {
		return nil, err
	}
	return &peer{cmd: c.cmd, stdin: c.stdin, out: c.out}, nil
}

// roundTrip writes one request line and reads its answer.
func (p *peer) roundTrip(line []byte, wantField []byte) (time.Duration, error) {
	start := time.Now()
	if _, err := p.stdin.Write(line); err != nil {
		return 0, err
	}
	ans, err := p.out.ReadSlice('\n')
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("reading the answer: %w", err)
	}
	if !bytes.Contains(ans, wantField) || !bytes.Contains(ans, []byte(`"failed":false`)) {
		return 0, fmt.Errorf("answer %s (want %s)", bytes.TrimSpace(ans), wantField)
	}
	return d, nil
}

func (p *peer) close() error {
	p.stdin.Close()
	return p.cmd.Wait()
}

// syncRun is one run of one scenario: both processes started, warmed up,
// then n requests each, alternating (which one goes first alternates
// too).
func syncRun(ctx context.Context, o options, sc scenario, dir string) (rec, mini roundTrips, err error) {
	pool := min2(syncPool, o.n)
	if err := sc.prepare(dir, pool); err != nil {
		return nil, nil, err
	}
	lines := make([][]byte, pool)
	for i := range lines {
		lines[i] = []byte(sc.line(dir, i) + "\n")
	}
	wantField := []byte(`"changed":` + strconv.FormatBool(sc.want))
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	r, err := startPeer(ctx, append([]string{o.receiver}, append(o.receiverArgs(), sc.args...)...), nil)
	if err != nil {
		return nil, nil, err
	}
	defer r.close()
	m, err := startPeer(ctx, []string{self}, []string{minimalEnv + "=1"})
	if err != nil {
		return nil, nil, err
	}
	defer m.close()
	peers := [2]*peer{r, m}
	times := [2]roundTrips{make(roundTrips, 0, o.n), make(roundTrips, 0, o.n)}
	for i := 0; i < syncWarmup+o.n; i++ {
		line := lines[i%pool]
		for k := range 2 {
			j := (i + k) % 2 // alternate which goes first
			d, err := peers[j].roundTrip(line, wantField)
			if err != nil {
				return nil, nil, fmt.Errorf("%s, request %d to the %s: %w", sc.name, i, [2]string{"receiver", "minimal process"}[j], err)
			}
			if i >= syncWarmup {
				times[j] = append(times[j], d)
			}
		}
	}
	if err := r.close(); err != nil {
		return nil, nil, fmt.Errorf("receiver exit: %w", err)
	}
	if err := m.close(); err != nil {
		return nil, nil, fmt.Errorf("minimal process exit: %w", err)
	}
	return times[0], times[1], nil
}

func min2(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// runSync prints the synchronous table.
func runSync(ctx context.Context, o options, w io.Writer, scs []scenario, dir string) error {
	fmt.Fprintf(w, "One request at a time: each process answers %d requests (after %d of warm-up) naming %d resources in turn,\n", o.n, syncWarmup, min2(syncPool, o.n))
	fmt.Fprintf(w, "alternating request by request with a minimal process doing the same reads and the same answer write.\n")
	fmt.Fprintf(w, "Times are round trips (write the request, read the answer); each figure is the median over %d runs.\n\n", o.runs)
	fmt.Fprintf(w, "| scenario, one at a time | receiver median µs | minimal median µs | ratio | receiver p99 µs | minimal p99 µs | p99 ratio |\n|---|---:|---:|---:|---:|---:|---:|\n")
	prog := newProgress(os.Stderr, len(scs)*o.runs)
	defer prog.finish()
	for i, sc := range scs {
		var rm, mm, rp, mp []time.Duration
		var ratios, p99s []float64
		for run := 0; run < o.runs; run++ {
			prog.step(fmt.Sprintf("synchronous scenario %d of %d, %s: run %d of %d, %d requests each", i+1, len(scs), sc.name, run+1, o.runs, o.n))
			rec, mini, err := syncRun(ctx, o, sc, filepath.Join(dir, "w"))
			if err != nil {
				return err
			}
			rm, mm = append(rm, rec.quantile(0.5)), append(mm, mini.quantile(0.5))
			rp, mp = append(rp, rec.quantile(0.99)), append(mp, mini.quantile(0.99))
			ratios = append(ratios, float64(rec.quantile(0.5))/float64(mini.quantile(0.5)))
			p99s = append(p99s, float64(rec.quantile(0.99))/float64(mini.quantile(0.99)))
		}
		sort.Float64s(ratios)
		sort.Float64s(p99s)
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", sc.name, us(median(rm)), us(median(mm)), ratios[len(ratios)/2],
			us(median(rp)), us(median(mp)), p99s[len(p99s)/2])
	}
	return nil
}

// minimal is the least a separate process can do for the synchronous
// scenarios' lines, as a receiver would, each line as it comes: find the
// type and the title; for a file lstat, open, read, close and compare
// with the content; for an exec stat its `creates`; for a notify
// nothing; then write one answer line. It understands only those lines.
func minimal() {
	os.Stdout.WriteString(`{"ready":true,"protocol":1,"version":"0.1.0"}` + "\n")
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	var buf [256]byte
	out := make([]byte, 0, 512)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		typ := field(line, `"type":"`, `"`)
		title := field(line, `"title":"`, `"`)
		changed := false
		switch string(typ) {
		case "file":
			want := field(line, `content: \"`, `\\n`)
			path := string(title)
			var st syscall.Stat_t
			if err := syscall.Lstat(path, &st); err != nil {
				os.Exit(1)
			}
			fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				os.Exit(1)
			}
			k, _ := syscall.Read(fd, buf[:])
			syscall.Close(fd)
			changed = !(k == len(want)+1 && bytes.Equal(buf[:k-1], want) && st.Mode&0o7777 == 0o644)
			out = append(out[:0], `{"resource":"File[`...)
		case "exec":
			var st syscall.Stat_t
			changed = syscall.Stat(string(field(line, `creates: `, `}`)), &st) != nil
			out = append(out[:0], `{"resource":"Exec[`...)
		case "notify":
			changed = true
			out = append(out[:0], `{"resource":"Notify[`...)
		default:
			os.Exit(2)
		}
		out = append(out, title...)
		out = append(out, `]","failed":false,"changed":`...)
		out = strconv.AppendBool(out, changed)
		out = append(out, `,"noop":false,"error":false,"exception":null}`+"\n"...)
		if _, err := os.Stdout.Write(out); err != nil {
			return
		}
	}
}

// field is what follows start in line up to end.
func field(line []byte, start, end string) []byte {
	i := bytes.Index(line, []byte(start))
	if i < 0 {
		return nil
	}
	line = line[i+len(start):]
	if j := bytes.Index(line, []byte(end)); j >= 0 {
		return line[:j]
	}
	return line
}
