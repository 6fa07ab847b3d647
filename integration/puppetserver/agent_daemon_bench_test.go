package puppetserver

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/internal/testutil"
)

// BenchmarkAgentDaemon (issue 34, items 2 and 4): the agents as
// daemons, a run every runinterval (1h here: each run is started by
// SIGUSR1, as both agents take it), on converged nodes of the same
// server, one node per daemon, all daemons running at once and their
// runs interleaved (which goes first rotates). One op is one run of each
// daemon. Reported, each the median over the ops:
//
//   - NAME-s: the run's wall time, from the signal to its
//     last_run_report.yaml written (the report sent); NAME-total-s the
//     run's total as its report says (Puppet's daemon starts the run a
//     while after the signal);
//   - NAME-cpu-s: the CPU time the daemon's processes (it and every
//     process under it, those that ended during the run included) spent
//     on the run;
//   - NAME-rss-between-MiB: the resident memory of the daemon's processes
//     (the sum of their VmRSS) once the run is over and the daemon idle;
//     NAME-pss-between-MiB the same counting each page shared between
//     them once (the sum of their Pss);
//   - NAME-peakrss-MiB: the highest sum of their VmRSS sampled during
//     the run (every 10 ms).
//
// Daemons: receiver-stop (`receiver agent --no-daemonize`, its default:
// the Puppet a run starts is stopped when it ends), receiver-keep (the
// same with --puppet-between-runs keep: that Puppet kept for the next
// run) and puppet (`puppet agent --no-daemonize`). lean: acorelean's
// catalog, which has acore_marker, a type only Puppet has (the receiver's
// run needs Puppet); native: issue 34's environment, native types and
// known custom facts (no Ruby in the receiver's run: stop and keep are
// the same, receiver-stop only). Slow: `go test -run '^$' -bench
// BenchmarkAgentDaemon -benchtime 3x -timeout 30m
// ./integration/puppetserver/`.
func BenchmarkAgentDaemon(b *testing.B) {
	s := need(b)
	if _, err := exec.LookPath("puppet"); err != nil {
		b.Skip("puppet is not installed")
	}
	b.Run("lean", func(b *testing.B) {
		benchDaemons(b, s, acoreLeanEnv, []string{"receiver-stop", "receiver-keep", "puppet"})
	})
	b.Run("native", func(b *testing.B) { benchDaemons(b, s, anativeEnv, []string{"receiver-stop", "puppet"}) })
}

// agentDaemon is one daemon of BenchmarkAgentDaemon.
type agentDaemon struct {
	name   string
	node   *acoreNode
	vardir string
	cmd    *exec.Cmd
	out    testutil.SyncBuffer // read while the daemon writes
}

func (d *agentDaemon) report() string {
	return filepath.Join(d.vardir, "state", "last_run_report.yaml")
}

func (d *agentDaemon) logged() string {
	b, _ := os.ReadFile(filepath.Join(d.node.dir, "agent.log"))
	return string(b) + d.out.String()
}

func startDaemon(b testing.TB, s *server, env, name string) *agentDaemon {
	n := benchNode(b, s, "daemon-"+env+"-"+name)
	n.env = env
	d := &agentDaemon{name: name, node: n, vardir: filepath.Join(n.dir, "var")}
	confdir := filepath.Join(n.dir, "conf")
	// No run but the ones the benchmark asks for.
	if err := write(filepath.Join(confdir, "puppet.conf"), agentConf(n, s, d.vardir, "runinterval = 1h")); err != nil {
		b.Fatal(err)
	}
	logdest := filepath.Join(n.dir, "agent.log")
	env0 := []string{"FACTER_acore_root=" + n.root, "HOME=" + n.dir}
	switch name {
	case "puppet":
		d.cmd = exec.Command("puppet", "agent", "--no-daemonize", "--confdir", confdir, "--logdest", logdest)
		env0 = append(env0, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	default:
		mode := strings.TrimPrefix(name, "receiver-")
		d.cmd = exec.Command(receiverBin, "agent", "--no-daemonize", "--confdir", confdir, "--logdest", logdest,
			"--state-dir", filepath.Join(n.dir, "state"), "--puppet-between-runs", mode)
	}
	d.cmd.Env = append(os.Environ(), env0...)
	d.cmd.Dir = "/"
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = d.cmd.Process.Kill()
			<-done
		}
	})
	return d
}

// waitRun waits for the daemon's run to end (its last_run_report.yaml
// other than before), sampling its processes' resident memory, and
// returns the highest sum seen (KiB).
func (d *agentDaemon) waitRun(b testing.TB, before fileStat) int64 {
	deadline := time.Now().Add(5 * time.Minute)
	var peak int64
	for {
		peak = max(peak, treeRSS(d.cmd.Process.Pid))
		if st := statOf(d.report()); st.ok && st != before {
			// Written whole (renamed into place): the run is over but
			// for the daemon's own end of run (a Puppet stopped).
			return peak
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: no run's end within 5 minutes\n%s", d.name, d.logged())
		}
		if f := procStat(d.cmd.Process.Pid); f == nil || f[0] == "Z" {
			b.Fatalf("%s exited\n%s", d.name, d.logged())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fileStat tells a file's versions apart (its inode, size and mtime).
type fileStat struct {
	ino, size int64
	mtime     time.Time
	ok        bool
}

func statOf(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}
	}
	st := fileStat{size: fi.Size(), mtime: fi.ModTime(), ok: true}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = int64(sys.Ino)
	}
	return st
}

