// Package ssl keeps the agent's certificates as Puppet 7's agent does
// (`puppet ssl bootstrap`, Puppet::SSL::StateMachine), in the ssldir
// Puppet lays out, so that an ssldir made by either is used by the other.
//
// Bootstrap walks the states Puppet's agent walks: the CA bundle
// (certs/ca.pem, downloaded from the CA when missing), the CRL (crl.pem,
// downloaded when missing, refreshed when crl_refresh_interval says),
// the private key (private_keys/NAME.pem, made when missing), and the
// client certificate (certs/NAME.pem): when it is missing a request is
// made (certificate_requests/NAME.pem, with dns_alt_names and
// csr_attributes.yaml), submitted, and the certificate fetched; not yet
// signed, Bootstrap waits waitforcert between tries, or fails at once
// with Puppet's words when waitforcert is 0. Everything found or fetched
// is checked before it is written or used: the CA bundle must verify the
// very server it came from, a CRL must be signed by a CA of the bundle,
// the certificate must chain to the bundle, be valid now, not be revoked
// and match the key.
//
// The ssldir is handled as an attacker with a shell would find it: every
// file below it is read and written relative to its directory's
// descriptor without following symbolic links (a link in place of a key,
// a certificate or a subdirectory is refused), every write is a new
// temporary file synced and renamed over the old one, and a private key
// is never readable by others, at any moment.
//
// The TLS configuration Bootstrap returns (TLSConfig builds the same from
// a complete ssldir without any request) presents the client certificate,
// trusts only the CA bundle and checks the server's chain against the
// CRLs; puppet:// file sources use it too (applier/source).
package ssl

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pippet/pippet/agent/config"
	"github.com/pippet/pippet/internal/puppetlog"
)

// Options are the agent's settings Bootstrap follows.
type Options struct {
	SSLDir, Certname string
	// CAServer and CAPort: ca_server and ca_port (8140 when 0).
	CAServer string
	CAPort   int
	// Waitforcert: how long to wait between tries while the certificate
	// is not signed; 0 does not wait (Puppet's words, ErrNotSigned).
	Waitforcert time.Duration
	// MaxWaitforcert: maxwaitforcert, how long to wait at most (0:
	// unlimited, Puppet's default).
	MaxWaitforcert time.Duration
	// Keylength: the bits of a new RSA key (keylength, 4096 when 0).
	Keylength int
	// CertificateRevocation: chain (default), leaf or false.
	CertificateRevocation string
	// CSRAttributes: the csr_attributes file (read when it exists);
	// DNSAltNames: dns_alt_names, put in the request with the certname.
	CSRAttributes string
	DNSAltNames   []string
	// CAFingerprint: ca_fingerprint, the SHA-256 digest (hex) the CA
	// bundle must have when it is first downloaded.
	CAFingerprint string
	// CRLRefreshInterval: crl_refresh_interval; when the CRL is older, a
	// newer one is asked for (If-Modified-Since). 0: never, Puppet's
	// default.
	CRLRefreshInterval time.Duration
	// SSLLockfile: ssl_lockfile, the lock held while the ssldir is
	// worked on ($ssldir/ssl.lock when empty), Puppet's pid lock: a
	// Puppet agent and receiver agent never bootstrap at once.
	SSLLockfile string
	// Timeout bounds each request (60 s when 0).
	Timeout time.Duration
	// Log gets Puppet's lines ("Creating a new RSA SSL key for NAME",
	// "Will try again in 120 seconds.", ...) at info and notice levels.
	Log *slog.Logger
}

// ErrNotSigned is what the error Bootstrap returns satisfies
// (errors.Is) when it gave up waiting for the CA to sign the request
// (waitforcert 0, or maxwaitforcert exceeded); Puppet's agent exits 1.
var ErrNotSigned = errors.New("the certificate is not signed yet")

type notSignedError struct{ msg string }

func (e *notSignedError) Error() string        { return e.msg }
func (e *notSignedError) Is(target error) bool { return target == ErrNotSigned }

