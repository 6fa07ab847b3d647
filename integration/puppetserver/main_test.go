// Package puppetserver runs the built receiver against a real Puppet
// Server (Debian's puppetserver package): TestMain makes a CA and the
// server's certificate in a temporary confdir with `puppetserver ca
// setup`, an agent certificate with `puppetserver ca generate`, copies
// the agent's files into a temporary ssldir as the agent keeps them,
// starts the server on loopback on a free port with a temporary codedir
// holding a test module, and stops it when the package's tests are done.
// The server's access log tells which requests were made.
package puppetserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/internal/testutil"
)

var (
	receiverBin string
	srv         *server
	skipReason  string
)

// fixtures are run by startServer once the server's directories and its
// test module are written and before the CA is made and the JVM starts:
// a test file that needs more of the server (an environment's manifests,
// a module with plugins, a puppet.conf setting) registers one from its
// init function, keeping the harness itself unchanged.
var fixtures []func(s *server) error

// serverConf are blocks a test file adds to the server's
// puppetserver.conf (from its init or a fixture), such as versioned-code.
var serverConf []string

// server is the running Puppet Server and what the tests need of it.
type server struct {
	dir      string // the temporary root of everything
	port     int
	confFile string // the server's puppet.conf
	agentSSL string // the agent's ssldir (taken before any revocation)
	files    string // the test module's files directory
	access   string // the access log
	cmd      *exec.Cmd
	exited   chan error // receives the server's end
	started  time.Duration
}

// Where the package puts its programs (Debian's puppetserver 7).
const (
	puppetserverJar = "/usr/share/puppetserver/puppetserver.jar"
	servicesDir     = "/etc/puppet/puppetserver/services.d"
	packagedConfD   = "/etc/puppet/puppetserver/conf.d"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		skipReason = "the Puppet Server tests run as root (the server and its CA tools write as root)"
		fmt.Println("puppetserver: skipping:", skipReason)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "pippet-puppetserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "puppetserver:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if receiverBin, err = testutil.BuildReceiver(dir); err != nil {
		fmt.Fprintln(os.Stderr, "puppetserver: building the receiver:", err)
		return 1
	}
	s, err := startServer(dir)
	if s != nil {
		defer s.stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "puppetserver: starting the Puppet Server:", err)
		if s != nil {
			if b, _ := os.ReadFile(filepath.Join(s.dir, "server.log")); len(b) > 0 {
				os.Stderr.Write(tail(b, 4000))
			}
			if b, _ := os.ReadFile(filepath.Join(s.dir, "stdout.log")); len(b) > 0 {
				os.Stderr.Write(tail(b, 4000))
			}
		}
		return 1
	}
	fmt.Printf("puppetserver: the Puppet Server answered %.1fs after the JVM started (port %d)\n", s.started.Seconds(), s.port)
	srv = s
	return m.Run()
}

// The helpers shared with the other server package (testutil).
var (
	tail     = testutil.Tail
	freePort = testutil.FreePort
	write    = testutil.WriteFile
	copyFile = testutil.CopyFile
	ca       = testutil.PuppetserverCA
)

