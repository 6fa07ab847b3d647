package ssl

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/config"
)

// Test keys are small: 4096-bit RSA takes seconds under the race
// detector, and the size only matters to the key's strength.
const testKeylength = 1024

func options(ca *testCA, ssldir, certname string, log *logBuffer) Options {
	o := Options{
		SSLDir: ssldir, Certname: certname, CAServer: "127.0.0.1", CAPort: ca.port(),
		Keylength: testKeylength, Timeout: 10 * time.Second,
		CSRAttributes: filepath.Join(ssldir, "..", "csr_attributes.yaml"),
	}
	if log != nil {
		o.Log = log.logger()
	}
	return o
}

// get makes a request to the test server's agent endpoint with cfg.
func get(t *testing.T, ca *testCA, cfg *tls.Config) (string, error) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/puppet/v3/status", ca.port()))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	require.NoError(t, err)
	return st.Mode()
}

func TestBootstrapFresh(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := filepath.Join(t.TempDir(), "etc", "ssl")
	var log logBuffer
	cfg, err := Bootstrap(context.Background(), options(ca, ssldir, "agent.example", &log))
	require.NoError(t, err)

	// The client certificate lets a request through.
	body, err := get(t, ca, cfg)
	require.NoError(t, err)
	assert.Equal(t, "hello agent.example", body)

	// Puppet's layout and modes.
	for p, want := range map[string]fs.FileMode{
		"":                               fs.ModeDir | 0o771,
		"certs":                          fs.ModeDir | 0o755,
		"private_keys":                   fs.ModeDir | 0o750,
		"public_keys":                    fs.ModeDir | 0o755,
		"certificate_requests":           fs.ModeDir | 0o755,
		"private":                        fs.ModeDir | 0o750,
		"certs/ca.pem":                   0o644,
		"crl.pem":                        0o644,
		"certs/agent.example.pem":        0o644,
		"private_keys/agent.example.pem": 0o640,
	} {
		assert.Equal(t, want, mode(t, filepath.Join(ssldir, p)), p)
	}
	_, err = os.Lstat(filepath.Join(ssldir, "certificate_requests", "agent.example.pem"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "the request is removed once the certificate is saved")
	leftovers, _ := filepath.Glob(filepath.Join(ssldir, "*", ".*.tmp"))
	assert.Empty(t, leftovers)

	keyPEM, err := os.ReadFile(filepath.Join(ssldir, "private_keys", "agent.example.pem"))
	require.NoError(t, err)
	b, _ := pem.Decode(keyPEM)
	require.NotNil(t, b)
	assert.Equal(t, "RSA PRIVATE KEY", b.Type, "Puppet writes PKCS #1")
	k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
	require.NoError(t, err)
	assert.Equal(t, testKeylength, k.N.BitLen())
	caPEM, err := os.ReadFile(filepath.Join(ssldir, "certs", "ca.pem"))
	require.NoError(t, err)
	assert.Equal(t, ca.pem(), caPEM)

	assert.Equal(t, []string{
		"GET /puppet-ca/v1/certificate/ca",
		"GET /puppet-ca/v1/certificate_revocation_list/ca",
		"PUT /puppet-ca/v1/certificate_request/agent.example",
		"GET /puppet-ca/v1/certificate/agent.example",
		"GET /puppet/v3/status",
	}, ca.requestLog())
	out := log.String()
	for _, line := range []string{
		`level=INFO msg="Creating a new RSA SSL key for agent.example"`,
		`level=INFO msg="csr_attributes file loading from ` + filepath.Join(ssldir, "..", "csr_attributes.yaml") + `"`,
		`level=INFO msg="Creating a new SSL certificate request for agent.example"`,
		`level=INFO msg="Certificate Request fingerprint (SHA256): `,
		fmt.Sprintf(`level=INFO msg="Downloaded certificate for agent.example from https://127.0.0.1:%d/puppet-ca/v1"`, ca.port()),
	} {
		assert.Contains(t, out, line)
	}

	// A second run finds everything and asks the CA nothing.
	n := len(ca.requestLog())
	cfg, err = Bootstrap(context.Background(), options(ca, ssldir, "agent.example", nil))
	require.NoError(t, err)
	assert.Len(t, ca.requestLog(), n)
	body, err = get(t, ca, cfg)
	require.NoError(t, err)
	assert.Equal(t, "hello agent.example", body)

	// TLSConfig reads the same files without any request.
	cfg, err = Files{Dir: ssldir, Certname: "agent.example", Revocation: "chain"}.TLSConfig()
	require.NoError(t, err)
	body, err = get(t, ca, cfg)
	require.NoError(t, err)
	assert.Equal(t, "hello agent.example", body)
}

func TestBootstrapPendingThenSigned(t *testing.T) {
	ca := newTestCA(t).start()
	ssldir := t.TempDir()
	var log logBuffer
	o := options(ca, ssldir, "waiter", &log)
	o.Waitforcert = time.Second
	go func() {
		for !ca.pending("waiter") {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		ca.sign("waiter")
	}()
	start := time.Now()
	cfg, err := Bootstrap(context.Background(), o)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), time.Second)
	body, err := get(t, ca, cfg)
	require.NoError(t, err)
	assert.Equal(t, "hello waiter", body)
	out := log.String()
	assert.Contains(t, out, `level=INFO msg="Certificate for waiter has not been signed yet"`)
	assert.Contains(t, out, `level=INFO+2 msg="Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (waiter)."`)
	assert.Contains(t, out, `level=INFO msg="Will try again in 1 seconds."`)
	// One key for both passes; the second request is refused (the CA has
	// one already) and the certificate fetched, as Puppet does.
	assert.Equal(t, 1, strings.Count(out, "Creating a new RSA SSL key"))
	reqs := ca.requestLog()
	assert.Equal(t, 2, count(reqs, "PUT /puppet-ca/v1/certificate_request/waiter"))
	assert.Equal(t, 2, count(reqs, "GET /puppet-ca/v1/certificate/waiter"))
	assert.Equal(t, 1, count(reqs, "GET /puppet-ca/v1/certificate/ca"), "the CA bundle is downloaded once")
}