// errPending ends a pass when the CA has not signed the certificate yet.
var errPending = errors.New("pending")

// Bootstrap makes sure the ssldir holds the CA certificate, the CRL, the
// key and a signed certificate, making, submitting, waiting for and
// downloading what is missing as Puppet's agent does, and returns the
// TLS client configuration every request of the run uses. Errors other
// than "not signed yet" end it at once (as `puppet agent --onetime`).
func Bootstrap(ctx context.Context, o Options) (*tls.Config, error) {
	m, err := newMachine(o)
	if err != nil {
		return nil, err
	}
	var deadline time.Time
	if o.MaxWaitforcert > 0 {
		deadline = time.Now().Add(o.MaxWaitforcert)
	}
	couldnt := fmt.Sprintf("Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (%s).", m.certname)
	for {
		cfg, err := m.pass(ctx)
		if !errors.Is(err, errPending) {
			return cfg, err
		}
		if m.o.Waitforcert <= 0 {
			return nil, &notSignedError{couldnt + " Exiting now because the waitforcert setting is set to 0."}
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return nil, &notSignedError{couldnt + " Exiting now because the maxwaitforcert timeout has been exceeded."}
		}
		m.log.Log(ctx, puppetlog.LevelNotice, couldnt)
		m.log.Info(fmt.Sprintf("Will try again in %d seconds.", int64(m.o.Waitforcert/time.Second)))
		t := time.NewTimer(m.o.Waitforcert)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the certificate of %s to be signed: %w", m.certname, ctx.Err())
		case <-t.C:
		}
	}
}

// machine is one Bootstrap: its settings and what the passes share.
type machine struct {
	o        Options
	certname string
	file     string // NAME.pem
	mode     string // revocation
	base     string // https://ca_server:ca_port/puppet-ca/v1
	log      *slog.Logger
	now      func() time.Time
}