func benchDaemons(b *testing.B, s *server, env string, names []string) {
	b.Cleanup(func() { removeCron(b, "anative-facts") })
	var ds []*agentDaemon
	for _, name := range names {
		ds = append(ds, startDaemon(b, s, env, name))
	}
	// The first run (at the daemon's start) converges the node; a second
	// one, asked for, is the first converged run (it starts the Puppet a
	// kept one keeps).
	for _, d := range ds {
		d.waitRun(b, fileStat{})
	}
	for _, d := range ds {
		d.run(b)
		if st := reportStatus(b, d.report()); st != "unchanged" {
			b.Fatalf("%s: a converged run's status is %q, not unchanged\n%s", d.name, st, d.logged())
		}
	}
	m := samples{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range ds {
			d := ds[(i+j)%len(ds)]
			wall, cpu, peak := d.run(b)
			if st := reportStatus(b, d.report()); st != "unchanged" {
				b.Fatalf("%s: a converged run's status is %q, not unchanged\n%s", d.name, st, d.logged())
			}
			m.add(d.name+"-s", wall.Seconds())
			// The run's own measure of itself (its report's total): Puppet's
			// daemon notices a signal a little after it came.
			m.add(d.name+"-total-s", reportTimes(b, d.vardir)["total"])
			m.add(d.name+"-cpu-s", cpu)
			m.add(d.name+"-peakrss-MiB", float64(peak)/1024)
			m.add(d.name+"-rss-between-MiB", float64(treeRSS(d.cmd.Process.Pid))/1024)
			m.add(d.name+"-pss-between-MiB", float64(treePSS(d.cmd.Process.Pid))/1024)
			m.add(d.name+"-procs-between", float64(len(procTree(d.cmd.Process.Pid))))
		}
	}
	b.StopTimer()
	m.report(b)
	for _, d := range ds {
		b.Logf("%s %s, every run (s): %.3f; between runs (MiB): %.1f", env, d.name, m[d.name+"-s"], m[d.name+"-rss-between-MiB"])
	}
}

// run has the daemon run now (SIGUSR1) and waits for the run's end and
// the daemon's rest after it: the run's wall time, the CPU time it
// took, its peak resident memory (KiB).
func (d *agentDaemon) run(b testing.TB) (wall time.Duration, cpu float64, peak int64) {
	before := statOf(d.report())
	cpu0 := treeCPU(d.cmd.Process.Pid)
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		b.Fatal(err)
	}
	peak = d.waitRun(b, before)
	wall = time.Since(start)
	d.settle()
	return wall, treeCPU(d.cmd.Process.Pid) - cpu0, peak
}

// rubies are the Ruby processes under the daemon.
func (d *agentDaemon) rubies() []int {
	var out []int
	for _, p := range procTree(d.cmd.Process.Pid)[1:] {
		if isRuby(p) {
			out = append(out, p)
		}
	}
	return out
}

// settle waits for the daemon to be idle after a run: the Puppet a
// run started gone (unless the daemon keeps it), at most 15 seconds,
// then a second more. (The receiver's command watchdog, started with its
// first command, stays: it is part of the daemon.)
func (d *agentDaemon) settle() {
	deadline := time.Now().Add(15 * time.Second)
	for d.name != "receiver-keep" && len(d.rubies()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
}

func isRuby(pid int) bool {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return strings.Contains(filepath.Base(exe), "ruby")
}

var statusLine = regexp.MustCompile(`(?m)^status: (\S+)`)

// reportStatus is the status of the report in path (changed, unchanged,
// failed).
func reportStatus(b testing.TB, path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	m := statusLine.FindSubmatch(raw)
	if m == nil {
		return ""
	}
	return strings.Trim(string(m[1]), `"'`)
}

// procTree is pid and every process under it (pid first).
func procTree(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(p); len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			children[pp] = append(children[pp], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// procStat are the fields of /proc/PID/stat after the command's name
// (state first: field 3), nil when the process is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// treeRSS is the sum of the VmRSS (KiB) of pid and the processes under
// it.
func treeRSS(pid int) int64 {
	var sum int64
	for _, p := range procTree(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				sum += kib
			}
		}
	}
	return sum
}

// treePSS is the sum of the proportional set sizes (KiB) of pid and the
// processes under it: their resident memory with each page shared by
// several processes (the receiver's binary mapped by the daemon and its
// watchdog, say) counted once over them.
func treePSS(pid int) int64 {
	var sum int64
	for _, p := range procTree(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Pss:"); ok {
				kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				sum += kib
			}
		}
	}
	return sum
}

// treeCPU is the CPU time (s) of pid and the processes under it, with
// the children each has waited for (utime, stime, cutime, cstime).
func treeCPU(pid int) float64 {
	var ticks int64
	for _, p := range procTree(pid) {
		f := procStat(p)
		if len(f) < 15 {
			continue
		}
		// utime, stime, cutime, cstime: fields 14-17, 11-14 after the name.
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
	}
	return float64(ticks) / 100
}
