// Command e2e measures the receiver end to end and reports every figure as
// a ratio to a floor measured seconds earlier on the same machine.
//
// For each scenario it renders N request lines (before the clock starts),
// pipes them through the built receiver binary and divides the wall time
// from the first line written to the last answer read by N. The floor is a
// minimal Go loop doing only the system calls the same work needs (for an
// unchanged file: lstat, open, read, close, compare; for a created file:
// open a temp file, write, fchmod, fsync, close, rename), plus writing one
// answer line to a drained pipe, which the protocol needs too: each answer
// is delivered as soon as it is made. The floor's paths and contents are
// also made before its clock starts, so it times system calls only.
// Absolute times on a shared 2-core machine are noisy; ratios measured back
// to back hold.
//
// Each scenario runs -runs times; the ratio reported is the median of the
// per-run ratios, each run against the floor measured just before it. Peak
// RSS is the child's VmHWM after the last answer of a separate run of
// -rss-n resources, and after its first tenth to show whether memory grows.
//
//	go run ./bench/e2e -receiver bin/receiver -n 10000 -runs 5 [-puppet]
//
// With -sync it measures instead one request at a time, beside a minimal
// process (sync.go):
//
//	go run ./bench/e2e -receiver bin/receiver -sync -n 10000 -runs 5
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type options struct {
	receiver string
	n        int
	runs     int
	rssN     int
	puppet   bool
	puppetN  int
	dir      string
	stateDir string // the receiver's --state-dir, inside the scratch dir
	only     string // run only the scenarios whose name contains this
	skip     string // leave out the scenarios whose name matches this regexp
	sync     bool   // one request at a time beside a minimal process (sync.go)
}

func (o options) receiverArgs() []string { return []string{"--state-dir", o.stateDir} }

func main() {
	if os.Getenv(minimalEnv) != "" {
		minimal()
		return
	}
	var o options
	flag.StringVar(&o.receiver, "receiver", "bin/receiver", "receiver binary to measure")
	flag.IntVar(&o.n, "n", 10000, "resources per scenario")
	flag.IntVar(&o.runs, "runs", 5, "runs per scenario (the median is reported)")
	flag.IntVar(&o.rssN, "rss-n", 100000, "resources in the peak-RSS run")
	flag.BoolVar(&o.puppet, "puppet", false, "also time `puppet apply` on unchanged files as a reference row")
	flag.IntVar(&o.puppetN, "puppet-n", 1000, "files in the puppet reference row")
	flag.StringVar(&o.dir, "dir", "", "scratch directory (default: a new temp dir)")
	flag.StringVar(&o.only, "only", "", "run only the scenarios whose name contains this (and skip start-up and RSS)")
	flag.StringVar(&o.skip, "skip", "", "leave out the scenarios whose name matches this `regexp`")
	flag.BoolVar(&o.sync, "sync", false, "one request at a time (write one, wait for its answer) for file unchanged, exec unchanged and notify, beside a minimal process doing the same reads and answer write")
	flag.Parse()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}

// scenario is one kind of resource measured against its floor.
type scenario struct {
	name string
	// prepare makes the scratch state before a run (outside the timing).
	prepare func(dir string, n int) error
	// line renders request i.
	line func(dir string, i int) string
	// floor does the same work with bare system calls for items 0..n-1;
	// paths and contents are rendered before the clock starts.
	floor func(f *floorInput, answer io.Writer) error
	// want is the "changed" value every answer must carry.
	want bool
	// args are the receiver's flags for this scenario, after --state-dir.
	args []string
	// cleanup, when set, undoes what prepare made outside dir (an
	// account, its crontab), after the scenario's runs.
	cleanup func()
	// n, when not 0, is the resources per run instead of -n (creating
	// accounts costs milliseconds each).
	n int
}

// count is the scenario's resources per run.
func (sc scenario) count(o options) int {
	if sc.n > 0 {
		return sc.n
	}
	return o.n
}

func content(i int, gen string) []byte {
	return []byte("hello " + gen + " " + strconv.Itoa(i) + "\n")
}

func fileLine(dir string, i int, gen string) string {
	// JSON string holding the YAML: content in double quotes so \n is a newline.
	c := strings.TrimSuffix(string(content(i, gen)), "\n")
	return `{"type":"file","title":"` + filepath.Join(dir, "f"+strconv.Itoa(i)) +
		`","params":"{ensure: file, mode: '0644', content: \"` + c + `\\n\"}"}`
}

