package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoad resolves all of Puppet's settings from a site's
// puppet.conf (richConf) and a command line, the host's name looked up as
// the real agent does.
func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	conf := filepath.Join(dir, "puppet.conf")
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(richConf, "VARDIR", dir)), 0o644); err != nil {
		b.Fatal(err)
	}
	a, err := ParseArgs([]string{"-t", "--noop", "--server", "puppet.example.org"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(conf, a.Settings); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLock takes and releases the run lock.
func BenchmarkLock(b *testing.B) {
	p := filepath.Join(b.TempDir(), "agent_catalog_run.lock")
	for b.Loop() {
		unlock, err := Lock(p)
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}
