package bench

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A converged file_line or ini_setting costs a read of its file and a
// look at its lines (issue 25: within 2 x a plain read of the same file).
// Each is re-sent as the receiver re-sends a line it has seen (the
// session's kept request, see resent); the floor reads the same file with
// os.ReadFile.

// sshdConfig is a 41-line config file, like a small sshd_config.
func sshdConfig(b *testing.B) string {
	var s strings.Builder
	for i := range 40 {
		s.WriteString("Option" + string(rune('A'+i%26)) + strings.Repeat("x", i%7) + " value number " + strconv.Itoa(i) + "\n")
	}
	s.WriteString("PermitRootLogin no\n")
	p := filepath.Join(b.TempDir(), "sshd_config")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// iniFile is an INI file of 4 sections of 10 settings.
func iniFile(b *testing.B) string {
	var s strings.Builder
	s.WriteString("; generated\n")
	for i := range 4 {
		s.WriteString("[section" + strconv.Itoa(i) + "]\n")
		for j := range 10 {
			s.WriteString("key" + strconv.Itoa(j) + " = value " + strconv.Itoa(i*10+j) + "\n")
		}
		s.WriteString("\n")
	}
	p := filepath.Join(b.TempDir(), "config.ini")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchUnchanged(b *testing.B, line string) {
	s, req := resent(b, newEngine(b), []byte(line))
	ctx := context.Background()
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		if res := s.Apply(ctx, req); res.Changed || res.Failed || res.Error {
			b.Fatalf("%+v", res)
		}
	}
}

func benchRead(b *testing.B, p string) {
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFileLineUnchanged: the line is there, found by its match.
func BenchmarkFileLineUnchanged(b *testing.B) {
	benchUnchanged(b, `{"type":"file_line","title":"root","params":"{path: '`+sshdConfig(b)+`', line: 'PermitRootLogin no', match: '^#?PermitRootLogin'}"}`)
}

func BenchmarkFileLineReadFloor(b *testing.B) { benchRead(b, sshdConfig(b)) }

// BenchmarkIniSettingUnchanged: the setting has its value.
func BenchmarkIniSettingUnchanged(b *testing.B) {
	benchUnchanged(b, `{"type":"ini_setting","title":"k","params":"{path: '`+iniFile(b)+`', section: section2, setting: key5, value: 'value 25'}"}`)
}

func BenchmarkIniSettingReadFloor(b *testing.B) { benchRead(b, iniFile(b)) }