func count(list []string, s string) int {
	n := 0
	for _, l := range list {
		if l == s {
			n++
		}
	}
	return n
}

func TestBootstrapWaitforcertZero(t *testing.T) {
	ca := newTestCA(t).start()
	ssldir := t.TempDir()
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "unsigned", nil))
	require.Error(t, err)
	assert.EqualError(t, err, "Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (unsigned). Exiting now because the waitforcert setting is set to 0.")
	assert.ErrorIs(t, err, ErrNotSigned)
	// The key and the request stay for the next run.
	assert.FileExists(t, filepath.Join(ssldir, "private_keys", "unsigned.pem"))
	csrPEM, err := os.ReadFile(filepath.Join(ssldir, "certificate_requests", "unsigned.pem"))
	require.NoError(t, err)
	b, _ := pem.Decode(csrPEM)
	require.NotNil(t, b)
	assert.Equal(t, "CERTIFICATE REQUEST", b.Type)
	assert.NoFileExists(t, filepath.Join(ssldir, "certs", "unsigned.pem"))

	// Signed meanwhile, the next run fetches it with the same key.
	keyBefore, _ := os.ReadFile(filepath.Join(ssldir, "private_keys", "unsigned.pem"))
	ca.sign("unsigned")
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "unsigned", nil))
	require.NoError(t, err)
	keyAfter, _ := os.ReadFile(filepath.Join(ssldir, "private_keys", "unsigned.pem"))
	assert.Equal(t, keyBefore, keyAfter)
}