func scenarios() []scenario {
	return append([]scenario{
		{
			name:    "file create",
			prepare: func(dir string, n int) error { return resetDir(dir) },
			line:    func(dir string, i int) string { return fileLine(dir, i, "a") },
			floor:   floorCreate,
			want:    true,
		},
		{
			// With --sync the receiver fsyncs the directory after each
			// rename, before answering, so that each answered change
			// survives a crash (Puppet never fsyncs it); this row puts
			// that fsync in the floor too. By default (the row above) the
			// directory fsyncs are grouped after the answers.
			name:    "file create --sync, floor + directory fsync",
			prepare: func(dir string, n int) error { return resetDir(dir) },
			line:    func(dir string, i int) string { return fileLine(dir, i, "a") },
			floor:   floorCreateSyncDir,
			want:    true,
			args:    []string{"--sync"},
		},
		{
			name: "file unchanged (content + mode)",
			prepare: func(dir string, n int) error {
				return writeAll(dir, n, "a")
			},
			line:  func(dir string, i int) string { return fileLine(dir, i, "a") },
			floor: floorUnchanged,
			want:  false,
		},
		{
			// A converging engine sends the same resources again and
			// again: request i names file i % 1,000, byte for byte the
			// same line each time round.
			name: "file unchanged, re-sent (1,000 files in turn)",
			prepare: func(dir string, n int) error {
				return writeAll(dir, min(n, resent), "a")
			},
			line:  func(dir string, i int) string { return fileLine(dir, i%resent, "a") },
			floor: floorUnchangedResent,
			want:  false,
		},
		{
			name: "file content change",
			prepare: func(dir string, n int) error {
				return writeAll(dir, n, "b")
			},
			line:  func(dir string, i int) string { return fileLine(dir, i, "a") },
			floor: floorCreate,
			want:  true,
		},
		{
			name:    "notify",
			prepare: func(dir string, n int) error { return nil },
			line: func(dir string, i int) string {
				return `{"type":"notify","title":"n` + strconv.Itoa(i) + `","params":"{message: hello}"}`
			},
			floor: floorAnswerOnly,
			want:  true,
		},
		{
			// 1,000 keys in one known_hosts file, each named by one
			// request in ten.
			name:    "sshkey unchanged (1,000 keys)",
			prepare: func(dir string, n int) error { return keyFile(dir, "known_hosts", "h%d ssh-ed25519 "+benchKey) },
			line: func(dir string, i int) string {
				return `{"type":"sshkey","title":"h` + strconv.Itoa(i%entries) + `","params":"{type: ed25519, key: ` + benchKey +
					`, target: ` + filepath.Join(dir, "known_hosts") + `}"}`
			},
			floor: floorStatOne(func(dir string) string { return filepath.Join(dir, "known_hosts") }),
			want:  false,
		},
		{
			name: "ssh_authorized_key unchanged (1,000 keys)",
			prepare: func(dir string, n int) error {
				return keyFile(dir, "authorized_keys", "ssh-ed25519 "+benchKey+" k%d@h")
			},
			line: func(dir string, i int) string {
				return `{"type":"ssh_authorized_key","title":"k` + strconv.Itoa(i%entries) + `@h","params":"{user: root, type: ed25519, key: ` +
					benchKey + `, target: ` + filepath.Join(dir, "authorized_keys") + `}"}`
			},
			floor: floorStatOne(func(dir string) string { return filepath.Join(dir, "authorized_keys") }),
			want:  false,
		},
		{
			// 1,000 jobs in a test account's crontab (needs root and
			// crontab(1)); the floor stats its spool file.
			name:    "cron unchanged (1,000 jobs)",
			prepare: func(dir string, n int) error { return cronTab() },
			line: func(dir string, i int) string {
				k := strconv.Itoa(i % entries)
				return `{"type":"cron","title":"j` + k + `","params":"{user: ` + cronUser + `, command: /bin/true ` + k +
					`, minute: ` + strconv.Itoa(i%entries%60) + `}"}`
			},
			floor:   floorStatOne(func(string) string { return "/var/spool/cron/crontabs/" + cronUser }),
			want:    false,
			cleanup: func() { exec.Command("crontab", "-r", "-u", cronUser).Run(); exec.Command("userdel", cronUser).Run() },
		},
		{
			name: "exec unchanged (creates)",
			prepare: func(dir string, n int) error {
				return writeAll(dir, n, "a")
			},
			line: func(dir string, i int) string {
				return `{"type":"exec","title":"/bin/true ` + strconv.Itoa(i) + `","params":"{creates: ` +
					filepath.Join(dir, "f"+strconv.Itoa(i)) + `}"}`
			},
			floor: floorStat,
			want:  false,
		},
		{
			// 500 installed packages named in turn, every other one at its
			// exact version; the floor is a stat of the dpkg status file,
			// which is all the receiver must do to know the database it
			// parsed once is still current.
			name:    "package unchanged (500 installed; installed or version)",
			prepare: func(dir string, n int) error { _, err := installedPackages(); return err },
			line: func(dir string, i int) string {
				pkgs, _ := installedPackages()
				p := pkgs[i%len(pkgs)]
				ensure := "installed"
				if i%2 == 1 {
					ensure = "'" + p[1] + "'"
				}
				return `{"type":"package","title":"` + p[0] + `","params":"{ensure: ` + ensure + `}"}`
			},
			floor: floorStatusStat,
			want:  false,
		},
	}, accountScenarios()...)
}

