package agent

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/config"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/internal/puppetlog"
)

// fakeServer is a Puppet Server for one certname: a CA of its own, the
// status, catalog, report and facts endpoints; what it was asked is kept.
type fakeServer struct {
	srv *httptest.Server
	// status is what /status/v1/simple/server answers (200 when 0).
	status int
	// catalog is the catalog's JSON; hang: the catalog request never
	// answers (until the client gives up).
	catalog string
	hang    bool

	mu       sync.Mutex
	requests []string
	reports  [][]byte
	facts    [][]byte
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.URL.Path == "/status/v1/simple/server":
		if f.status != 0 {
			w.WriteHeader(f.status)
			return
		}
		io.WriteString(w, "running")
	case strings.HasPrefix(r.URL.Path, "/puppet/v3/catalog/"):
		if f.hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, f.catalog)
	case strings.HasPrefix(r.URL.Path, "/puppet/v3/report/"):
		f.mu.Lock()
		f.reports = append(f.reports, body)
		f.mu.Unlock()
		io.WriteString(w, "[]")
	case strings.HasPrefix(r.URL.Path, "/puppet/v3/facts/"):
		f.mu.Lock()
		f.facts = append(f.facts, body)
		f.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeServer) port() int { return f.srv.Listener.Addr().(*net.TCPAddr).Port }

func (f *fakeServer) asked(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate for certname, written into ssldir as Puppet's.
type testPKI struct {
	caCert    *x509.Certificate
	caKey     *ecdsa.PrivateKey
	serverTLS tls.Certificate
}

func newPKI(t *testing.T, ssldir, certname string) *testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	p := &testPKI{caKey: key()}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Puppet CA: test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &p.caKey.PublicKey, p.caKey)
	require.NoError(t, err)
	p.caCert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	issue := func(serial int64, cn string, k *ecdsa.PrivateKey, usage x509.ExtKeyUsage, ips ...net.IP) []byte {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: ips, DNSNames: []string{cn},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &k.PublicKey, p.caKey)
		require.NoError(t, err)
		return der
	}
	sk := key()
	p.serverTLS = tls.Certificate{Certificate: [][]byte{issue(2, "localhost", sk, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))}, PrivateKey: sk}
	ck := key()
	clientDER := issue(3, certname, ck, x509.ExtKeyUsageClientAuth)
	kder, err := x509.MarshalPKCS8PrivateKey(ck)
	require.NoError(t, err)
	for _, f := range []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{
		{"certs/ca.pem", "CERTIFICATE", p.caCert.Raw, 0o644},
		{"certs/" + certname + ".pem", "CERTIFICATE", clientDER, 0o644},
		{"private_keys/" + certname + ".pem", "PRIVATE KEY", kder, 0o600},
	} {
		path := filepath.Join(ssldir, f.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), f.mode))
	}
	return p
}

// start serves f over TLS with the PKI's server certificate.
func (p *testPKI) start(t *testing.T, f *fakeServer) *fakeServer {
	t.Helper()
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverTLS}, ClientAuth: tls.RequestClientCert}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

// closedPort is a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// agentEnv is an agent's directories and its settings.
type agentEnv struct {
	dir, ssldir string
	pki         *testPKI
	certname    string
}

func newAgentEnv(t *testing.T, certname string) *agentEnv {
	dir := t.TempDir()
	e := &agentEnv{dir: dir, ssldir: filepath.Join(dir, "ssl"), certname: certname}
	e.pki = newPKI(t, e.ssldir, certname)
	return e
}

// settings loads the agent's settings: its directories, no pluginsync,
// no CRL, then extra name=value pairs.
func (e *agentEnv) settings(t *testing.T, extra ...string) *config.Settings {
	t.Helper()
	conf := filepath.Join(e.dir, "puppet.conf")
	require.NoError(t, os.WriteFile(conf, []byte("[agent]\n"), 0o644))
	o := map[string]string{
		"confdir": e.dir, "vardir": filepath.Join(e.dir, "var"), "ssldir": e.ssldir,
		"rundir": filepath.Join(e.dir, "run"), "logdir": filepath.Join(e.dir, "log"),
		"publicdir": filepath.Join(e.dir, "public"), "codedir": filepath.Join(e.dir, "code"),
		"certname": e.certname, "pluginsync": "false", "certificate_revocation": "false",
		"server": "127.0.0.1", "environment": "production",
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		o[k] = v
	}
	s, err := config.Load(conf, o)
	require.NoError(t, err)
	return s
}