func TestBootstrapMaxWaitAndCancel(t *testing.T) {
	ca := newTestCA(t).start()
	o := options(ca, t.TempDir(), "patient", nil)
	o.Waitforcert = 100 * time.Millisecond
	o.MaxWaitforcert = 250 * time.Millisecond
	_, err := Bootstrap(context.Background(), o)
	assert.EqualError(t, err, "Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (patient). Exiting now because the maxwaitforcert timeout has been exceeded.")
	assert.ErrorIs(t, err, ErrNotSigned)

	o.MaxWaitforcert = 0
	o.Waitforcert = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Bootstrap(ctx, o)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "waiting for the certificate of patient to be signed")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestBootstrapMismatchedCertificate(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ca.certFor = func(csr *x509.CertificateRequest) []byte {
		return ca.issue(csr.Subject.CommonName, other.Public(), ca.notAfter)
	}
	ca.start()
	ssldir := t.TempDir()
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "mismatch", nil))
	require.Error(t, err)
	assert.EqualError(t, err, "The certificate for 'CN=mismatch' does not match its private key")
	assert.NoFileExists(t, filepath.Join(ssldir, "certs", "mismatch.pem"), "a refused certificate is not saved")

	// A mismatched certificate already in the ssldir is refused too.
	der := ca.issue("mismatch", other.Public(), ca.notAfter)
	require.NoError(t, os.WriteFile(filepath.Join(ssldir, "certs", "mismatch.pem"), pemBlock("CERTIFICATE", der), 0o644))
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "mismatch", nil))
	assert.EqualError(t, err, "The certificate for 'CN=mismatch' does not match its private key")
}

func TestBootstrapRevokedAndExpired(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := t.TempDir()
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "revoked", nil))
	require.NoError(t, err)

	// Revoked on the CA: the local CRL does not know yet, and Puppet's
	// default never refreshes it.
	ca.revoke("revoked")
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "revoked", nil))
	require.NoError(t, err)

	// With crl_refresh_interval the newer CRL is fetched and the
	// certificate refused.
	var log logBuffer
	o := options(ca, ssldir, "revoked", &log)
	o.CRLRefreshInterval = time.Millisecond
	_, err = Bootstrap(context.Background(), o)
	require.Error(t, err)
	assert.EqualError(t, err, "Certificate 'CN=revoked' is revoked")
	assert.Contains(t, log.String(), `msg="Refreshing CRL"`)
	// The refreshed CRL was saved; a run without refresh refuses too.
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "revoked", nil))
	assert.EqualError(t, err, "Certificate 'CN=revoked' is revoked")
	// leaf checks the agent's own certificate as well; false does not.
	o = options(ca, ssldir, "revoked", nil)
	o.CertificateRevocation = "leaf"
	_, err = Bootstrap(context.Background(), o)
	assert.EqualError(t, err, "Certificate 'CN=revoked' is revoked")
	o.CertificateRevocation = "false"
	_, err = Bootstrap(context.Background(), o)
	assert.NoError(t, err)

	// Expired.
	ca.notAfter = time.Now().Add(-time.Minute)
	ssldir2 := t.TempDir()
	_, err = Bootstrap(context.Background(), options(ca, ssldir2, "expired", nil))
	assert.EqualError(t, err, "The certificate 'CN=expired' has expired, verify time is synchronized")
	assert.NoFileExists(t, filepath.Join(ssldir2, "certs", "expired.pem"))
}

// TestCRLRefreshSameSecond: the CA's CRL changed in the very second our
// copy was fetched, after it (a sysadmin revoking a certificate just as
// an agent ran). HTTP dates have whole seconds: asking If-Modified-Since
// our copy's second, the CA answers 304 and the revoked certificate
// would pass forever (what made TestBootstrapRevokedAndExpired flaky
// under load: its revoke() fell in the second of the first download).
func TestCRLRefreshSameSecond(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := t.TempDir()
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "samesecond", nil))
	require.NoError(t, err)

	ca.mu.Lock()
	ca.revoked = append(ca.revoked, x509.RevocationListEntry{SerialNumber: ca.signed["samesecond"].SerialNumber, RevocationTime: time.Now().Add(-time.Minute)})
	ca.makeCRL()
	ca.crlTime = ca.crlTime.Add(-10 * time.Second) // the CA's Last-Modified second
	fetched := ca.crlTime.Add(300 * time.Millisecond)
	ca.mu.Unlock()
	// Our copy was fetched 300 ms into that second, before the change.
	require.NoError(t, os.Chtimes(filepath.Join(ssldir, "crl.pem"), fetched, fetched))

	o := options(ca, ssldir, "samesecond", nil)
	o.CRLRefreshInterval = time.Second
	_, err = Bootstrap(context.Background(), o)
	assert.EqualError(t, err, "Certificate 'CN=samesecond' is revoked")
}