// installedPackages lists up to 500 installed packages (name and
// version) from dpkg-query, once.
var installedPackages = sync.OnceValues(func() ([][2]string, error) {
	out, err := exec.Command("dpkg-query", "-W", "-f=${db:Status-Abbrev} ${Package} ${Version}\n").Output()
	if err != nil {
		return nil, fmt.Errorf("dpkg-query: %w", err)
	}
	var pkgs [][2]string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ii" || seen[f[1]] || strings.Contains(f[1], ":") {
			continue
		}
		seen[f[1]] = true
		pkgs = append(pkgs, [2]string{f[1], f[2]})
		if len(pkgs) == 500 {
			break
		}
	}
	if len(pkgs) < 500 {
		return nil, fmt.Errorf("only %d installed packages; the package row needs 500", len(pkgs))
	}
	return pkgs, nil
})

// floorStatusStat: a stat of the dpkg status file, one answer write.
func floorStatusStat(f *floorInput, answer io.Writer) error {
	for range f.paths {
		var st syscall.Stat_t
		if err := syscall.Stat("/var/lib/dpkg/status", &st); err != nil {
			return err
		}
		if _, err := answer.Write(answerLine); err != nil {
			return err
		}
	}
	return nil
}

// entries is how many keys or jobs the sshkey, ssh_authorized_key and
// cron rows name: request i names entry i % entries.
const entries = 1000

const benchKey = "AAAAC3NzaC1lZDI1NTE5AAAAIBg4Ibu0wzfMGPGKSbJ1y7ItLm0uX4bGQm1k2JHbmVYk"

// cronUser is the account whose crontab the cron row uses.
const cronUser = "pipcronb"

// keyFile writes dir/name with one line per entry, format's %d its number.
func keyFile(dir, name, format string) error {
	if err := resetDir(dir); err != nil {
		return err
	}
	var b strings.Builder
	for i := 0; i < entries; i++ {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600)
}

// cronTab makes cronUser (a free uid from 47599 down) and installs its
// crontab of entries jobs, as the receiver writes them.
func cronTab() error {
	if exec.Command("id", cronUser).Run() != nil {
		var err error
		var out []byte
		for uid := 47599; uid >= 47500; uid-- {
			out, err = exec.Command("useradd", "-u", strconv.Itoa(uid), "-U", "-M", "-d", "/nonexistent", cronUser).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "not unique") {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("useradd %s: %v: %s", cronUser, err, out)
		}
	}
	var b strings.Builder
	for i := 0; i < entries; i++ {
		fmt.Fprintf(&b, "# Puppet Name: j%d\n%d * * * * /bin/true %d\n", i, i%60, i)
	}
	c := exec.Command("crontab", "-u", cronUser, "-")
	c.Stdin = strings.NewReader(b.String())
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("crontab: %v: %s", err, out)
	}
	return nil
}

