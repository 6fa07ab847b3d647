package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/protocol"
)

// serviceScripts writes a status command (the service runs while its pid
// file exists) and makes the service running.
func serviceScripts(b *testing.B) (status string) {
	dir := b.TempDir()
	pid := filepath.Join(dir, "pid")
	status = filepath.Join(dir, "status")
	if err := os.WriteFile(status, []byte("#!/bin/sh\ntest -e "+pid+"\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(pid, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return status
}

// BenchmarkServiceUnchanged is an unchanged, running service whose status
// is its status command (base provider). BenchmarkServiceStatusFloor runs
// that status command alone, as os/exec runs it: the least any service
// check costs.
func BenchmarkServiceUnchanged(b *testing.B) {
	status := serviceScripts(b)
	e := newEngine(b)
	req := &protocol.Request{Type: "service", Title: "benchsvc", Params: map[string]any{
		"ensure": "running", "provider": "base", "status": status, "start": "/bin/true"}}
	b.ReportAllocs()
	reportCPU(b)
	reportChildrenCPU(b)
	for b.Loop() {
		res := e.Apply(context.Background(), req)
		if res.Failed || res.Changed {
			b.Fatalf("%+v", res)
		}
	}
}

func BenchmarkServiceStatusFloor(b *testing.B) {
	status := serviceScripts(b)
	b.ReportAllocs()
	reportCPU(b)
	reportChildrenCPU(b)
	for b.Loop() {
		if err := exec.Command(status).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// reportChildrenCPU adds cpu+children-ns/op: the CPU time per iteration
// of this process and of the commands it ran and reaped (the status
// command's shell), the whole cost of a status check. Call it first.
func reportChildrenCPU(b *testing.B) {
	cpu := func(who int) time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(who, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu(syscall.RUSAGE_SELF) + cpu(syscall.RUSAGE_CHILDREN)
	b.Cleanup(func() {
		if b.N > 0 {
			used := cpu(syscall.RUSAGE_SELF) + cpu(syscall.RUSAGE_CHILDREN) - start
			b.ReportMetric(float64(used)/float64(b.N), "cpu+children-ns/op")
		}
	})
}