func newMachine(o Options) (*machine, error) {
	if o.SSLDir == "" {
		return nil, errors.New("no SSL directory (ssldir)")
	}
	if err := validCertname(o.Certname); err != nil {
		return nil, err
	}
	mode, err := revocationMode(o.CertificateRevocation)
	if err != nil {
		return nil, err
	}
	if o.CAServer == "" {
		return nil, errors.New("no CA server (ca_server, server)")
	}
	if o.CAPort == 0 {
		o.CAPort = 8140
	}
	if o.CAPort < 0 || o.CAPort > 65535 {
		return nil, fmt.Errorf("ca_port %d is not a port", o.CAPort)
	}
	if o.Keylength == 0 {
		o.Keylength = 4096
	}
	if o.Keylength < 1024 || o.Keylength > 16384 {
		return nil, fmt.Errorf("keylength %d is out of range (1024 to 16384 bits)", o.Keylength)
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &machine{
		o: o, certname: o.Certname, file: fileName(o.Certname), mode: mode,
		base: "https://" + net.JoinHostPort(o.CAServer, strconv.Itoa(o.CAPort)) + "/puppet-ca/v1",
		log:  log, now: time.Now,
	}, nil
}

// validCertname is Puppet's rule for certname (lower case) and for the
// names of the ssldir's files (printable ASCII, no slash).
func validCertname(name string) error {
	if name == "" {
		return errors.New("no certname")
	}
	if name != strings.ToLower(name) {
		return errors.New("Certificate names must be lower case")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c > '~' || c == '/' {
			return fmt.Errorf("Certname %q must not contain unprintable or non-ASCII characters", name)
		}
	}
	if name == "." || name == ".." {
		return fmt.Errorf("certname %q is not a file name", name)
	}
	return nil
}

// fileName is the file of certname in the ssldir's directories: Puppet
// keeps them in lower case.
func fileName(certname string) string { return strings.ToLower(certname) + ".pem" }

// ssldir is the ssldir opened for one pass.
type ssldir struct {
	root, certs, keys, requests *dir
}

func (s *ssldir) close() {
	for _, d := range []*dir{s.certs, s.keys, s.requests, s.root} {
		d.close()
	}
}

func (m *machine) open() (*ssldir, error) {
	root, err := openSSLDir(m.o.SSLDir, true)
	if err != nil {
		return nil, err
	}
	if err := chownServiceDir(root); err != nil {
		root.close()
		return nil, err
	}
	s := &ssldir{root: root}
	for _, sd := range subdirs {
		d, err := root.sub(sd.name, sd.mode, true)
		if err != nil {
			s.close()
			return nil, err
		}
		if err := chownServiceDir(d); err != nil {
			d.close()
			s.close()
			return nil, err
		}
		switch sd.name {
		case certsDir:
			s.certs = d
		case keysDir:
			s.keys = d
		case requestsDir:
			s.requests = d
		default:
			d.close()
		}
	}
	return s, nil
}

// pass is one walk through Puppet's states, from NeedCACerts to Done;
// errPending when the certificate is not signed yet.
func (m *machine) pass(ctx context.Context) (*tls.Config, error) {
	s, err := m.open()
	if err != nil {
		return nil, err
	}
	defer s.close()
	// Puppet's NeedLock, with its default waitforlock 0: held by another
	// run, give up at once. Released before any wait for signing.
	lockfile := m.o.SSLLockfile
	if lockfile == "" {
		lockfile = filepath.Join(m.o.SSLDir, "ssl.lock")
	}
	unlock, err := config.Lock(lockfile)
	if err != nil {
		var held *config.LockedError
		if errors.As(err, &held) {
			return nil, fmt.Errorf("Another puppet instance is already running and the waitforlock setting is set to 0; exiting (%w)", err)
		}
		return nil, err
	}
	defer unlock()
	cas, err := m.caCerts(ctx, s)
	if err != nil {
		return nil, err
	}
	var crls []*x509.RevocationList
	if m.mode == RevocationOff {
		m.log.Info("Certificate revocation is disabled, skipping CRL download")
	} else if crls, err = m.crls(ctx, s, cas); err != nil {
		return nil, err
	}
	key, err := m.key(s)
	if err != nil {
		return nil, err
	}
	certPEM, err := s.certs.read(m.file)
	switch {
	case err == nil:
		cert, err := parseClientCert(certPEM, filepath.Join(s.certs.path, m.file))
		if err != nil {
			return nil, err
		}
		return m.done(cas, crls, key, cert)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("Failed to load client certificate for '%s': %w", m.certname, err)
	}
	if err := m.submitCSR(ctx, s, cas, crls, key); err != nil {
		return nil, err
	}
	cert, err := m.fetchCert(ctx, cas, crls)
	if err != nil {
		return nil, err
	}
	cfg, err := m.done(cas, crls, key, cert)
	if err != nil {
		return nil, err
	}
	if err := s.certs.write(m.file, pemBlock("CERTIFICATE", cert.Raw), modePublic); err != nil {
		return nil, fmt.Errorf("Failed to save client certificate for '%s': %w", m.certname, err)
	}
	if err := s.requests.remove(m.file); err != nil {
		return nil, fmt.Errorf("Failed to delete certificate request for '%s': %w", m.certname, err)
	}
	return cfg, nil
}

// done checks the certificate with the key, the CAs and the CRLs, and
// makes the client configuration.
func (m *machine) done(cas []*x509.Certificate, crls []*x509.RevocationList, key crypto.Signer, cert *x509.Certificate) (*tls.Config, error) {
	warn, err := verifyClient(cert, key, cas, crls, m.mode, m.now())
	if err != nil {
		return nil, err
	}
	if warn != "" {
		m.log.Warn(warn)
	}
	return clientConfig(cas, crls, m.mode, tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}), nil
}

func parseClientCert(data []byte, where string) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("Failed to parse certificate: %s holds no PEM certificate", where)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("Failed to parse certificate: %s: %w", where, err)
	}
	return c, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// caCerts loads certs/ca.pem or downloads it (NeedCACerts). The first