// run runs the agent and returns its exit status and output.
func (e *agentEnv) run(t *testing.T, s *config.Settings) (int, string) {
	t.Helper()
	var out bytes.Buffer
	var mu sync.Mutex
	h := puppetlog.New(&lockedWriter{w: &out, mu: &mu}, slog.LevelDebug)
	code := Run(context.Background(), s, Options{
		Log: h, Level: slog.LevelDebug, EnvironmentFromCLI: true,
		StateDir: filepath.Join(e.dir, "pippet-state"), Fallback: delegate.ModeNone,
	})
	mu.Lock()
	defer mu.Unlock()
	return code, out.String()
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// execCatalog is a catalog with one exec running cmd.
func execCatalog(cmd string) string {
	return fmt.Sprintf(`{"tags":["settings"],"name":"x","version":1,"code_id":null,"catalog_uuid":"u","catalog_format":2,"environment":"production",
"resources":[{"type":"Stage","title":"main","tags":["stage"],"exported":false,"parameters":{"name":"main"}},
{"type":"Exec","title":"e","tags":["exec"],"exported":false,"parameters":{"command":%q,"path":"/bin:/usr/bin","timeout":0}}],
"edges":[{"source":"Stage[main]","target":"Exec[e]"}],"classes":[]}`, cmd)
}

// TestServerListFailover: a closed port, then a server answering 503,
// then a working one: the run warns for the first two (Puppet's words),
// uses the third for the catalog and the report, and the report names
// it as server_used.
func TestServerListFailover(t *testing.T) {
	e := newAgentEnv(t, "servers-failover.test")
	down := e.pki.start(t, &fakeServer{status: http.StatusServiceUnavailable})
	good := e.pki.start(t, &fakeServer{catalog: execCatalog("true")})
	closed := closedPort(t)
	list := fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", closed, down.port(), good.port())
	s := e.settings(t, "server_list="+list)
	code, out := e.run(t, s)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("Warning: Unable to connect to server from server_list setting: Request to https://127.0.0.1:%d/status/v1/simple/server failed after ", closed))
	assert.Contains(t, out, "connection refused Trying with next server from server_list.\n")
	assert.Contains(t, out, fmt.Sprintf("Warning: Puppet server 127.0.0.1:%d is unavailable: 503 Service Unavailable Trying with next server from server_list.\n", down.port()))
	assert.Contains(t, out, fmt.Sprintf("Debug: Selected puppet server from the `server_list` setting: 127.0.0.1:%d\n", good.port()))
	assert.Empty(t, down.asked("POST /puppet/v3/catalog"))
	assert.Len(t, good.asked("POST /puppet/v3/catalog/servers-failover.test"), 1)
	require.Len(t, good.reports, 1)
	var rep map[string]any
	require.NoError(t, json.Unmarshal(good.reports[0], &rep))
	assert.Equal(t, fmt.Sprintf("127.0.0.1:%d", good.port()), rep["server_used"])
	assert.Empty(t, good.facts, "resubmit_facts is off by default")
}