func TestBootstrapCRLRefresh(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := t.TempDir()
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "fresh", nil))
	require.NoError(t, err)
	crl := filepath.Join(ssldir, "crl.pem")
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(crl, old, old))
	ca.mu.Lock()
	ca.crlTime = old.Add(-time.Hour) // the CA's CRL is older than ours
	ca.mu.Unlock()

	// Older than the interval, unchanged on the CA: 304, kept, and the
	// time of the attempt recorded.
	var log logBuffer
	o := options(ca, ssldir, "fresh", &log)
	o.CRLRefreshInterval = 24 * time.Hour
	n := len(ca.requestLog())
	_, err = Bootstrap(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, ca.requestLog(), n+1)
	ca.mu.Lock()
	ims := ca.headers[n].Get("If-Modified-Since")
	ca.mu.Unlock()
	assert.Equal(t, old.Add(-time.Second).UTC().Format(http.TimeFormat), ims, "the second before our copy's")
	assert.Contains(t, log.String(), `msg="CRL is unmodified, using existing CRL"`)
	assert.WithinDuration(t, time.Now(), mtime(t, crl), 5*time.Second)

	// Within the interval: no request.
	_, err = Bootstrap(context.Background(), o)
	require.NoError(t, err)
	assert.Len(t, ca.requestLog(), n+1)

	// The CA cannot be reached for the refresh: the run goes on with the
	// CRL it has, with Puppet's warning.
	require.NoError(t, os.Chtimes(crl, old, old))
	ca.failStatus["/puppet-ca/v1/certificate_revocation_list/ca"] = http.StatusServiceUnavailable
	log = logBuffer{}
	o.Log = log.logger()
	_, err = Bootstrap(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, log.String(), `level=WARN msg="Failed to refresh CRL, using existing CRL: Could not download CRLs: Service Unavailable`)
}

func mtime(t *testing.T, p string) time.Time {
	st, err := os.Stat(p)
	require.NoError(t, err)
	return st.ModTime()
}

func TestBootstrapRevocationOff(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := t.TempDir()
	var log logBuffer
	o := options(ca, ssldir, "nocrl", &log)
	o.CertificateRevocation = "false"
	cfg, err := Bootstrap(context.Background(), o)
	require.NoError(t, err)
	assert.Nil(t, cfg.VerifyConnection)
	assert.NoFileExists(t, filepath.Join(ssldir, "crl.pem"))
	assert.Contains(t, log.String(), `msg="Certificate revocation is disabled, skipping CRL download"`)
	assert.Equal(t, 0, count(ca.requestLog(), "GET /puppet-ca/v1/certificate_revocation_list/ca"))
	o.CertificateRevocation = "sometimes"
	_, err = Bootstrap(context.Background(), o)
	assert.EqualError(t, err, `invalid certificate_revocation "sometimes" (chain, leaf or false)`)
}

