package ssl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// testCA is a Puppet CA for the tests: its own key and certificate, a
// server certificate for 127.0.0.1 and localhost, and the puppet-ca v1
// endpoints the agent uses, served over TLS by an httptest server.
type testCA struct {
	t      testing.TB
	key    crypto.Signer
	cert   *x509.Certificate
	server tls.Certificate
	srv    *httptest.Server

	mu       sync.Mutex
	serial   int64
	autosign bool
	csrs     map[string]*x509.CertificateRequest
	signed   map[string]*x509.Certificate
	revoked  []x509.RevocationListEntry
	crlNum   int64
	crlDER   []byte
	crlTime  time.Time
	requests []string // "METHOD PATH"
	headers  []http.Header
	// Faults a test may set.
	caPEM      []byte                                    // served for certificate/ca instead of the CA's own
	certFor    func(csr *x509.CertificateRequest) []byte // overrides signing (DER)
	notAfter   time.Time                                 // of the certificates signed
	failStatus map[string]int                            // path -> status
	onRequest  func(r *http.Request)                     // called for every request
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Puppet CA: pippet ssl test"},
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.Add(5 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	ca := &testCA{t: t, key: key, cert: cert, serial: 1, csrs: map[string]*x509.CertificateRequest{},
		signed: map[string]*x509.Certificate{}, failStatus: map[string]int{}, notAfter: now.Add(365 * 24 * time.Hour)}
	ca.server = ca.serverCert(cert, key)
	ca.makeCRL()
	return ca
}

// serverCert is a certificate for the server's TLS, issued by the given
// CA.
func (ca *testCA) serverCert(issuer *x509.Certificate, issuerKey crypto.Signer) tls.Certificate {
	return ca.serverCertFor(issuer, issuerKey, "localhost", "127.0.0.1")
}

// serverCertFor is a server certificate for the given names (an IP
// address or a DNS name each).
func (ca *testCA) serverCertFor(issuer *x509.Certificate, issuerKey crypto.Signer, names ...string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(ca.t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.nextSerial()), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), issuerKey)
	require.NoError(ca.t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (ca *testCA) nextSerial() int64 {
	ca.serial++
	return ca.serial
}

// makeCRL signs a new CRL with the revoked entries (the caller holds mu
// or is the constructor).
func (ca *testCA) makeCRL() {
	ca.crlNum++
	ca.crlTime = time.Now().Truncate(time.Second)
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(ca.crlNum), ThisUpdate: ca.crlTime.Add(-time.Minute), NextUpdate: ca.crlTime.Add(5 * 365 * 24 * time.Hour),
		RevokedCertificateEntries: ca.revoked,
	}, ca.cert, ca.key)
	require.NoError(ca.t, err)
	ca.crlDER = der
}

func (ca *testCA) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// start serves the CA on loopback; the server asks for a client
// certificate without requiring one (as Puppet Server's want).
func (ca *testCA) start() *testCA {
	ca.srv = httptest.NewUnstartedServer(http.HandlerFunc(ca.serve))
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	ca.srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.server}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	ca.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what tests want
	ca.srv.StartTLS()
	ca.t.Cleanup(ca.srv.Close)
	return ca
}

func (ca *testCA) port() int { return ca.srv.Listener.Addr().(*net.TCPAddr).Port }

func (ca *testCA) serve(w http.ResponseWriter, r *http.Request) {
	ca.mu.Lock()
	ca.requests = append(ca.requests, r.Method+" "+r.URL.Path)
	ca.headers = append(ca.headers, r.Header.Clone())
	on := ca.onRequest
	status := ca.failStatus[r.URL.Path]
	ca.mu.Unlock()
	if on != nil {
		on(r)
	}
	if status != 0 {
		http.Error(w, "injected failure", status)
		return
	}
	const api = "/puppet-ca/v1/"
	p, ok := strings.CutPrefix(r.URL.Path, api)
	if !ok {
		// The agent's endpoints: a request needs the client certificate.
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "Forbidden request: no client certificate", http.StatusForbidden)
			return
		}
		io.WriteString(w, "hello "+r.TLS.PeerCertificates[0].Subject.CommonName)
		return
	}
	ca.mu.Lock()
	defer ca.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	switch {
	case r.Method == http.MethodGet && p == "certificate/ca":
		if ca.caPEM != nil {
			w.Write(ca.caPEM)
			return
		}
		w.Write(ca.pem())
	case r.Method == http.MethodGet && p == "certificate_revocation_list/ca":
		if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !ca.crlTime.After(ims) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: ca.crlDER}))
	case r.Method == http.MethodPut && strings.HasPrefix(p, "certificate_request/"):
		name := strings.TrimPrefix(p, "certificate_request/")
		body, _ := io.ReadAll(r.Body)
		b, _ := pem.Decode(body)
		if b == nil || r.Header.Get("Content-Type") != "text/plain" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		csr, err := x509.ParseCertificateRequest(b.Bytes)
		if err != nil || csr.CheckSignature() != nil || csr.Subject.CommonName != name {
			http.Error(w, "bad CSR", http.StatusBadRequest)
			return
		}
		if _, dup := ca.csrs[name]; dup || ca.signed[name] != nil {
			http.Error(w, name+" already has a requested certificate; ignoring certificate request", http.StatusBadRequest)
			return
		}
		ca.csrs[name] = csr
		if ca.autosign {
			ca.signLocked(name)
		}
	case r.Method == http.MethodGet && strings.HasPrefix(p, "certificate/"):
		name := strings.TrimPrefix(p, "certificate/")
		c := ca.signed[name]
		if c == nil {
			http.Error(w, "Not Found: Could not find certificate "+name, http.StatusNotFound)
			return
		}
		w.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	default:
		http.Error(w, "no such endpoint", http.StatusNotFound)
	}
}

// sign signs the pending request of name, as `puppetserver ca sign`.
func (ca *testCA) sign(name string) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	ca.signLocked(name)
}

func (ca *testCA) signLocked(name string) {
	csr := ca.csrs[name]
	require.NotNil(ca.t, csr, "no request of %s", name)
	var der []byte
	if ca.certFor != nil {
		der = ca.certFor(csr)
	} else {
		der = ca.issue(name, csr.PublicKey, ca.notAfter)
	}
	c, err := x509.ParseCertificate(der)
	require.NoError(ca.t, err)
	ca.signed[name] = c
	delete(ca.csrs, name)
}

// issue makes a client certificate for pub.
func (ca *testCA) issue(name string, pub any, notAfter time.Time) []byte {
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.nextSerial()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	require.NoError(ca.t, err)
	return der
}

// revoke adds name's certificate to a new CRL.
func (ca *testCA) revoke(name string) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	c := ca.signed[name]
	require.NotNil(ca.t, c)
	ca.revoked = append(ca.revoked, x509.RevocationListEntry{SerialNumber: c.SerialNumber, RevocationTime: time.Now().Add(-time.Second)})
	time.Sleep(time.Until(ca.crlTime.Add(time.Second))) // a newer Last-Modified second
	ca.makeCRL()
}

func (ca *testCA) pending(name string) bool {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	return ca.csrs[name] != nil
}

func (ca *testCA) requestLog() []string {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	return append([]string(nil), ca.requests...)
}

// logBuffer collects the lines Bootstrap logs, as "level=LEVEL msg=...".
type logBuffer struct{ testutil.SyncBuffer }

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
