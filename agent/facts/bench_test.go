package facts_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pippet/pippet/agent/facts"
)

// BenchmarkGather gathers this machine's core facts (no facts.d
// directories, so no scripts run): what an agent run pays for its facts.
func BenchmarkGather(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		f, _ := facts.Gather(ctx, facts.Options{ExternalDirs: []string{}})
		if f["os"] == nil {
			b.Fatal("no os fact")
		}
	}
}

// BenchmarkLoadCustom evaluates one directory of three custom facts with
// the installed Facter: the Ruby process an agent run with custom facts
// pays for, on top of Gather.
func BenchmarkLoadCustom(b *testing.B) {
	if exec.Command("ruby", "-e", "require 'facter'").Run() != nil {
		b.Skip("Ruby cannot load Facter")
	}
	dir := b.TempDir()
	for _, n := range []string{"one", "two", "three"} {
		src := "Facter.add(:bench_" + n + ") { setcode { Facter.value(:kernel).to_s + '-" + n + "' } }\n"
		if err := os.WriteFile(filepath.Join(dir, n+".rb"), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		f, _, errs := facts.LoadCustom(ctx, []string{dir}, "", 0)
		if len(errs) > 0 || f["bench_two"] != "Linux-two" {
			b.Fatal(f, errs)
		}
	}
}