func TestBootstrapCADownloadRefused(t *testing.T) {
	// The server's TLS certificate is issued by another CA than the
	// bundle it serves: the bundle is refused and nothing saved.
	ca := newTestCA(t)
	impostor := newTestCA(t)
	ca.caPEM = impostor.pem()
	ca.start()
	ssldir := t.TempDir()
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "tofu", nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not verify that server's own certificate: refused, nothing saved")
	assert.NoFileExists(t, filepath.Join(ssldir, "certs", "ca.pem"))
	assert.NoFileExists(t, filepath.Join(ssldir, "private_keys", "tofu.pem"))

	// Its certificate from the right CA, but for another name than the
	// one it was reached by: refused too.
	other := newTestCA(t)
	other.server = other.serverCertFor(other.cert, other.key, "elsewhere.example")
	other.start()
	_, err = Bootstrap(context.Background(), options(other, ssldir, "tofu", nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refused, nothing saved")
	assert.Contains(t, err.Error(), "x509: cannot validate certificate for 127.0.0.1")
	assert.NoFileExists(t, filepath.Join(ssldir, "certs", "ca.pem"))
	ca.caPEM = nil

	// Not PEM at all.
	ca.caPEM = []byte("<html>welcome</html>")
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "tofu", nil))
	assert.EqualError(t, err, "Failed to parse CA certificates as PEM")
	ca.caPEM = nil
	ca.failStatus["/puppet-ca/v1/certificate/ca"] = http.StatusNotFound
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "tofu", nil))
	assert.EqualError(t, err, "CA certificate is missing from the server")
	ca.failStatus["/puppet-ca/v1/certificate/ca"] = http.StatusInternalServerError
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "tofu", nil))
	assert.EqualError(t, err, "Could not download CA certificate: Internal Server Error: injected failure")
	delete(ca.failStatus, "/puppet-ca/v1/certificate/ca")

	// Once the bundle is there, a server whose certificate does not
	// chain to it is refused at the handshake.
	ca.autosign = true
	require.NoError(t, os.MkdirAll(filepath.Join(ssldir, "certs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ssldir, "certs", "ca.pem"), impostor.pem(), 0o644))
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "tofu", nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Could not download CRLs")
	assert.Contains(t, err.Error(), "certificate signed by unknown authority")
}

func TestBootstrapCAFingerprint(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	sum := sha256.Sum256(ca.pem())
	var log logBuffer
	o := options(ca, t.TempDir(), "fp", &log)
	o.CAFingerprint = hex.EncodeToString(sum[:])
	_, err := Bootstrap(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, log.String(), "Verified CA bundle with digest (SHA256) "+colonHex(sum[:]))

	o = options(ca, t.TempDir(), "fp", nil)
	o.CAFingerprint = strings.Repeat("ab", 32)
	_, err = Bootstrap(context.Background(), o)
	assert.EqualError(t, err, fmt.Sprintf("CA bundle with digest (SHA256) %s did not match expected digest %s", colonHex(sum[:]), strings.Repeat("AB", 32)))
	assert.NoFileExists(t, filepath.Join(o.SSLDir, "certs", "ca.pem"))
}

func TestBootstrapCSRContent(t *testing.T) {
	ca := newTestCA(t).start()
	ssldir := filepath.Join(t.TempDir(), "ssl")
	o := options(ca, ssldir, "web01.example.com", nil)
	require.NoError(t, os.WriteFile(o.CSRAttributes, []byte(`---
custom_attributes:
  challengePassword: "s3cr3t!pass"
  1.2.840.113549.1.9.2: unstructured
extension_requests:
  pp_role: webserver
  1.3.6.1.4.1.34380.1.2.1: "privé"
`), 0o600))
	o.DNSAltNames = []string{"puppet", "IP:192.0.2.7", "DNS:web.example.com", "web01.example.com"}
	_, err := Bootstrap(context.Background(), o)
	require.ErrorIs(t, err, ErrNotSigned)
	ca.mu.Lock()
	csr := ca.csrs["web01.example.com"]
	ca.mu.Unlock()
	require.NotNil(t, csr)
	assert.Equal(t, "web01.example.com", csr.Subject.String()[3:])
	assert.Equal(t, []string{"puppet", "web.example.com", "web01.example.com"}, csr.DNSNames)
	require.Len(t, csr.IPAddresses, 1)
	assert.Equal(t, "192.0.2.7", csr.IPAddresses[0].String())
	assert.Equal(t, x509.SHA256WithRSA, csr.SignatureAlgorithm)
	exts := map[string]string{}
	for _, e := range csr.Extensions {
		var s string
		if _, err := asn1.Unmarshal(e.Value, &s); err == nil {
			exts[e.Id.String()] = s
		}
	}
	assert.Equal(t, "webserver", exts["1.3.6.1.4.1.34380.1.1.13"])
	assert.Equal(t, "privé", exts["1.3.6.1.4.1.34380.1.2.1"])
	// Custom attributes are PrintableStrings in the request's attributes.
	attrs := rawAttributes(t, csr.RawTBSCertificateRequest)
	assert.Equal(t, "s3cr3t!pass", attrs["1.2.840.113549.1.9.7"])
	assert.Equal(t, "unstructured", attrs["1.2.840.113549.1.9.2"])

	// An unknown key or a reserved OID are refused with Puppet's words.
	for doc, want := range map[string]string{
		"custom_attributes:\n  extReq: x\n":          "Cannot specify CSR attribute extReq: conflicts with internally used CSR attribute",
		"extension_requests:\n  subjectAltName: x\n": "Cannot specify CSR extension request subjectAltName: conflicts with internally used extension request",
		"extension_requests:\n  no_such_name: x\n":   `Cannot create CSR with extension request no_such_name: "no_such_name" is neither an OID nor a known short name`,
		"something_else: 1\n":                        fmt.Sprintf(`unexpected attributes ["something_else"] in %q`, o.CSRAttributes),
		"- a list\n":                                 "invalid CSR attributes, expected instance of Hash, in " + o.CSRAttributes,
	} {
		require.NoError(t, os.WriteFile(o.CSRAttributes, []byte(doc), 0o600))
		_, err := Bootstrap(context.Background(), o)
		assert.EqualError(t, err, want, doc)
	}
}

// rawAttributes reads the PrintableString attributes of a request.
func rawAttributes(t *testing.T, tbs []byte) map[string]string {
	var info tbsRequest
	_, err := asn1.Unmarshal(tbs, &info)
	require.NoError(t, err)
	out := map[string]string{}
	for _, raw := range info.Attributes {
		var a attribute
		_, err := asn1.Unmarshal(raw.FullBytes, &a)
		require.NoError(t, err)
		if len(a.Values) == 1 && a.Values[0].Tag == asn1.TagPrintableString {
			out[a.Type.String()] = string(a.Values[0].Bytes)
		}
	}
	return out
}

func TestBootstrapServerErrors(t *testing.T) {
	ca := newTestCA(t).start()
	ssldir := t.TempDir()
	ca.failStatus["/puppet-ca/v1/certificate_request/broken"] = http.StatusInternalServerError
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "broken", nil))
	assert.EqualError(t, err, "Failed to submit the CSR, HTTP response was 500 (Internal Server Error: injected failure)")
	assert.NoFileExists(t, filepath.Join(ssldir, "certificate_requests", "broken.pem"))

	delete(ca.failStatus, "/puppet-ca/v1/certificate_request/broken")
	ca.failStatus["/puppet-ca/v1/certificate/broken"] = http.StatusForbidden
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "broken", nil))
	assert.EqualError(t, err, "Failed to retrieve certificate for broken: Forbidden: injected failure")

	// The CA's port closed.
	ca.srv.Close()
	_, err = Bootstrap(context.Background(), options(ca, t.TempDir(), "broken", nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Could not download CA certificate: request to https://127.0.0.1:")
	assert.Contains(t, err.Error(), "connection refused")

	// Bad settings.
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{SSLDir: ssldir, Certname: "a/b", CAServer: "x"}, `Certname "a/b" must not contain unprintable or non-ASCII characters`},
		{Options{SSLDir: ssldir, Certname: "naïve", CAServer: "x"}, `Certname "naïve" must not contain unprintable or non-ASCII characters`},
		{Options{SSLDir: ssldir, Certname: "", CAServer: "x"}, "no certname"},
		{Options{SSLDir: ssldir, Certname: "Web01", CAServer: "x"}, "Certificate names must be lower case"},
		{Options{SSLDir: "", Certname: "a", CAServer: "x"}, "no SSL directory (ssldir)"},
		{Options{SSLDir: ssldir, Certname: "a"}, "no CA server (ca_server, server)"},
		{Options{SSLDir: ssldir, Certname: "a", CAServer: "x", Keylength: 512}, "keylength 512 is out of range (1024 to 16384 bits)"},
	} {
		_, err := Bootstrap(context.Background(), c.o)
		assert.EqualError(t, err, c.want)
	}
}

