package command_test

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/applier/command"
)

// selfCPU is the CPU time this process has used (user and system, every
// thread). Wall time per command swings with the machine's load; the CPU
// the parent spends starting, watching and reaping one is steadier.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports the parent's CPU per run besides the
// wall time (cpu-ns/op).
func loop(b *testing.B, f func() error) {
	b.Helper()
	start := selfCPU()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(selfCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkRun is one short command through the runner, with a timeout
// as the types give one; BenchmarkOSExec is the same command through
// os/exec alone; BenchmarkOSExecSetsid is os/exec with a new session per
// command, as Run did before: with scheduler autogroups (Debian's
// default) the session alone cost about 0.4 ms of CPU per command.
func BenchmarkRun(b *testing.B) {
	loop(b, func() error {
		_, err := command.Run(context.Background(), &command.Cmd{Argv: []string{"/bin/true"}, Timeout: time.Minute})
		return err
	})
}

func BenchmarkOSExec(b *testing.B) {
	loop(b, func() error { return exec.Command("/bin/true").Run() })
}

func BenchmarkOSExecSetsid(b *testing.B) {
	loop(b, func() error {
		c := exec.Command("/bin/true")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		return c.Run()
	})
}
