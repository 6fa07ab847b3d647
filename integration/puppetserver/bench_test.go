package puppetserver

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pippet/pippet/agent/ssl"
)

// BenchmarkUnchangedPuppetFile: one receiver, one unchanged puppet://
// file per op, through its stdin and stdout (one metadata request on the
// kept connection each), interleaved with the floor: the same
// file_metadata request, same headers, with Go's client on a kept
// connection with the agent's certificate (what the server itself
// costs). Interleaving keeps the ratio fair on a machine whose load
// moves; both are reported per op (receiver-ns/op, floor-ns/op).
func BenchmarkUnchangedPuppetFile(b *testing.B) {
	s := need(b)
	dst := filepath.Join(b.TempDir(), "motd")
	cmd := exec.Command(receiverBin, append(s.receiverArgs(s.agentSSL), "--state-dir", b.TempDir())...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	req := fileReq(1, dst, "{source: 'puppet:///modules/testmod/motd'}") + "\n"
	roundTrip := func() string {
		if _, err := io.WriteString(in, req); err != nil {
			b.Fatal(err)
		}
		line, err := out.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}

	cfg, err := ssl.Files{Dir: s.agentSSL, Certname: "agent1"}.TLSConfig()
	if err != nil {
		b.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	u := fmt.Sprintf("https://localhost:%d/puppet/v3/file_metadata/modules/testmod/motd?checksum_type=sha256&environment=production&links=follow&source_permissions=ignore", s.port)
	hreq, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.Fatal(err)
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("Accept-Encoding", "identity")
	hreq.Header.Set("User-Agent", "pippet")
	get := func() {
		resp, err := c.Do(hreq)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}

	before := s.settle(b, "file_content", "motd", 0)
	if a := roundTrip(); !strings.Contains(a, `"failed":false`) {
		b.Fatal(a)
	}
	get()
	content0 := s.settle(b, "file_content", "motd", before+1)
	var recv, floor time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		a := roundTrip()
		t1 := time.Now()
		get()
		recv += t1.Sub(t0)
		floor += time.Since(t1)
		if !strings.Contains(a, `"changed":false`) || !strings.Contains(a, `"failed":false`) {
			b.Fatal(a)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(recv.Nanoseconds())/float64(b.N), "receiver-ns/op")
	b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(recv)/float64(floor), "receiver/floor")
	if n := s.settle(b, "file_content", "motd", content0); n != content0 {
		b.Fatalf("%d content requests for an unchanged file", n-content0)
	}
}

// BenchmarkPuppetApplyReference: `puppet apply` of the same file
// resource against the same server (Puppet starts, compiles, fetches the
// metadata); the file is unchanged. `--default_file_terminus rest`: apply
// otherwise serves puppet:/// from its own modulepath. Slow: a few
// seconds an op.
func BenchmarkPuppetApplyReference(b *testing.B) {
	s := need(b)
	if _, err := exec.LookPath("puppet"); err != nil {
		b.Skip("puppet is not installed")
	}
	dir := b.TempDir()
	dst := filepath.Join(dir, "motd")
	manifest := fmt.Sprintf("file { %q: source => 'puppet:///modules/testmod/motd' }", dst)
	args := []string{"apply", "--confdir", filepath.Join(dir, "conf"), "--vardir", filepath.Join(dir, "var"),
		"--codedir", filepath.Join(dir, "code"), "--ssldir", s.agentSSL, "--certname", "agent1",
		"--server", "localhost", "--serverport", fmt.Sprint(s.port), "--environment", "production",
		"--default_file_terminus", "rest", "-e", manifest}
	var out []byte
	run := func() {
		cmd := exec.Command("puppet", append(args, "--detailed-exitcodes")...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		var err error
		out, err = cmd.CombinedOutput()
		// 0: nothing changed, 2: changed; 4 and 6: a failure.
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 2) {
			b.Fatalf("puppet apply: %v\n%s", err, out)
		}
	}
	run()
	if bs, err := os.ReadFile(dst); err != nil || string(bs) != "Welcome from the Puppet Server\n" {
		b.Fatalf("puppet apply did not fetch the file: %q %v\n%s", bs, err, out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
}