// TestBootstrapHostileSSLDir plants symbolic links where the ssldir's
// files and directories go: each is refused, never followed, and what it
// points at is neither read nor changed.
func TestBootstrapHostileSSLDir(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	impostor := newTestCA(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	impostorCA := filepath.Join(outside, "ca.pem")
	require.NoError(t, os.WriteFile(impostorCA, impostor.pem(), 0o644))

	cases := []struct {
		name  string
		plant func(ssldir string)
		want  string
	}{
		{"ca.pem links to another CA", func(d string) {
			require.NoError(t, os.MkdirAll(filepath.Join(d, "certs"), 0o755))
			require.NoError(t, os.Symlink(impostorCA, filepath.Join(d, "certs", "ca.pem")))
		}, "certs/ca.pem is a symbolic link: refused"},
		{"the key links to a file elsewhere", func(d string) {
			require.NoError(t, os.MkdirAll(filepath.Join(d, "private_keys"), 0o750))
			require.NoError(t, os.Symlink(victim, filepath.Join(d, "private_keys", "host.pem")))
		}, "private_keys/host.pem is a symbolic link: refused"},
		{"the key links nowhere yet", func(d string) {
			require.NoError(t, os.MkdirAll(filepath.Join(d, "private_keys"), 0o750))
			require.NoError(t, os.Symlink(filepath.Join(outside, "new-file"), filepath.Join(d, "private_keys", "host.pem")))
		}, "private_keys/host.pem is a symbolic link: refused"},
		{"private_keys links to a directory elsewhere", func(d string) {
			require.NoError(t, os.MkdirAll(d, 0o771))
			require.NoError(t, os.Symlink(outside, filepath.Join(d, "private_keys")))
		}, "private_keys is a symbolic link: refused"},
		{"certs links to a directory elsewhere", func(d string) {
			require.NoError(t, os.MkdirAll(d, 0o771))
			require.NoError(t, os.Symlink(outside, filepath.Join(d, "certs")))
		}, "certs is a symbolic link: refused"},
		{"crl.pem links to a file elsewhere", func(d string) {
			require.NoError(t, os.MkdirAll(d, 0o771))
			require.NoError(t, os.Symlink(victim, filepath.Join(d, "crl.pem")))
		}, "crl.pem is a symbolic link: refused"},
		{"a FIFO in place of the certificate", func(d string) {
			require.NoError(t, os.MkdirAll(filepath.Join(d, "certs"), 0o755))
			require.NoError(t, syscall.Mkfifo(filepath.Join(d, "certs", "host.pem"), 0o644))
		}, "certs/host.pem is not a regular file: refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ssldir := filepath.Join(t.TempDir(), "ssl")
			c.plant(ssldir)
			done := make(chan error, 1)
			go func() {
				_, err := Bootstrap(context.Background(), options(ca, ssldir, "host", nil))
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Contains(t, err.Error(), filepath.Join(ssldir, c.want))
			case <-time.After(30 * time.Second):
				t.Fatal("Bootstrap hung")
			}
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "precious\n", string(b))
			assert.NoFileExists(t, filepath.Join(outside, "new-file"))
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Len(t, entries, 2, "nothing written outside the ssldir")
		})
	}

	// The files written are never readable by others, even while being
	// written: the temporary key file is made 0600, then given 0640.
	ssldir := filepath.Join(t.TempDir(), "ssl")
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "host", nil))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), mode(t, filepath.Join(ssldir, "private_keys", "host.pem")))
	assert.Equal(t, fs.ModeDir|0o771, mode(t, ssldir))
}

