// Package puppetdb compares what PuppetDB holds of a node run by
// `receiver agent` with what it holds of a node run by `puppet agent`,
// both against the same Puppet Server, member by member, through
// PuppetDB's query API (/pdb/query/v4).
//
// TestMain builds the whole site in a temporary directory and takes it
// down when the tests are done, leaving nothing running:
//
//   - PostgreSQL (Debian's postgresql, its version's initdb and pg_ctl):
//     a cluster of its own on a free loopback port, its socket in the
//     temporary directory, run as the postgres account; the puppetdb
//     database with the pg_trgm extension PuppetDB requires;
//   - a CA and the server's certificate (DNS:localhost) made by
//     `puppetserver ca setup`, and one certificate for each node;
//   - PuppetDB (Debian's puppetdb): its jar started with a configuration
//     of its own, serving https only, on loopback, with the CA's
//     certificates (the terminus refuses plain HTTP);
//   - Puppet Server (Debian's puppetserver) with Debian's PuppetDB
//     terminus (puppet-terminus-puppetdb): storeconfigs_backend puppetdb,
//     reports store and puppetdb, the facts routed to PuppetDB
//     (routes.yaml), puppetdb.conf naming PuppetDB's https URL.
//
// The two JVMs start side by side: on a loaded two-core machine each
// takes one to three minutes.
package puppetdb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pippet/pippet/internal/testutil"
)

var (
	receiverBin string
	site        *pdbSite
	skipReason  string
)

// pdbSite is the running site.
type pdbSite struct {
	dir        string
	serverPort int
	pdbPort    int
	pgPort     int
	confFile   string // the Puppet Server's puppet.conf
	ssl        string // the server's ssldir (the CA's certificates)
	pgData     string
	pgBin      string
	procs      []*jvm
	pg         *jvm         // the postmaster
	client     *http.Client // PuppetDB's query API, with the server's certificate
}

// jvm is one Java process of the site.
type jvm struct {
	name   string
	cmd    *exec.Cmd
	exited chan error
	log    string
}

// Where Debian's packages put their programs.
const (
	puppetserverJar = "/usr/share/puppetserver/puppetserver.jar"
	servicesDir     = "/etc/puppet/puppetserver/services.d"
	packagedConfD   = "/etc/puppet/puppetserver/conf.d"
	puppetdbJar     = "/usr/share/puppetdb/puppetdb.jar"
	puppetdbBoot    = "/etc/puppetdb/bootstrap.cfg"
	puppetdbAuth    = "/etc/puppetdb/conf.d/auth.conf"
	terminus        = "/usr/lib/ruby/vendor_ruby/puppet/reports/puppetdb.rb"
	hostCore        = "/usr/share/puppet/modules/host_core" // Debian's puppet-module-puppetlabs-host-core
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		skipReason = "the PuppetDB tests run as root (PostgreSQL runs as its own account, the CA tools write as root)"
		fmt.Println("puppetdb: skipping:", skipReason)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "pippet-puppetdb-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "puppetdb:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "puppetdb:", err)
		return 1
	}
	built := make(chan error, 1)
	go func() {
		var err error
		receiverBin, err = testutil.BuildReceiver(dir)
		built <- err
	}()
	s := &pdbSite{dir: dir}
	defer s.stop()
	start := time.Now()
	if err := s.start(); err != nil {
		fmt.Fprintln(os.Stderr, "puppetdb: starting the site:", err)
		for _, p := range s.procs {
			if b, _ := os.ReadFile(p.log); len(b) > 0 {
				fmt.Fprintf(os.Stderr, "--- %s's log:\n%s\n", p.name, tail(b, 4000))
			}
		}
		return 1
	}
	if err := <-built; err != nil {
		fmt.Fprintln(os.Stderr, "puppetdb: building the receiver:", err)
		return 1
	}
	fmt.Printf("puppetdb: PostgreSQL, PuppetDB and the Puppet Server answered %.1fs after the start (PuppetDB on %d, the server on %d)\n",
		time.Since(start).Seconds(), s.pdbPort, s.serverPort)
	site = s
	return m.Run()
}

