package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SSHServer is a real OpenSSH server on a loopback port, with a host key
// and a client key made for the test, letting root in by that key only.
type SSHServer struct {
	Port    int
	Key     string // the client's private key
	Known   string // a known_hosts file holding the server's key
	Workdir string // a temporary directory of the test
	cmd     *exec.Cmd
}

func StartSSHD(t *testing.T) *SSHServer {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs sshd, which needs root")
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("sshd is missing: install Debian's openssh-server (.ci/run does): %v", err)
	}
	dir := t.TempDir()
	s := &SSHServer{Key: filepath.Join(dir, "id"), Known: filepath.Join(dir, "known_hosts"), Workdir: dir}
	for _, k := range []string{filepath.Join(dir, "host"), s.Key} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	pub, err := os.ReadFile(s.Key + ".pub")
	require.NoError(t, err)
	auth := filepath.Join(dir, "authorized_keys")
	require.NoError(t, os.WriteFile(auth, pub, 0o600))
	hostPub, err := os.ReadFile(filepath.Join(dir, "host.pub"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll("/run/sshd", 0o755)) // sshd's privilege separation directory

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	require.NoError(t, os.WriteFile(s.Known, []byte(fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, hostPub)), 0o600))
	s.cmd = exec.Command(sshd, "-D", "-e", "-f", "/dev/null", "-p", strconv.Itoa(s.Port),
		"-o", "ListenAddress=127.0.0.1", "-h", filepath.Join(dir, "host"),
		"-o", "AuthorizedKeysFile="+auth, "-o", "PermitRootLogin=prohibit-password",
		"-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no",
		"-o", "UsePAM=no", "-o", "StrictModes=no", "-o", "PidFile=none", "-o", "LogLevel=ERROR")
	logs := &SyncBuffer{}
	s.cmd.Stderr = logs
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		if t.Failed() {
			t.Logf("sshd's log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
		if err == nil {
			c.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "sshd did not listen: %v", err)
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// Command is the argv that runs remote on this "host" as root over ssh.
func (s *SSHServer) Command(remote ...string) []string {
	return append([]string{"ssh", "-p", strconv.Itoa(s.Port), "-i", s.Key,
		"-o", "UserKnownHostsFile=" + s.Known, "-o", "StrictHostKeyChecking=yes",
		"-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-T", "root@127.0.0.1"}, remote...)
}