func TestTLSConfigRefusesRevokedServer(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := t.TempDir()
	_, err := Bootstrap(context.Background(), options(ca, ssldir, "client", nil))
	require.NoError(t, err)
	// Revoke the server's own certificate in a new CRL, saved as the
	// agent's crl.pem.
	srvCert, err := x509.ParseCertificate(ca.server.Certificate[0])
	require.NoError(t, err)
	ca.mu.Lock()
	ca.revoked = append(ca.revoked, x509.RevocationListEntry{SerialNumber: srvCert.SerialNumber, RevocationTime: time.Now()})
	ca.makeCRL()
	crlPEM := pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: ca.crlDER})
	ca.mu.Unlock()
	require.NoError(t, os.WriteFile(filepath.Join(ssldir, "crl.pem"), crlPEM, 0o644))
	for _, mode := range []string{"chain", "leaf"} {
		cfg, err := Files{Dir: ssldir, Certname: "client", Revocation: mode}.TLSConfig()
		require.NoError(t, err)
		_, err = get(t, ca, cfg)
		require.Error(t, err, mode)
		assert.Contains(t, err.Error(), "certificate '/CN=localhost' is revoked", mode)
	}
	cfg, err := Files{Dir: ssldir, Certname: "client", Revocation: "false"}.TLSConfig()
	require.NoError(t, err)
	_, err = get(t, ca, cfg)
	assert.NoError(t, err)

	// A CRL signed by another CA is refused when read.
	impostor := newTestCA(t)
	require.NoError(t, os.WriteFile(filepath.Join(ssldir, "crl.pem"), pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: impostor.crlDER}), 0o644))
	_, err = Files{Dir: ssldir, Certname: "client", Revocation: "chain"}.TLSConfig()
	assert.ErrorContains(t, err, "invalid signature for CRL issued by 'CN=Puppet CA: pippet ssl test'")
}

