package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The small helpers the packages that start real servers (a Puppet
// Server, PuppetDB) share.

// Tail is the last n bytes of b (all of it when shorter): a server's
// log quoted in a failure.
func Tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// FreePort is a TCP port free on loopback when asked.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WriteFile writes data to path (mode 0644), making its directories.
func WriteFile(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), 0o644)
}

// CopyFile copies src to dst with mode, making dst's directories.
func CopyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

// PuppetserverCA runs `puppetserver ca ARGS --config conf`.
func PuppetserverCA(conf string, args ...string) error {
	cmd := exec.Command("puppetserver", append([]string{"ca"}, append(args, "--config", conf)...)...)
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("puppetserver ca %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// DiffHeader leaves out of a diff's header line what differs from run to
// run: the time (diff -u's, after a tab) and the new side's name
// (Puppet's temporary file, pippet's "PATH (new)"). Other lines are
// returned as they are.
func DiffHeader(line string) string {
	if !strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "+++ ") {
		return line
	}
	if strings.HasPrefix(line, "+++ ") {
		return "+++ NEW\tTIME"
	}
	if i := strings.IndexByte(line, '\t'); i > 0 {
		return line[:i] + "\tTIME"
	}
	return line
}
