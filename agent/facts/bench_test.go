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

// BenchmarkGatherCustomFact gathers with one Ruby custom fact whose
// command takes no time, cached by facts.ttls (no Ruby starts) and not
// (NoCache: one Facter process each time): what Facter's cache saves a
// run, the fact's own command aside.
func BenchmarkGatherCustomFact(b *testing.B) {
	if exec.Command("ruby", "-e", "require 'facter'").Run() != nil {
		b.Skip("Ruby cannot load Facter")
	}
	dir, cache := b.TempDir(), filepath.Join(b.TempDir(), "facts")
	src := "Facter.add(:bench_cached) { setcode { Facter::Core::Execution.execute('echo hello') } }\n"
	conf := filepath.Join(b.TempDir(), "facter.conf")
	for p, data := range map[string]string{filepath.Join(dir, "bench_cached.rb"): src, conf: `facts : { ttls : [ { "bench_cached" : 1 hour } ] }`} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		noCache bool
	}{{"cached", false}, {"uncached", true}} {
		b.Run(c.name, func(b *testing.B) {
			o := facts.Options{CustomDirs: []string{dir}, ExternalDirs: []string{}, FacterConf: conf, CacheDir: cache, NoCache: c.noCache}
			ctx := context.Background()
			facts.Gather(ctx, o) // fills the cache
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if f, errs := facts.Gather(ctx, o); f["bench_cached"] != "hello" {
					b.Fatal(f["bench_cached"], errs)
				}
			}
		})
	}
}

// BenchmarkGatherBesideSlowRuby gathers the facts of a factpath that
// holds Debian's apt module's apt_updates.rb and apt_sources.rb (known:
// apt-get -s upgrade and dist-upgrade, run natively) and a file pippet
// does not know whose fact takes 2 s without using the processor (a DNS
// lookup that times out, as ipaclient's may): the native facts do not
// wait for Facter, so a gathering takes about the longer of the two,
// not their sum.
func BenchmarkGatherBesideSlowRuby(b *testing.B) {
	if exec.Command("ruby", "-e", "require 'facter'").Run() != nil {
		b.Skip("Ruby cannot load Facter")
	}
	dir := b.TempDir()
	for _, f := range []string{"apt_updates.rb", "apt_sources.rb"} {
		src, err := os.ReadFile(filepath.Join(debianModules, "apt", "lib", "facter", f))
		if err != nil {
			b.Skipf("Debian's apt module (installed by .ci/run): %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	slow := "Facter.add(:site_slow) { setcode { sleep 2; 'slow' } }\n"
	if err := os.WriteFile(filepath.Join(dir, "site_slow.rb"), []byte(slow), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		f, _ := facts.Gather(ctx, facts.Options{ExternalDirs: []string{}, CustomDirs: []string{dir}})
		if f["apt_sources"] == nil || f["site_slow"] != "slow" {
			b.Fatal("facts missing")
		}
	}
}