func TestParseKeyFormats(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, testKeylength)
	require.NoError(t, err)
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p8, err := x509.MarshalPKCS8PrivateKey(ek)
	require.NoError(t, err)
	sec1, err := x509.MarshalECPrivateKey(ek)
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"pkcs1": pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)),
		"pkcs8": pemBlock("PRIVATE KEY", p8),
		"sec1":  pemBlock("EC PRIVATE KEY", sec1),
	} {
		k, err := parseKey(data)
		require.NoError(t, err, name)
		// An EC key signs a request too.
		_, err = makeCSR("x", k, nil, &csrAttributes{})
		require.NoError(t, err, name)
	}
	_, err = parseKey(pemBlock("ENCRYPTED PRIVATE KEY", []byte{1}))
	assert.EqualError(t, err, "the key is encrypted (a password file is not supported)")
	_, err = parseKey([]byte("garbage"))
	assert.EqualError(t, err, "no PEM private key")
	_, err = parseKey(pemBlock("CERTIFICATE", []byte{1}))
	assert.EqualError(t, err, `a PEM block "CERTIFICATE" is not a private key`)
}

// BenchmarkBootstrapComplete is the cost every agent run pays when the
// ssldir is complete: the files read and checked, no request.
func BenchmarkBootstrapComplete(b *testing.B) {
	ca := newTestCA(b)
	ca.autosign = true
	ca.start()
	ssldir := b.TempDir()
	o := Options{SSLDir: ssldir, Certname: "bench", CAServer: "127.0.0.1", CAPort: ca.port(), Keylength: 4096}
	_, err := Bootstrap(context.Background(), o)
	require.NoError(b, err)
	n := len(ca.requestLog())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Bootstrap(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.Len(b, ca.requestLog(), n, "a complete ssldir makes no request")
}

// TestBootstrapSSLLock: while another run holds $ssldir/ssl.lock (as
// Puppet's Pidlock writes it), Bootstrap gives up with Puppet's words; a
// lock left by a dead process is taken over; the lock is gone afterwards.
func TestBootstrapSSLLock(t *testing.T) {
	ca := newTestCA(t)
	ca.autosign = true
	ca.start()
	ssldir := t.TempDir()
	lock := filepath.Join(ssldir, "ssl.lock")
	unlock, err := config.Lock(lock)
	require.NoError(t, err)
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "locked", nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Another puppet instance is already running and the waitforlock setting is set to 0; exiting")
	var held *config.LockedError
	assert.ErrorAs(t, err, &held)
	assert.Empty(t, ca.requestLog(), "nothing asked while locked out")
	assert.NoFileExists(t, filepath.Join(ssldir, "private_keys", "locked.pem"))
	unlock()

	// A stale lock (its process is gone) is taken over.
	require.NoError(t, os.WriteFile(lock, []byte("4194303"), 0o644))
	_, err = Bootstrap(context.Background(), options(ca, ssldir, "locked", nil))
	require.NoError(t, err)
	assert.NoFileExists(t, lock)

	// While waiting for signing the lock is released.
	ca.autosign = false
	o := options(ca, t.TempDir(), "waiting", nil)
	o.Waitforcert = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Bootstrap(ctx, o); done <- err }()
	for !ca.pending("waiting") {
		time.Sleep(20 * time.Millisecond)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		unlock, err = config.Lock(filepath.Join(o.SSLDir, "ssl.lock"))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err, "the lock is held during the wait")
	unlock()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}
