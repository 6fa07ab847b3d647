// Package sourcetest holds test helpers for sources: an HTTPS server on
// loopback with a certificate from its own CA.
package sourcetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TLSServer starts an HTTPS server on loopback whose certificate is
// signed by a CA made for the test; it returns the server and the path of
// the CA's PEM file.
func TLSServer(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pippet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644))
	return srv, caFile
}

// PuppetCA is a Puppet-like CA made for a test, with an agent's SSL
// directory laid out as the agent keeps it (certs/CERTNAME.pem,
// private_keys/CERTNAME.pem, certs/ca.pem, crl.pem) and a server
// certificate for localhost and 127.0.0.1.
type PuppetCA struct {
	SSLDir   string
	Certname string
	server   tls.Certificate
	pool     *x509.CertPool
}

// NewPuppetCA makes the CA, the agent's and the server's certificates and
// the CRL; with revokeServer the CRL lists the server's certificate.
func NewPuppetCA(t testing.TB, revokeServer bool) *PuppetCA {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Puppet CA: pippet test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) (tls.Certificate, []byte, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
			tmpl.DNSNames = []string{"localhost", "puppet"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		require.NoError(t, err)
		kder, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
			pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	}
	srvCert, _, _ := leaf(2, "localhost", x509.ExtKeyUsageServerAuth, true)
	_, agentPEM, agentKey := leaf(3, "agent.test", x509.ExtKeyUsageClientAuth, false)
	crlTmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: now.Add(-time.Hour), NextUpdate: now.Add(time.Hour)}
	if revokeServer {
		crlTmpl.RevokedCertificateEntries = []x509.RevocationListEntry{{SerialNumber: big.NewInt(2), RevocationTime: now.Add(-time.Minute)}}
	}
	crlDER, err := x509.CreateRevocationList(rand.Reader, crlTmpl, caCert, caKey)
	require.NoError(t, err)
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"certs/ca.pem":                pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"certs/agent.test.pem":        agentPEM,
		"private_keys/agent.test.pem": agentKey,
		"crl.pem":                     pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crlDER}),
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o600))
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &PuppetCA{SSLDir: dir, Certname: "agent.test", server: srvCert, pool: pool}
}

// Serve starts an HTTPS server with the CA's server certificate that
// requires the agent's certificate, on addr ("" for any free port on
// loopback); each configure func may set the server up before it starts.
func (c *PuppetCA) Serve(t testing.TB, h http.Handler, addr string, configure ...func(*http.Server)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	if addr != "" {
		srv.Listener.Close()
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		srv.Listener = l
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{c.server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: c.pool}
	for _, f := range configure {
		f(srv.Config)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