// TestServerListNoneAnswers: without usecacheonfailure the run fails at
// once with Puppet's error and sends nothing; with it (and no cache) the
// run goes on with the first entry and fails for want of a catalog.
func TestServerListNoneAnswers(t *testing.T) {
	e := newAgentEnv(t, "servers-none.test")
	down := e.pki.start(t, &fakeServer{status: http.StatusServiceUnavailable})
	closed := closedPort(t)
	list := fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d", closed, down.port())
	s := e.settings(t, "server_list="+list, "usecacheonfailure=false")
	code, out := e.run(t, s)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, fmt.Sprintf("Error: Puppet server 127.0.0.1:%d is unavailable: 503 Service Unavailable\n", down.port()))
	assert.Contains(t, out, fmt.Sprintf("Error: Could not run Puppet configuration client: Could not select a functional puppet server from server_list: '%s'\n", list))
	assert.Empty(t, down.asked("PUT"), "no report")
	_, err := os.Stat(s.LastRunFile)
	assert.ErrorIs(t, err, os.ErrNotExist, "no summary: the run did not start")

	s = e.settings(t, "server_list="+list, "usecacheonfailure=true")
	code, out = e.run(t, s)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, fmt.Sprintf("Error: Could not select a functional puppet server from server_list: '%s'\n", list))
	assert.NotContains(t, out, "Could not run Puppet configuration client: Could not select")
	assert.Contains(t, out, fmt.Sprintf("https://127.0.0.1:%d/puppet/v3/catalog/servers-none.test", closed), "the first entry is the run's")
}

// TestServerListReportServer: report_server set keeps the reports on
// their own server (unset, they follow the server chosen from
// server_list: TestServerListFailover).
func TestServerListReportServer(t *testing.T) {
	e := newAgentEnv(t, "servers-report.test")
	good := e.pki.start(t, &fakeServer{catalog: execCatalog("true")})
	reports := e.pki.start(t, &fakeServer{})
	s := e.settings(t, fmt.Sprintf("server_list=127.0.0.1:%d", good.port()),
		"report_server=127.0.0.1", fmt.Sprintf("report_port=%d", reports.port()))
	code, out := e.run(t, s)
	require.Equal(t, 0, code, out)
	assert.Empty(t, good.reports)
	assert.Len(t, reports.reports, 1)
}

// TestRuntimeoutEndsHungRuns: a catalog request that never answers and
// an exec that never ends are both cut at runtimeout: Puppet's error,
// exit 1, the report still sent and the summary written, postrun_command
// run after the apply.
func TestRuntimeoutEndsHungRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *fakeServer
	}{
		{"hung server", &fakeServer{hang: true}},
		{"hung exec", &fakeServer{catalog: execCatalog("sleep 60")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newAgentEnv(t, "servers-runtimeout.test")
			f := e.pki.start(t, tc.f)
			postrun := filepath.Join(e.dir, "postrun-ran")
			s := e.settings(t, fmt.Sprintf("serverport=%d", f.port()), "runtimeout=2", "usecacheonfailure=false",
				"postrun_command=touch "+postrun)
			start := time.Now()
			code, out := e.run(t, s)
			assert.Less(t, time.Since(start), 30*time.Second)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "Error: Execution of Puppet configuration client did not complete within 2 seconds and was terminated.\n")
			require.Len(t, f.reports, 1, out)
			var rep map[string]any
			require.NoError(t, json.Unmarshal(f.reports[0], &rep))
			assert.Equal(t, "failed", rep["status"])
			_, err := os.Stat(s.LastRunFile)
			assert.NoError(t, err)
			if tc.f.catalog != "" {
				assert.FileExists(t, postrun, "postrun_command runs after the cut-short apply")
				assert.NotContains(t, out, "Could not run command from postrun_command")
			}
		})
	}
}

// TestWaitforlock: with waitforlock, a run waits for the lock another
// run holds and runs once it is released; after maxwaitforlock it gives
// up with Puppet's notice.
func TestWaitforlock(t *testing.T) {
	e := newAgentEnv(t, "servers-lock.test")
	f := e.pki.start(t, &fakeServer{catalog: execCatalog("true")})

	s := e.settings(t, fmt.Sprintf("serverport=%d", f.port()), "waitforlock=1", "maxwaitforlock=2")
	require.NoError(t, os.MkdirAll(filepath.Dir(s.CatalogRunLockfile), 0o755))
	unlock, err := config.Lock(s.CatalogRunLockfile)
	require.NoError(t, err)
	code, out := e.run(t, s)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "Info: Another puppet instance is already running; --waitforlock flag used, waiting for running instance to finish.\nInfo: Will try again in 1 seconds.\n")
	assert.Contains(t, out, "Notice: Exiting now because the maxwaitforlock timeout has been exceeded.\n")
	assert.Empty(t, f.asked("POST"))

	s = e.settings(t, fmt.Sprintf("serverport=%d", f.port()), "waitforlock=1", "maxwaitforlock=unlimited")
	go func() { time.Sleep(1500 * time.Millisecond); unlock() }()
	code, out = e.run(t, s)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "Will try again in 1 seconds.")
	assert.Len(t, f.asked("POST /puppet/v3/catalog/"), 1)

	// waitforlock 0 (the default): skipped at once.
	unlock, err = config.Lock(s.CatalogRunLockfile)
	require.NoError(t, err)
	defer unlock()
	code, out = e.run(t, e.settings(t, fmt.Sprintf("serverport=%d", f.port())))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "Notice: Run of Puppet configuration client already in progress; skipping  (")
	assert.NotContains(t, out, "Will try again")
}