// need skips a test when TestMain did not start the site.
func need(t testing.TB) *pdbSite {
	t.Helper()
	if site == nil {
		t.Skip(skipReason)
	}
	return site
}

// The helpers shared with the other server package (testutil).
var (
	tail     = testutil.Tail
	freePort = testutil.FreePort
	write    = testutil.WriteFile
	copyFile = testutil.CopyFile
	ca       = testutil.PuppetserverCA
)

// pgBinDir is the newest installed PostgreSQL's program directory.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	best, bestV := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		if err == nil && v > bestV {
			best, bestV = filepath.Dir(d), v
		}
	}
	if best == "" {
		return "", errors.New("PostgreSQL is not installed (Debian's postgresql package; .ci/run installs it)")
	}
	return best, nil
}

// asPostgres runs a PostgreSQL program as the postgres account.
func asPostgres(ctx context.Context, name string, args ...string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("the postgres account: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=" + u.HomeDir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return nil
}

// startPostgres makes and starts the cluster and the puppetdb database.
func (s *pdbSite) startPostgres(ctx context.Context) error {
	bin, err := pgBinDir()
	if err != nil {
		return err
	}
	s.pgBin = bin
	if s.pgPort, err = freePort(); err != nil {
		return err
	}
	pg := filepath.Join(s.dir, "pg")
	if err := os.MkdirAll(pg, 0o700); err != nil {
		return err
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("the postgres account: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(pg, uid, gid); err != nil {
		return err
	}
	s.pgData = filepath.Join(pg, "data")
	if err := asPostgres(ctx, filepath.Join(bin, "initdb"), "-D", s.pgData, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		return err
	}
	// The postmaster runs as the test's child (not pg_ctl's daemon): it
	// dies with the test binary, however that ends.
	logf, err := os.Create(filepath.Join(pg, "postgres.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", s.pgData, "-p", strconv.Itoa(s.pgPort), "-k", pg,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL,
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting PostgreSQL: %w", err)
	}
	s.pg = &jvm{name: "postgres", cmd: cmd, exited: make(chan error, 1), log: logf.Name()}
	go func() { s.pg.exited <- cmd.Wait() }()
	for i := 0; ; i++ {
		if asPostgres(ctx, filepath.Join(bin, "pg_isready"), "-q", "-h", pg, "-p", strconv.Itoa(s.pgPort)) == nil {
			break
		}
		select {
		case err := <-s.pg.exited:
			s.pg.exited <- err
			b, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("PostgreSQL exited: %v\n%s", err, b)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	psql := func(db, sql string) error {
		return asPostgres(ctx, filepath.Join(bin, "psql"), "-q", "-v", "ON_ERROR_STOP=1", "-h", pg, "-p", strconv.Itoa(s.pgPort), "-U", "postgres", "-d", db, "-c", sql)
	}
	if err := psql("postgres", "CREATE USER puppetdb PASSWORD 'puppetdb'"); err != nil {
		return err
	}
	if err := psql("postgres", "CREATE DATABASE puppetdb OWNER puppetdb"); err != nil {
		return err
	}
	return psql("puppetdb", "CREATE EXTENSION pg_trgm")
}

// stopPostgres stops the postmaster (SIGQUIT: immediate shutdown; the
// cluster is thrown away) and waits for it and its backends.
func (s *pdbSite) stopPostgres() {
	if s.pg == nil {
		return
	}
	_ = syscall.Kill(-s.pg.cmd.Process.Pid, syscall.SIGQUIT)
	select {
	case <-s.pg.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.pg.cmd.Process.Pid, syscall.SIGKILL)
		<-s.pg.exited
	}
}

func (s *pdbSite) start() error {
	for _, f := range []string{puppetserverJar, puppetdbJar, terminus, hostCore} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s is missing (Debian's puppetserver, puppetdb and puppet-terminus-puppetdb; .ci/run installs them): %w", f, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	if s.serverPort, err = freePort(); err != nil {
		return err
	}
	if s.pdbPort, err = freePort(); err != nil {
		return err
	}
	pgDone := make(chan error, 1)
	go func() { pgDone <- s.startPostgres(ctx) }()
	if err := s.serverFiles(); err != nil {
		<-pgDone
		return err
	}
	if err := ca(s.confFile, "setup"); err != nil {
		<-pgDone
		return err
	}
	for _, n := range []string{pippetNode, puppetNode} {
		if err := ca(s.confFile, "generate", "--certname", n, "--ca-client", "--force"); err != nil {
			<-pgDone
			return err
		}
	}
	if err := <-pgDone; err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	if err := s.startPuppetDB(); err != nil {
		return err
	}
	if err := s.startServer(); err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(s.ssl, "certs", "ca.pem"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(filepath.Join(s.ssl, "certs", "localhost.pem"), filepath.Join(s.ssl, "private_keys", "localhost.pem"))
	if err != nil {
		return err
	}
	s.client = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost"}}}
	// Both answer their status; PuppetDB's own answers with a client
	// certificate only.
	for _, p := range []struct {
		name, url string
	}{
		{"PuppetDB", fmt.Sprintf("https://localhost:%d/status/v1/simple", s.pdbPort)},
		{"the Puppet Server", fmt.Sprintf("https://localhost:%d/status/v1/simple", s.serverPort)},
	} {
		if err := s.waitRunning(ctx, p.name, p.url); err != nil {
			return err
		}
	}
	return nil
}

// waitRunning waits for url to answer "running" while every JVM lives.
func (s *pdbSite) waitRunning(ctx context.Context, name, url string) error {
	for {
		for _, p := range s.procs {
			select {
			case err := <-p.exited:
				p.exited <- err
				return fmt.Errorf("%s exited before it was ready: %v", p.name, err)
			default:
			}
		}
		resp, err := s.client.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.TrimSpace(string(b)) == "running" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer in time: %w", name, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// serverFiles writes the Puppet Server's configuration: the harness of
// integration/puppetserver with PuppetDB's terminus and the site's code.
func (s *pdbSite) serverFiles() error {
	dir := s.dir
	conf := filepath.Join(dir, "puppet")
	code := filepath.Join(dir, "code")
	s.confFile = filepath.Join(conf, "puppet.conf")
	s.ssl = filepath.Join(conf, "ssl")
	files := map[string]string{
		"puppet/puppet.conf": fmt.Sprintf(`[main]
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
storeconfigs = true
storeconfigs_backend = puppetdb
reports = store,puppetdb
`, dir, s.serverPort),
		"puppet/puppetdb.conf":                           fmt.Sprintf("[main]\nserver_urls = https://localhost:%d\nsoft_write_failure = false\n", s.pdbPort),
		"puppet/routes.yaml":                             "---\nserver:\n  facts:\n    terminus: puppetdb\n    cache: yaml\n",
		"code/environments/production/manifests/site.pp": sitePP(dir),
		// Only the environment's own modules (host_core, for the host
		// type): no other module of the host's basemodulepath comes with
		// pluginsync.
		"code/environments/production/environment.conf": "modulepath = modules\n",
		"conf.d/global.conf":                            fmt.Sprintf("global: { logging-config: %q }\n", filepath.Join(dir, "logback.xml")),
		"conf.d/webserver.conf": fmt.Sprintf(`webserver: {
    client-auth: want
    ssl-host: 127.0.0.1
    ssl-port: %d
}
`, s.serverPort),
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
`, filepath.Join(dir, "var", "jruby-gems"), conf, code, filepath.Join(dir, "var"), filepath.Join(dir, "run"), filepath.Join(dir, "log")),
		"logback.xml": logback(filepath.Join(dir, "server.log")),
	}
	for name, data := range files {
		if err := write(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	for _, d := range []string{"var", "log", "run", "nodes"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for _, f := range []string{"auth.conf", "ca.conf", "metrics.conf", "web-routes.conf"} {
		if err := copyFile(filepath.Join(packagedConfD, f), filepath.Join(dir, "conf.d", f), 0o644); err != nil {
			return err
		}
	}
	modules := filepath.Join(code, "environments", "production", "modules")
	if err := os.MkdirAll(modules, 0o755); err != nil {
		return err
	}
	return os.Symlink(hostCore, filepath.Join(modules, "host_core"))
}

func logback(file string) string {
	return fmt.Sprintf(`<configuration><appender name="F" class="ch.qos.logback.core.FileAppender"><file>%s</file><encoder><pattern>%%d %%-5p [%%c{2}] %%m%%n</pattern></encoder></appender><root level="info"><appender-ref ref="F"/></root></configuration>
`, file)
}

// startJVM starts java with args in a process group of its own.
func (s *pdbSite) startJVM(name, dir string, args ...string) error {
	logf := filepath.Join(s.dir, name+"-stdout.log")
	out, err := os.Create(logf)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command("/usr/bin/java", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &jvm{name: name, cmd: cmd, exited: make(chan error, 1), log: logf}
	go func() { p.exited <- cmd.Wait() }()
	s.procs = append(s.procs, p)
	return nil
}

// jvmArgs keep each JVM small and quick to start.
var jvmArgs = []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.security.egd=/dev/urandom"}

func (s *pdbSite) startPuppetDB() error {
	pdb := filepath.Join(s.dir, "puppetdb")
	confD := filepath.Join(pdb, "conf.d")
	files := map[string]string{
		"conf.d/config.ini": fmt.Sprintf(`[global]
vardir = %[1]s/var
logging-config = %[1]s/logback.xml
[database]
subname = //127.0.0.1:%[2]d/puppetdb
username = puppetdb
password = puppetdb
[jetty]
ssl-host = 127.0.0.1
ssl-port = %[3]d
ssl-key = %[4]s/private_keys/localhost.pem
ssl-cert = %[4]s/certs/localhost.pem
ssl-ca-cert = %[4]s/certs/ca.pem
[nrepl]
enabled = false
`, pdb, s.pgPort, s.pdbPort, s.ssl),
		"logback.xml": logback(filepath.Join(s.dir, "puppetdb.log")),
	}
	for name, data := range files {
		if err := write(filepath.Join(pdb, name), data); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(pdb, "var"), 0o755); err != nil {
		return err
	}
	if err := copyFile(puppetdbAuth, filepath.Join(confD, "auth.conf"), 0o644); err != nil {
		return err
	}
	args := append(append([]string{}, jvmArgs...), "-cp", puppetdbJar, "clojure.main", "-m", "puppetlabs.puppetdb.core", "services",
		"--config", confD, "--bootstrap-config", puppetdbBoot)
	return s.startJVM("puppetdb", "/", args...)
}

func (s *pdbSite) startServer() error {
	args := append(append([]string{}, jvmArgs...), "-Djruby.logger.class=com.puppetlabs.jruby_utils.jruby.Slf4jLogger", "-Djruby.lib=/usr/share/jruby/lib",
		"-jar", puppetserverJar, "--config", filepath.Join(s.dir, "conf.d"), "--bootstrap-config", servicesDir)
	return s.startJVM("puppetserver", "/usr/share/puppetserver", args...)
}

// stop stops the JVMs and PostgreSQL: nothing of the site keeps running.
func (s *pdbSite) stop() {
	for _, p := range s.procs {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	for _, p := range s.procs {
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
	}
	s.stopPostgres()
}

// query asks PuppetDB's query API (path below /pdb/query/v4) and decodes
// the answer into v.
func (s *pdbSite) query(t testing.TB, path string, v any) {
	t.Helper()
	resp, err := s.client.Get(fmt.Sprintf("https://localhost:%d/pdb/query/v4%s", s.pdbPort, path))
	if err != nil {
		t.Fatalf("PuppetDB %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PuppetDB %s: %s %v\n%s", path, resp.Status, err, b)
	}
	if err := decode(b, v); err != nil {
		t.Fatalf("PuppetDB %s: %v\n%s", path, err, b)
	}
}