// floorStatOne: a stat of the one file every request reads, one answer
// write.
func floorStatOne(path func(dir string) string) func(f *floorInput, answer io.Writer) error {
	return func(f *floorInput, answer io.Writer) error {
		p := path(f.dir)
		for range f.paths {
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err != nil {
				return err
			}
			if _, err := answer.Write(answerLine); err != nil {
				return err
			}
		}
		return nil
	}
}

func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("reset %s: %w", dir, err)
	}
	return os.MkdirAll(dir, 0o755)
}

func writeAll(dir string, n int, gen string) error {
	if err := resetDir(dir); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), content(i, gen), 0o644); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	return nil
}

// floorInput is what a floor needs, made before its clock starts: the
// paths, the temp paths and the wanted contents of items 0..n-1.
type floorInput struct {
	dir         string
	paths, tmps []string
	contents    [][]byte
}

func newFloorInput(dir string, n int) *floorInput {
	f := &floorInput{dir: dir, paths: make([]string, n), tmps: make([]string, n), contents: make([][]byte, n)}
	for i := 0; i < n; i++ {
		f.paths[i] = filepath.Join(dir, "f"+strconv.Itoa(i))
		f.tmps[i] = filepath.Join(dir, ".f"+strconv.Itoa(i)+".tmp")
		f.contents[i] = content(i, "a")
	}
	return f
}

var answerLine = []byte(`{"resource":"File[/x]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}` + "\n")

// floorUnchanged: lstat, open, read, close, compare, and one answer write.
func floorUnchanged(f *floorInput, answer io.Writer) error {
	buf := make([]byte, 4096)
	for i, p := range f.paths {
		want := f.contents[i]
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		k, err := syscall.Read(fd, buf)
		syscall.Close(fd)
		if err != nil {
			return err
		}
		if !bytes.Equal(buf[:k], want) || st.Mode&0o7777 != 0o644 {
			return fmt.Errorf("floor: %s differs", p)
		}
		if _, err := answer.Write(answerLine); err != nil {
			return err
		}
	}
	return nil
}

// resent is how many files the re-sent row names in turn.
const resent = 1000

// floorUnchangedResent: floorUnchanged for the re-sent row, item i being
// file i % resent.
func floorUnchangedResent(f *floorInput, answer io.Writer) error {
	g := *f
	g.paths, g.contents = make([]string, len(f.paths)), make([][]byte, len(f.paths))
	for i := range f.paths {
		g.paths[i], g.contents[i] = f.paths[i%resent], f.contents[i%resent]
	}
	return floorUnchanged(&g, answer)
}

// floorCreate: open a temp file, write, fchmod, fsync, rename, one answer
// write: the floor.
func floorCreate(f *floorInput, answer io.Writer) error { return createFloor(f, answer, false) }

// floorCreateSyncDir: floorCreate plus an fsync of the directory after
// each rename (open, fsync, close), as the receiver does with --sync.
func floorCreateSyncDir(f *floorInput, answer io.Writer) error { return createFloor(f, answer, true) }

func createFloor(f *floorInput, answer io.Writer, syncDir bool) error {
	for i, p := range f.paths {
		tmp := f.tmps[i]
		fd, err := syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		if _, err := syscall.Write(fd, f.contents[i]); err != nil {
			return err
		}
		if err := syscall.Fchmod(fd, 0o644); err != nil {
			return err
		}
		if err := syscall.Fsync(fd); err != nil {
			return err
		}
		syscall.Close(fd)
		if err := syscall.Rename(tmp, p); err != nil {
			return err
		}
		if syncDir {
			d, err := syscall.Open(f.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			if err := syscall.Fsync(d); err != nil {
				return err
			}
			syscall.Close(d)
		}
		if _, err := answer.Write(answerLine); err != nil {
			return err
		}
	}
	return nil
}

// floorStat: the stat `creates` needs, one answer write.
func floorStat(f *floorInput, answer io.Writer) error {
	for _, p := range f.paths {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return err
		}
		if _, err := answer.Write(answerLine); err != nil {
			return err
		}
	}
	return nil
}

// floorAnswerOnly: one answer write per resource.
func floorAnswerOnly(f *floorInput, answer io.Writer) error {
	for range f.paths {
		if _, err := answer.Write(answerLine); err != nil {
			return err
		}
	}
	return nil
}

// pipeSink is a pipe whose far end is drained, as the receiver's stdout is.
func pipeSink() (io.WriteCloser, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, r); close(done) }()
	return w, func() { w.Close(); <-done; r.Close() }, nil
}

