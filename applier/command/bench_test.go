package command_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/pippet/pippet/applier/command"
)

// BenchmarkRun is one short command through the runner; BenchmarkOSExec
// is the same command through os/exec alone.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		if _, err := command.Run(context.Background(), &command.Cmd{Argv: []string{"/bin/true"}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOSExec(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