// download cannot authenticate the server (there is nothing to trust
// yet: Puppet trusts on first use, or ca_fingerprint); what it can check
// is that the bundle verifies the certificate of the server that sent
// it, for the name it was reached by, and nothing is saved otherwise.
func (m *machine) caCerts(ctx context.Context, s *ssldir) ([]*x509.Certificate, error) {
	where := filepath.Join(s.certs.path, caFile)
	data, err := s.certs.read(caFile)
	if err == nil {
		return parseCerts(data, where)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("Failed to load CA certificates from '%s': %w", where, err)
	}
	var peer []*x509.Certificate
	insecure := &tls.Config{
		InsecureSkipVerify: true, // checked below, against what is downloaded
		MinVersion:         tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			peer = cs.PeerCertificates
			return nil
		},
	}
	status, body, err := m.do(ctx, insecure, http.MethodGet, "/certificate/ca", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("Could not download CA certificate: %w", err)
	}
	switch {
	case status == http.StatusNotFound:
		return nil, errors.New("CA certificate is missing from the server")
	case status != http.StatusOK:
		return nil, fmt.Errorf("Could not download CA certificate: %s", httpReason(status, body))
	}
	if m.o.CAFingerprint != "" {
		sum := sha256.Sum256(body)
		actual := colonHex(sum[:])
		expected := colonHex(nil)
		if h, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m.o.CAFingerprint), ":", "")); err == nil {
			expected = colonHex(h)
		}
		if actual != expected {
			return nil, fmt.Errorf("CA bundle with digest (SHA256) %s did not match expected digest %s", actual, strings.ToUpper(m.o.CAFingerprint))
		}
		m.log.Info(fmt.Sprintf("Verified CA bundle with digest (SHA256) %s", actual))
	}
	if !strings.Contains(string(body), "-----BEGIN CERTIFICATE-----") {
		return nil, errors.New("Failed to parse CA certificates as PEM")
	}
	cas, err := parseCerts(body, m.base+"/certificate/ca")
	if err != nil {
		return nil, err
	}
	if err := verifyPeer(peer, cas, m.o.CAServer); err != nil {
		return nil, fmt.Errorf("the CA certificate downloaded from %s does not verify that server's own certificate: refused, nothing saved: %w", m.base, err)
	}
	var out []byte
	for _, c := range cas {
		out = append(out, pemBlock("CERTIFICATE", c.Raw)...)
	}
	if err := s.certs.write(caFile, out, modePublic); err != nil {
		return nil, fmt.Errorf("Failed to save CA certificates to '%s': %w", where, err)
	}
	return cas, nil
}

// verifyPeer checks the chain a server presented against cas and the
// name it was reached by.
func verifyPeer(peer []*x509.Certificate, cas []*x509.Certificate, host string) error {
	if len(peer) == 0 {
		return errors.New("the server presented no certificate")
	}
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	for _, c := range peer[1:] {
		inter.AddCert(c)
	}
	_, err := peer[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host})
	return err
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(parts, ":")
}

// crls loads crl.pem or downloads it (NeedCRLs), refreshing it when
// crl_refresh_interval says. The download checks the server against the
// CA bundle, not against a CRL (there may be none yet).
func (m *machine) crls(ctx context.Context, s *ssldir, cas []*x509.Certificate) ([]*x509.RevocationList, error) {
	where := filepath.Join(s.root.path, crlFile)
	data, err := s.root.read(crlFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("Failed to load CRLs from '%s': %w", where, err)
	}
	if err != nil {
		crls, err := m.downloadCRL(ctx, s, cas, time.Time{})
		if err != nil {
			return nil, err
		}
		return crls, nil
	}
	crls, err := parseCRLs(data, where, cas)
	if err != nil {
		return nil, err
	}
	if ttl := m.o.CRLRefreshInterval; ttl > 0 {
		last, ok := s.root.mtime(crlFile)
		now := m.now()
		if !ok || now.Sub(last) > ttl {
			// As Puppet: the time of the attempt first, then a best effort.
			if err := s.root.touch(crlFile, now); err != nil {
				return nil, err
			}
			m.log.Info("Refreshing CRL")
			fresh, err := m.downloadCRL(ctx, s, cas, last)
			switch {
			case errors.Is(err, errNotModified):
				m.log.Info("CRL is unmodified, using existing CRL")
			case err != nil:
				m.log.Warn(fmt.Sprintf("Failed to refresh CRL, using existing CRL: %v", err))
			default:
				crls = fresh
			}
		}
	}
	return crls, nil
}