// measurement is one run's wall time and CPU time (user + system) per
// resource. CPU time does not grow when other processes load the machine,
// so it shows the cost of the work itself where wall times are noisy.
type measurement struct{ wall, cpu time.Duration }

func cpuSelf() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return rusageCPU(&ru)
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func measureFloor(sc scenario, dir string, n int) (measurement, error) {
	if err := sc.prepare(dir, n); err != nil {
		return measurement{}, err
	}
	in := newFloorInput(dir, n)
	w, closeSink, err := pipeSink()
	if err != nil {
		return measurement{}, err
	}
	defer closeSink()
	cpu0 := cpuSelf()
	start := time.Now()
	if err := sc.floor(in, w); err != nil {
		return measurement{}, fmt.Errorf("floor %s: %w", sc.name, err)
	}
	return measurement{time.Since(start) / time.Duration(n), (cpuSelf() - cpu0) / time.Duration(n)}, nil
}

// child is one running receiver.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startReceiver(ctx context.Context, bin string, extra ...string) (*child, time.Duration, error) {
	return startReceiverEnv(ctx, bin, nil, extra...)
}

// startReceiverEnv is startReceiver with env added to the environment.
func startReceiverEnv(ctx context.Context, bin string, env []string, extra ...string) (*child, time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, extra...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start %s: %w", bin, err)
	}
	out := bufio.NewReaderSize(stdout, 1<<16)
	banner, err := out.ReadBytes('\n')
	ready := time.Since(start)
	if err != nil {
		return nil, 0, fmt.Errorf("reading ready banner: %w", err)
	}
	if !bytes.Contains(banner, []byte(`"ready":true`)) {
		return nil, 0, fmt.Errorf("unexpected first line %q", banner)
	}
	return &child{cmd: cmd, stdin: stdin, out: out}, ready, nil
}

func (c *child) wait() (*os.ProcessState, error) {
	c.stdin.Close()
	err := c.cmd.Wait()
	return c.cmd.ProcessState, err
}