// TestResubmitFacts: after the apply, the facts go again to
// /puppet/v3/facts/CERTNAME for the run's environment, before the
// report; a failure to send them is logged and does not fail the run.
func TestResubmitFacts(t *testing.T) {
	e := newAgentEnv(t, "servers-resubmit.test")
	f := e.pki.start(t, &fakeServer{catalog: execCatalog("true")})
	s := e.settings(t, fmt.Sprintf("serverport=%d", f.port()), "resubmit_facts=true")
	code, out := e.run(t, s)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "Info: Uploading facts for servers-resubmit.test to 127.0.0.1\n")
	puts := f.asked("PUT ")
	require.Len(t, puts, 2, out)
	assert.Equal(t, "PUT /puppet/v3/facts/servers-resubmit.test?environment=production", puts[0])
	assert.True(t, strings.HasPrefix(puts[1], "PUT /puppet/v3/report/"), puts[1])
	var doc struct {
		Name   string         `json:"name"`
		Values map[string]any `json:"values"`
	}
	require.NoError(t, json.Unmarshal(f.facts[0], &doc))
	assert.Equal(t, "servers-resubmit.test", doc.Name)
	assert.NotEmpty(t, doc.Values["kernel"])
	var rep struct {
		Metrics map[string]struct {
			Values [][]any `json:"values"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(f.reports[0], &rep))
	assert.Contains(t, fmt.Sprint(rep.Metrics["time"].Values), "resubmit_facts")

	// The server refuses the facts: an error line, the run still succeeds.
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/puppet/v3/facts/") {
			http.Error(w, "Forbidden request", http.StatusForbidden)
			return
		}
		f.serve(w, r)
	})
	code, out = e.run(t, s)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "Error: Failed to submit facts: Error 403 on SERVER: Forbidden request\n")
}

// TestServerListCAAndReportAddr: the certificate and report requests
// follow the server chosen from server_list unless ca_server and
// report_server are set (puppet.conf or command line); without
// server_list they are ca_server's and report_server's ($server).
func TestServerListCAAndReportAddr(t *testing.T) {
	e := newAgentEnv(t, "servers-addr.test")
	chosen := func(s *config.Settings) *run {
		r := newRun(s, Options{})
		r.host, r.port = "b.example", 8150
		return r
	}
	r := chosen(e.settings(t, "server_list=a.example,b.example:8150"))
	h, p := r.caAddr()
	assert.Equal(t, "b.example:8150", fmt.Sprintf("%s:%d", h, p))
	h, p = r.reportAddr()
	assert.Equal(t, "b.example:8150", fmt.Sprintf("%s:%d", h, p))

	r = chosen(e.settings(t, "server_list=a.example,b.example:8150", "ca_server=ca.example", "report_server=reports.example", "report_port=9000"))
	h, p = r.caAddr()
	assert.Equal(t, "ca.example:8140", fmt.Sprintf("%s:%d", h, p))
	h, p = r.reportAddr()
	assert.Equal(t, "reports.example:9000", fmt.Sprintf("%s:%d", h, p))

	r = newRun(e.settings(t, "server=main.example"), Options{})
	h, _ = r.caAddr()
	assert.Equal(t, "main.example", h)
	h, _ = r.reportAddr()
	assert.Equal(t, "main.example", h)
}