var errNotModified = errors.New("not modified")

func (m *machine) downloadCRL(ctx context.Context, s *ssldir, cas []*x509.Certificate, since time.Time) ([]*x509.RevocationList, error) {
	var hdr http.Header
	if !since.IsZero() {
		// HTTP dates have whole seconds, and the CA answers 304 unless
		// its CRL's second is later than ours: a CRL the CA changed in
		// the second our copy was fetched (or our last refresh was
		// answered) would never come. Ask from the second before: at
		// worst a CRL is fetched once more. (Puppet sends its copy's
		// mtime and keeps the stale CRL.)
		hdr = http.Header{"If-Modified-Since": {since.Add(-time.Second).UTC().Format(http.TimeFormat)}}
	}
	status, body, err := m.do(ctx, clientConfig(cas, nil, RevocationOff, tls.Certificate{}), http.MethodGet, "/certificate_revocation_list/ca", hdr, nil)
	if err != nil {
		return nil, fmt.Errorf("Could not download CRLs: %w", err)
	}
	switch {
	case status == http.StatusNotModified && !since.IsZero():
		return nil, errNotModified
	case status == http.StatusNotFound:
		return nil, errors.New("CRL is missing from the server")
	case status != http.StatusOK:
		return nil, fmt.Errorf("Could not download CRLs: %s", httpReason(status, body))
	}
	if !strings.Contains(string(body), "-----BEGIN X509 CRL-----") {
		return nil, errors.New("Failed to parse CRLs as PEM")
	}
	crls, err := parseCRLs(body, m.base+"/certificate_revocation_list/ca", cas)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, c := range crls {
		out = append(out, pemBlock("X509 CRL", c.Raw)...)
	}
	if err := s.root.write(crlFile, out, modePublic); err != nil {
		return nil, fmt.Errorf("Failed to save CRLs to '%s': %w", filepath.Join(s.root.path, crlFile), err)
	}
	return crls, nil
}

// key loads private_keys/NAME.pem or makes and saves a new RSA key
// (NeedKey).
func (m *machine) key(s *ssldir) (crypto.Signer, error) {
	data, err := s.keys.read(m.file)
	if err == nil {
		k, err := parseKey(data)
		if err != nil {
			return nil, fmt.Errorf("Failed to load private key for host '%s': %s: %w", m.certname, filepath.Join(s.keys.path, m.file), err)
		}
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("Failed to load private key for '%s': %w", m.certname, err)
	}
	m.log.Info(fmt.Sprintf("Creating a new RSA SSL key for %s", m.certname))
	k, err := rsa.GenerateKey(rand.Reader, m.o.Keylength)
	if err != nil {
		return nil, fmt.Errorf("making an RSA key of %d bits: %w", m.o.Keylength, err)
	}
	if err := s.keys.write(m.file, pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)), modeKey); err != nil {
		return nil, fmt.Errorf("Failed to save private key for '%s': %w", m.certname, err)
	}
	return k, nil
}

// parseKey reads a PEM private key as Puppet writes them (PKCS #1 RSA)
// or as other tools do (PKCS #8, SEC 1 EC); an encrypted key is refused
// (Puppet's passfile is not supported).
func parseKey(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("no PEM private key")
	}
	if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
		return nil, errors.New("the key is encrypted (a password file is not supported)")
	}
	var k any
	var err error
	switch b.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("a PEM block %q is not a private key", b.Type)
	}
	if err != nil {
		return nil, err
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("Unsupported key '%T'", k)
}