// render makes the n request lines, so that making them costs nothing
// while the receiver is timed.
func render(n int, line func(i int) string) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		b.WriteString(line(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// drive writes the n rendered lines from a goroutine and reads n answers,
// checking each.
func (c *child) drive(n int, input []byte, want bool, atTenth func()) error {
	werr := make(chan error, 1)
	go func() {
		_, err := c.stdin.Write(input)
		werr <- err
	}()
	wantField := []byte(`"changed":` + strconv.FormatBool(want))
	for i := 0; i < n; i++ {
		ans, err := c.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("answer %d: %w", i, err)
		}
		if !bytes.Contains(ans, wantField) || !bytes.Contains(ans, []byte(`"failed":false`)) {
			return fmt.Errorf("answer %d: %s (want changed=%v)", i, bytes.TrimSpace(ans), want)
		}
		if atTenth != nil && i == n/10 {
			atTenth()
		}
	}
	return <-werr
}

// measureReceiver times one receiver run; its CPU time is the child's
// whole life (start-up included) divided by N.
func measureReceiver(ctx context.Context, o options, sc scenario, dir string) (measurement, error) {
	o.n = sc.count(o)
	if err := sc.prepare(dir, o.n); err != nil {
		return measurement{}, err
	}
	input := render(o.n, func(i int) string { return sc.line(dir, i) })
	c, _, err := startReceiver(ctx, o.receiver, append(o.receiverArgs(), sc.args...)...)
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	err = c.drive(o.n, input, sc.want, nil)
	m := measurement{wall: time.Since(start) / time.Duration(o.n)}
	st, werr := c.wait()
	if err == nil && werr != nil {
		err = fmt.Errorf("receiver exit: %w", werr)
	}
	if st != nil {
		m.cpu = rusageCPU(st.SysUsage().(*syscall.Rusage)) / time.Duration(o.n)
	}
	return m, err
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, errors.New("no VmHWM")
}

func run(ctx context.Context, o options, w io.Writer) error {
	if _, err := os.Stat(o.receiver); err != nil {
		return fmt.Errorf("receiver binary: %w (run `make build` first)", err)
	}
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "pippet-e2e-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	work := filepath.Join(dir, "w")
	o.stateDir = filepath.Join(dir, "state")
	if o.sync {
		var scs []scenario
		for _, sc := range syncScenarios() {
			if strings.Contains(sc.name, o.only) {
				scs = append(scs, sc)
			}
		}
		return runSync(ctx, o, w, scs, dir)
	}
	fmt.Fprintf(w, "N = %d resources per run, %d runs; the floor is measured just before each receiver run and\n", o.n, o.runs)
	fmt.Fprintf(w, "the ratio is the median of the per-run ratios of wall times (times are the medians of each column).\n")
	fmt.Fprintf(w, "CPU is user + system time per resource: the receiver's whole life, start-up included; the floor's process\n")
	fmt.Fprintf(w, "(its loop and the goroutine draining its answer pipe).\n\n")
	fmt.Fprintf(w, "| scenario | receiver µs/resource | floor µs/resource | ratio | receiver CPU µs | floor CPU µs |\n|---|---:|---:|---:|---:|---:|\n")
	skip, err := regexp.Compile(o.skip)
	if err != nil {
		return fmt.Errorf("-skip: %w", err)
	}
	var scs []scenario
	for _, sc := range scenarios() {
		if strings.Contains(sc.name, o.only) && (o.skip == "" || !skip.MatchString(sc.name)) {
			scs = append(scs, sc)
		}
	}
	// Steps: each run of each scenario, then start-up and peak RSS.
	steps := len(scs) * o.runs
	if o.only == "" {
		steps += 2
	}
	if o.puppet {
		steps++
	}
	prog := newProgress(os.Stderr, steps)
	defer prog.finish()
	if os.Geteuid() == 0 {
		defer func() {
			fmt.Fprintln(os.Stderr, "e2e: removing the accounts the scenarios made")
			removeAccounts()
		}()
	}
	var below []string // scenarios whose ratio is below 1
	for i, sc := range scs {
		var rec, flo, recCPU, floCPU []time.Duration
		var ratios []float64
		err := func() error {
			if sc.cleanup != nil {
				defer sc.cleanup()
			}
			for r := 0; r < o.runs; r++ {
				prog.step(fmt.Sprintf("scenario %d of %d, %s: run %d of %d, %d resources", i+1, len(scs), sc.name, r+1, o.runs, sc.count(o)))
				f, err := measureFloor(sc, work, sc.count(o))
				if err != nil {
					return err
				}
				p, err := measureReceiver(ctx, o, sc, work)
				if err != nil {
					return fmt.Errorf("%s: %w", sc.name, err)
				}
				flo, rec = append(flo, f.wall), append(rec, p.wall)
				floCPU, recCPU = append(floCPU, f.cpu), append(recCPU, p.cpu)
				ratios = append(ratios, float64(p.wall)/float64(f.wall))
			}
			return nil
		}()
		if err != nil {
			return err
		}
		sort.Float64s(ratios)
		ratio := ratios[len(ratios)/2]
		if ratio < 1 {
			below = append(below, sc.name)
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", sc.name, us(median(rec)), us(median(flo)), ratio,
			us(median(recCPU)), us(median(floCPU)))
	}
	if len(below) > 0 {
		fmt.Fprint(w, belowOne(below, o.n, o.runs))
	}

	if o.only != "" {
		return nil
	}
	// Start to ready banner.
	prog.step("start to ready banner, 21 starts")
	var readies []time.Duration
	for r := 0; r < 21; r++ {
		c, ready, err := startReceiver(ctx, o.receiver, o.receiverArgs()...)
		if err != nil {
			return err
		}
		if _, err := c.wait(); err != nil {
			return fmt.Errorf("receiver exit: %w", err)
		}
		readies = append(readies, ready)
	}
	fmt.Fprintf(w, "\nstart to ready banner: median %.2f ms over %d starts\n", us(median(readies))/1000, len(readies))

	// Peak RSS over rssN resources: unchanged files, reusing a pool of
	// files so the run measures the receiver, not the disk.
	prog.step(fmt.Sprintf("peak RSS over %d unchanged files", o.rssN))
	pool := 1000
	if err := writeAll(work, pool, "a"); err != nil {
		return err
	}
	input := render(o.rssN, func(i int) string { return fileLine(work, i%pool, "a") })
	c, _, err := startReceiver(ctx, o.receiver, o.receiverArgs()...)
	if err != nil {
		return err
	}
	// VmHWM is the child's own high-water mark, sampled after the first
	// tenth and after the last answer (the child has nothing left to do
	// but exit). Not getrusage's ru_maxrss: Linux counts in it the memory
	// of the parent the child was forked from at exec, here this harness
	// with its rendered input.
	var early, peak int64
	var herr error
	err = c.drive(o.rssN, input, false, func() {
		early, herr = vmHWM(c.cmd.Process.Pid)
	})
	if err == nil && herr == nil {
		peak, herr = vmHWM(c.cmd.Process.Pid)
	}
	_, werr := c.wait()
	for _, e := range []error{err, herr, werr} {
		if e != nil {
			return e
		}
	}
	fmt.Fprintf(w, "peak RSS (VmHWM) over %d unchanged file resources: %.1f MB (after the first %d: %.1f MB)\n",
		o.rssN, float64(peak)/1024, o.rssN/10, float64(early)/1024)

	if o.puppet {
		prog.step(fmt.Sprintf("puppet apply reference row, %d files", o.puppetN))
		if err := puppetRow(ctx, o, dir, w); err != nil {
			fmt.Fprintf(w, "\npuppet reference row: %v\n", err)
		}
	}
	return nil
}

// puppetRow times `puppet apply` on puppetN files that are already as the
// manifest wants them (so nothing changes: --detailed-exitcodes must say 0)
// and pippet's receiver on the same files.
func puppetRow(ctx context.Context, o options, dir string, w io.Writer) error {
	bin, err := exec.LookPath("puppet")
	if err != nil {
		return fmt.Errorf("puppet not installed: %w", err)
	}
	pd := filepath.Join(dir, "p")
	if err := writeAll(pd, o.puppetN, "a"); err != nil {
		return err
	}
	var m strings.Builder
	for i := 0; i < o.puppetN; i++ {
		fmt.Fprintf(&m, "file { '%s': ensure => file, mode => '0644', content => \"%s\\n\" }\n",
			filepath.Join(pd, "f"+strconv.Itoa(i)), strings.TrimSuffix(string(content(i, "a")), "\n"))
	}
	manifest := filepath.Join(dir, "site.pp")
	if err := os.WriteFile(manifest, []byte(m.String()), 0o644); err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, "apply", "--detailed-exitcodes", manifest)
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 0) {
		return fmt.Errorf("puppet apply: %w: %s", err, tail(out))
	}
	input := render(o.puppetN, func(i int) string { return fileLine(pd, i, "a") })
	c, _, err := startReceiver(ctx, o.receiver, o.receiverArgs()...)
	if err != nil {
		return err
	}
	start = time.Now()
	err = c.drive(o.puppetN, input, false, nil)
	ours := time.Since(start)
	if _, werr := c.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n| reference: %d unchanged files | total | per file |\n|---|---:|---:|\n", o.puppetN)
	fmt.Fprintf(w, "| `puppet apply` (compile + apply, one process) | %.2f s | %.1f µs |\n", elapsed.Seconds(), us(elapsed/time.Duration(o.puppetN)))
	fmt.Fprintf(w, "| pippet receiver | %.3f s | %.1f µs |\n", ours.Seconds(), us(ours/time.Duration(o.puppetN)))
	return nil
}

func tail(b []byte) string {
	if len(b) > 500 {
		b = b[len(b)-500:]
	}
	return string(b)
}

// belowOne explains ratios below 1, printed under the table: the
// receiver cannot do less than the system calls the floor makes, so such a
// ratio says the two runs met different disks' worth of waiting.
func belowOne(names []string, n, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nA ratio below 1 (%s) does not mean the receiver beat the floor: it makes at least\n", strings.Join(names, "; "))
	b.WriteString("the floor's system calls. The run took less wall time than the floor's run just before it, which on\n")
	b.WriteString("rows that wait for fsync means less waiting: each fsync waits for a journal commit the whole disk shares,\n")
	b.WriteString("so its time is set by what other processes write at that moment. Compare the CPU columns for the\n")
	b.WriteString("work itself")
	if n < 10000 || runs < 5 {
		fmt.Fprintf(&b, ", and quote figures of `make bench` (N = 10,000, 5 runs), not of N = %d with %d run(s)", n, runs)
	}
	b.WriteString(".\n")
	return b.String()
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