func startServer(dir string) (*server, error) {
	if _, err := exec.LookPath("puppetserver"); err != nil {
		return nil, fmt.Errorf("puppetserver is not installed (Debian's puppetserver package; .ci/run installs it): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, port: port, access: filepath.Join(dir, "access.log")}
	conf := filepath.Join(dir, "puppet")
	code := filepath.Join(dir, "code")
	s.confFile = filepath.Join(conf, "puppet.conf")
	s.files = filepath.Join(code, "environments", "production", "modules", "testmod", "files")
	// server and serverport let `puppetserver ca revoke` reach the CA
	// API of the running server.
	if err := write(s.confFile, fmt.Sprintf(`[main]
confdir = %[1]s/puppet
ssldir = %[1]s/puppet/ssl
certname = localhost
vardir = %[1]s/var
logdir = %[1]s/log
rundir = %[1]s/run
codedir = %[1]s/code
server = localhost
serverport = %[2]d
[server]
cadir = %[1]s/puppet/ca
`, dir, port)); err != nil {
		return nil, err
	}
	for _, d := range []string{"var", "log", "run", filepath.Join(code, "environments", "production", "manifests")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	for name, data := range map[string]string{
		"motd":          "Welcome from the Puppet Server\n",
		"tree/a":        "file a\n",
		"tree/sub/b":    "file b\n",
		"tree/sub/c/d":  "file d\n",
		"changing":      "first version\n",
		"permissioned":  "mode 0640\n",
		"list/fallback": "from the second source\n",
	} {
		if err := write(filepath.Join(s.files, name), data); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(filepath.Join(s.files, "permissioned"), 0o640); err != nil {
		return nil, err
	}
	for _, f := range fixtures {
		if err := f(s); err != nil {
			return nil, fmt.Errorf("a test fixture: %w", err)
		}
	}
	// The CA and the server's certificate (DNS:localhost), then an agent
	// certificate, made offline before the server runs.
	if err := ca(s.confFile, "setup"); err != nil {
		return nil, err
	}
	if err := ca(s.confFile, "generate", "--certname", "agent1", "--ca-client", "--force"); err != nil {
		return nil, err
	}
	// The agent's ssldir, as the agent keeps it.
	s.agentSSL = filepath.Join(dir, "agent-ssl")
	ssl := filepath.Join(conf, "ssl")
	for src, dst := range map[string]string{
		"certs/ca.pem":            "certs/ca.pem",
		"crl.pem":                 "crl.pem",
		"certs/agent1.pem":        "certs/agent1.pem",
		"private_keys/agent1.pem": "private_keys/agent1.pem",
	} {
		if err := copyFile(filepath.Join(ssl, src), filepath.Join(s.agentSSL, dst), 0o600); err != nil {
			return nil, err
		}
	}
	// The server's own configuration: the packaged one with every path
	// under dir, loopback only, one JRuby.
	confD := filepath.Join(dir, "conf.d")
	for _, f := range []string{"auth.conf", "ca.conf", "metrics.conf", "web-routes.conf"} {
		if err := copyFile(filepath.Join(packagedConfD, f), filepath.Join(confD, f), 0o644); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"conf.d/global.conf": fmt.Sprintf("global: { logging-config: %q }\n", filepath.Join(dir, "logback.xml")),
		"conf.d/webserver.conf": fmt.Sprintf(`webserver: {
    access-log-config: %q
    client-auth: want
    ssl-host: 127.0.0.1
    ssl-port: %d
}
`, filepath.Join(dir, "request-logging.xml"), port),
		"conf.d/puppetserver.conf": fmt.Sprintf(`jruby-puppet: {
    ruby-load-path: [/usr/lib/puppetserver/ruby/vendor_ruby]
    gem-home: %[1]q
    gem-path: [%[1]q, "/usr/lib/puppetserver/vendored-jruby-gems"]
    server-conf-dir: %[2]q
    server-code-dir: %[3]q
    server-var-dir: %[4]q
    server-run-dir: %[5]q
    server-log-dir: %[6]q
    max-active-instances: 1
}
http-client: {}
profiler: {}
`, filepath.Join(dir, "var", "jruby-gems"), conf, code, filepath.Join(dir, "var"), filepath.Join(dir, "run"), filepath.Join(dir, "log")) + strings.Join(serverConf, "\n"),
		"logback.xml": fmt.Sprintf(`<configuration><appender name="F" class="ch.qos.logback.core.FileAppender"><file>%s</file><encoder><pattern>%%d %%-5p [%%c{2}] %%m%%n</pattern></encoder></appender><root level="info"><appender-ref ref="F"/></root></configuration>
`, filepath.Join(dir, "server.log")),
		"request-logging.xml": fmt.Sprintf(`<configuration debug="false"><appender name="FILE" class="ch.qos.logback.core.FileAppender"><file>%s</file><append>true</append><immediateFlush>true</immediateFlush><encoder><pattern>%%h "%%r" %%s %%b %%D</pattern></encoder></appender><appender-ref ref="FILE" /></configuration>
`, s.access),
	}
	for name, data := range files {
		if err := write(filepath.Join(dir, name), data); err != nil {
			return nil, err
		}
	}
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	// Memory kept sane: the packaged default is -Xms1g -Xmx1g; one JRuby
	// serving files needs far less. JAVA_ARGS adds to (and may override)
	// these, as for the packaged service.
	args := []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djruby.logger.class=com.puppetlabs.jruby_utils.jruby.Slf4jLogger", "-Djruby.lib=/usr/share/jruby/lib"}
	args = append(args, strings.Fields(os.Getenv("JAVA_ARGS"))...)
	args = append(args, "-jar", puppetserverJar, "--config", confD, "--bootstrap-config", servicesDir)
	s.cmd = exec.Command("/usr/bin/java", args...)
	s.cmd.Dir = "/usr/share/puppetserver"
	s.cmd.Stdout, s.cmd.Stderr = out, out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return s, err
	}
	exited := make(chan error, 1)
	s.exited = exited
	go func() { exited <- s.cmd.Wait() }()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(6 * time.Minute)
	for {
		select {
		case err := <-exited:
			s.cmd, s.exited = nil, nil
			return s, fmt.Errorf("the server exited before it was ready: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/status/v1/simple", port))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.TrimSpace(string(b)) == "running" {
				s.started = time.Since(start)
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("the server did not answer within 6 minutes")
		}
	}
}

func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

// need skips a test when TestMain did not start the server.
func need(t testing.TB) *server {
	t.Helper()
	if srv == nil {
		t.Skip(skipReason)
	}
	return srv
}

// receiverArgs point the receiver at the test server with the agent's ssldir.
func (s *server) receiverArgs(ssldir string) []string {
	return []string{"--no-banner", "--server", "localhost", "--serverport", fmt.Sprint(s.port),
		"--ssldir", ssldir, "--certname", "agent1", "--environment", "production",
		"--http-timeout", "60s"}
}

// receive runs the receiver on the request lines and returns its answers.
func receive(t testing.TB, s *server, ssldir string, lines ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, append(s.receiverArgs(ssldir), "--state-dir", t.TempDir())...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("receiver: %v\n%s", err, errb.String())
		}
	}
	var answers []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		answers = append(answers, sc.Text())
	}
	if len(answers) != len(lines) {
		t.Fatalf("%d answers to %d requests:\n%s\nstderr:\n%s", len(answers), len(lines), out.String(), errb.String())
	}
	return answers
}

// settle waits until the access log holds at least want lines for
// endpoint and path (the server writes a line once the answer is sent,
// so it may trail the receiver's answer), then a moment more for any
// line that may follow; it returns the count.
func (s *server) settle(t testing.TB, endpoint, path string, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.requests(t, endpoint, path) < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	return s.requests(t, endpoint, path)
}

// requests counts the access log's lines for endpoint (file_metadata,
// file_metadatas, file_content) and a path below the module's files.
func (s *server) requests(t testing.TB, endpoint, path string) int {
	t.Helper()
	b, err := os.ReadFile(s.access)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"GET /puppet/v3/` + endpoint + `/modules/testmod/` + regexp.QuoteMeta(path) + `(\?| )`)
	return len(re.FindAll(b, -1))
}