// submitCSR makes the request and PUTs it (NeedSubmitCSR). A 400 answer
// (the CA already holds a request or a certificate for the name) goes on
// to fetching the certificate, as Puppet does.
func (m *machine) submitCSR(ctx context.Context, s *ssldir, cas []*x509.Certificate, crls []*x509.RevocationList, key crypto.Signer) error {
	m.log.Info(fmt.Sprintf("csr_attributes file loading from %s", m.o.CSRAttributes))
	attrs, _, err := loadCSRAttributes(m.o.CSRAttributes)
	if err != nil {
		return err
	}
	m.log.Info(fmt.Sprintf("Creating a new SSL certificate request for %s", m.certname))
	der, err := makeCSR(m.certname, key, m.o.DNSAltNames, attrs)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(der)
	m.log.Info(fmt.Sprintf("Certificate Request fingerprint (SHA256): %s", colonHex(sum[:])))
	csrPEM := pemBlock("CERTIFICATE REQUEST", der)
	status, body, err := m.do(ctx, clientConfig(cas, crls, m.mode, tls.Certificate{}), http.MethodPut,
		"/certificate_request/"+url.PathEscape(m.certname), http.Header{"Content-Type": {"text/plain"}}, csrPEM)
	if err != nil {
		return fmt.Errorf("Failed to submit the CSR: %w", err)
	}
	switch {
	case status == http.StatusBadRequest:
		return nil
	case status < 200 || status > 299:
		return fmt.Errorf("Failed to submit the CSR, HTTP response was %d (%s)", status, httpReason(status, body))
	}
	if err := s.requests.write(m.file, csrPEM, modePublic); err != nil {
		return fmt.Errorf("Failed to save certificate request for '%s': %w", m.certname, err)
	}
	return nil
}

// fetchCert GETs the certificate (NeedCert): errPending when the CA has
// not signed it yet.
func (m *machine) fetchCert(ctx context.Context, cas []*x509.Certificate, crls []*x509.RevocationList) (*x509.Certificate, error) {
	status, body, err := m.do(ctx, clientConfig(cas, crls, m.mode, tls.Certificate{}), http.MethodGet,
		"/certificate/"+url.PathEscape(m.certname), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("Failed to retrieve certificate for %s: %w", m.certname, err)
	}
	switch {
	case status == http.StatusNotFound:
		m.log.Info(fmt.Sprintf("Certificate for %s has not been signed yet", m.certname))
		return nil, errPending
	case status != http.StatusOK:
		return nil, fmt.Errorf("Failed to retrieve certificate for %s: %s", m.certname, httpReason(status, body))
	}
	cert, err := parseClientCert(body, m.base+"/certificate/"+m.certname)
	if err != nil {
		return nil, err
	}
	m.log.Info(fmt.Sprintf("Downloaded certificate for %s from %s", m.certname, m.base))
	return cert, nil
}

// maxAnswer bounds an answer of the CA (a CRL is the largest).
const maxAnswer = maxPEM

// do makes one request to the CA with the TLS configuration of the
// current state, and returns the status and the body.
func (m *machine) do(ctx context.Context, cfg *tls.Config, method, path string, hdr http.Header, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, m.o.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/plain")
	req.Header.Set("User-Agent", "pippet")
	tr := &http.Transport{
		TLSClientConfig:     cfg,
		DialContext:         (&net.Dialer{Timeout: m.o.Timeout}).DialContext,
		TLSHandshakeTimeout: m.o.Timeout,
		DisableKeepAlives:   true,
	}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, fmt.Errorf("request to %s: %w", m.base+path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer of %s: %w", m.base+path, err)
	}
	if len(b) > maxAnswer {
		return 0, nil, fmt.Errorf("the answer of %s is larger than %d bytes", m.base+path, maxAnswer)
	}
	return resp.StatusCode, b, nil
}

// httpReason is what Puppet's errors quote of an error answer: the
// reason phrase, with the server's message when it sent a short one.
func httpReason(status int, body []byte) string {
	reason := http.StatusText(status)
	if reason == "" {
		reason = "HTTP " + strconv.Itoa(status)
	}
	msg := strings.TrimSpace(string(body))
	if msg != "" && len(msg) <= 512 && !strings.ContainsAny(msg, "\x00\x1b") {
		return reason + ": " + msg
	}
	return reason
}
