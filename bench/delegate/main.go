// Command delegate measures what the receiver's relay adds to a delegated
// request (docs/delegation.md): the same request lines are fed to the
// bridge alone (the command the receiver runs, started the same way) and
// to the receiver with --fallback puppet, one process each, after one
// warm-up request that loads Puppet and the type; the clock runs from the
// first timed line written to the last answer read. Runs alternate
// between the two, and the medians are compared. The timed lines are
// written at once (a script piping a manifest in), or with -sync one at a
// time, each after the answer to the one before (a controller such as
// runner.Apply waiting for each answer).
//
//	go run ./bench/delegate -receiver bin/receiver -n 1000 -runs 5 [-sync]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pippet/pippet/delegate"
)

func main() {
	receiver := flag.String("receiver", "bin/receiver", "the receiver binary")
	n := flag.Int("n", 1000, "timed requests per run")
	runs := flag.Int("runs", 5, "runs of each")
	modules := flag.String("modulepath", "delegate/testdata/modules", "modulepath holding ini_key")
	flag.BoolVar(&lockStep, "sync", false, "write each timed line only after the answer to the one before")
	flag.Parse()
	inst, ok := delegate.FindPuppet()
	if !ok {
		fail(fmt.Errorf("no Puppet installation"))
	}
	mp, err := filepath.Abs(*modules)
	if err != nil {
		fail(err)
	}
	dir, err := os.MkdirTemp("", "pippet-bench-delegate-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)

	mode := "written at once"
	if lockStep {
		mode = "one at a time, each after the answer before (-sync)"
	}
	fmt.Printf("# lines %s\n", mode)
	fmt.Printf("# %d requests per run, %d runs each, medians; wall ms per request; CPU ms per request (utime+stime from /proc) of the bridge and of the receiver process itself\n", *n, *runs)
	fmt.Printf("| scenario | bridge alone (wall) | through the receiver (wall) | wall overhead | paired overhead | best alone | best relayed | best overhead | bridge CPU | receiver's own CPU | CPU overhead |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sc := range []struct {
		name string
		line func(i int) string
	}{
		{"ini_key unchanged", func(i int) string {
			return fmt.Sprintf(`{"type":"ini_key","title":"s/k%d","params":{"path":%q,"value":"v"}}`, i%10, filepath.Join(dir, "unchanged.ini"))
		}},
		{"ini_key changed", func(i int) string {
			return fmt.Sprintf(`{"type":"ini_key","title":"s/k","params":{"path":%q,"value":"v%d"}}`, filepath.Join(dir, "changed.ini"), i)
		}},
	} {
		// The warm-up makes every key of the unchanged scenario first.
		var warm bytes.Buffer
		for i := range 10 {
			warm.WriteString(sc.line(i) + "\n")
		}
		var timed bytes.Buffer
		for i := range *n {
			timed.WriteString(sc.line(i+10) + "\n")
		}
		var alone, relayed, bridgeCPU, relayCPU []time.Duration
		for range *runs {
			argv := delegate.BridgeCommand(inst, []string{mp}, "warning", false)
			m, err := measure(argv, []string{delegate.EnvBridge + "=" + delegate.Bridge}, warm.Bytes(), timed.Bytes(), 10, *n)
			if err != nil {
				fail(fmt.Errorf("bridge alone: %w", err))
			}
			alone = append(alone, m.wall)
			bridgeCPU = append(bridgeCPU, m.selfCPU)
			m, err = measure([]string{*receiver, "--fallback", "puppet", "--modulepath", mp, "--state-dir", dir, "--log-level", "warning"}, nil, warm.Bytes(), timed.Bytes(), 10, *n)
			if err != nil {
				fail(fmt.Errorf("receiver: %w", err))
			}
			relayed = append(relayed, m.wall)
			relayCPU = append(relayCPU, m.selfCPU)
		}
		a, r := median(alone), median(relayed)
		bc, rc := median(bridgeCPU), median(relayCPU)
		// Runs alternate, so run i of each ran under about the same
		// load: the median of their ratios, and the best of each.
		ratios := make([]time.Duration, len(alone))
		for i := range alone {
			ratios[i] = time.Duration(float64(relayed[i]) / float64(alone[i]) * 1e6)
		}
		pr := float64(median(ratios)) / 1e6
		ba, br := slices.Min(alone), slices.Min(relayed)
		per := func(d time.Duration) float64 { return float64(d) / float64(*n) / 1e6 }
		fmt.Printf("| %s | %.3f | %.3f | %+.1f%% | %+.1f%% | %.3f | %.3f | %+.1f%% | %.3f | %.4f | %.2f%% |\n", sc.name, per(a), per(r), (float64(r)/float64(a)-1)*100,
			(pr-1)*100, per(ba), per(br), (float64(br)/float64(ba)-1)*100,
			per(bc), per(rc), float64(rc)/float64(bc)*100)
		fmt.Fprintf(os.Stderr, "%s: wall alone %v, relayed %v; CPU bridge %v, receiver %v\n", sc.name, alone, relayed, bridgeCPU, relayCPU)
	}
}

// lockStep: -sync.
var lockStep bool

type measured struct {
	wall    time.Duration // first timed line written to last answer read
	selfCPU time.Duration // the started process' own CPU time meanwhile
}

// cpu is a process' own user and system time (not its children's).
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		fail(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// after "(comm) ": state(0) ... utime(11) stime(12), in clock ticks (100 Hz)
	var u, st int64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &st)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// measure starts argv, waits for its ready line, sends warm and reads its
// nWarm answers, then times sending timed and reading its nTimed answers.
func measure(argv, env []string, warm, timed []byte, nWarm, nTimed int) (measured, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return measured{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return measured{}, err
	}
	if err := cmd.Start(); err != nil {
		return measured{}, err
	}
	defer cmd.Wait()
	defer in.Close()
	br := bufio.NewReaderSize(out, 1<<20)
	read := func(k int) error {
		for k > 0 {
			line, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("reading answers: %w", err)
			}
			if strings.HasPrefix(line, `{"ready"`) {
				continue
			}
			if strings.Contains(line, `"failed":true`) {
				return fmt.Errorf("a failed answer: %s", line)
			}
			k--
		}
		return nil
	}
	go in.Write(warm)
	if err := read(nWarm); err != nil {
		return measured{}, err
	}
	pid := cmd.Process.Pid
	cpu0 := cpu(pid)
	start := time.Now()
	if lockStep {
		rest := timed
		for len(rest) > 0 {
			i := bytes.IndexByte(rest, '\n') + 1
			if _, err := in.Write(rest[:i]); err != nil {
				return measured{}, err
			}
			rest = rest[i:]
			if err := read(1); err != nil {
				return measured{}, err
			}
		}
	} else {
		errc := make(chan error, 1)
		go func() { _, err := in.Write(timed); errc <- err }()
		if err := read(nTimed); err != nil {
			return measured{}, err
		}
		if err := <-errc; err != nil {
			return measured{}, err
		}
	}
	d := time.Since(start)
	c := cpu(pid) - cpu0
	in.Close()
	_, _ = io.Copy(io.Discard, br)
	return measured{wall: d, selfCPU: c}, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "delegate bench:", err)
	os.Exit(1)
}
