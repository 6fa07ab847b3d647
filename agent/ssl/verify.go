package ssl

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"time"
)

// Revocation modes: Puppet's certificate_revocation setting.
const (
	RevocationChain = "chain" // every certificate of a chain is checked against its issuer's CRL
	RevocationLeaf  = "leaf"  // only the peer's own certificate
	RevocationOff   = "false" // no CRL is needed or read
)

// revocationMode normalizes certificate_revocation as Puppet's setting
// does (true is chain, an empty value the default chain).
func revocationMode(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "chain", "true":
		return RevocationChain, nil
	case "leaf":
		return RevocationLeaf, nil
	case "false":
		return RevocationOff, nil
	}
	return "", fmt.Errorf("invalid certificate_revocation %q (chain, leaf or false)", s)
}

// Files are an agent's SSL files, named by its SSL directory and
// certname, with its certificate_revocation setting: the client TLS
// configuration handed to what reaches a Puppet Server without
// bootstrapping (applier/source's puppet:// sources).
type Files struct {
	Dir, Certname, Revocation string
}

// TLSConfig is the TLS configuration of an agent whose ssldir (f.Dir)
// already holds everything (certs/ca.pem, crl.pem unless f.Revocation
// is "false", private_keys/CERTNAME.pem and certs/CERTNAME.pem): the CA
// bundle is the only root, the client certificate is presented, and the
// server's chain is checked against the CRLs as f.Revocation says ("" is
// chain). Nothing is fetched; the files are read without following
// symbolic links. Bootstrap returns the same configuration once it has
// made or fetched what was missing.
func (f Files) TLSConfig() (*tls.Config, error) {
	sslDir, certname, revocation := f.Dir, f.Certname, f.Revocation
	if sslDir == "" {
		return nil, errors.New("no SSL directory (--ssldir)")
	}
	if certname == "" {
		return nil, errors.New("no certname (--certname)")
	}
	mode, err := revocationMode(revocation)
	if err != nil {
		return nil, err
	}
	d, err := openSSLDir(sslDir, false)
	if err != nil {
		return nil, fmt.Errorf("the agent's SSL directory: %w", err)
	}
	defer d.close()
	certs, err := d.sub(certsDir, modePubDir, false)
	if err != nil {
		return nil, fmt.Errorf("the CA certificate of the agent's SSL directory: %w", err)
	}
	defer certs.close()
	caPEM, err := certs.read(caFile)
	if err != nil {
		return nil, fmt.Errorf("the CA certificate of the agent's SSL directory: %w", err)
	}
	cas, err := parseCerts(caPEM, filepath.Join(certs.path, caFile))
	if err != nil {
		return nil, err
	}
	name := fileName(certname)
	certPEM, err := certs.read(name)
	if err != nil {
		return nil, fmt.Errorf("the agent's certificate and key for %s: %w", certname, err)
	}
	keys, err := d.sub(keysDir, modeKeysDir, false)
	if err != nil {
		return nil, fmt.Errorf("the agent's certificate and key for %s: %w", certname, err)
	}
	defer keys.close()
	keyPEM, err := keys.read(name)
	if err != nil {
		return nil, fmt.Errorf("the agent's certificate and key for %s: %w", certname, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the agent's certificate and key for %s: %w", certname, err)
	}
	var crls []*x509.RevocationList
	if mode != RevocationOff {
		data, err := d.read(crlFile)
		if err != nil {
			return nil, fmt.Errorf("the CRL of the agent's SSL directory: %w", err)
		}
		if crls, err = parseCRLs(data, filepath.Join(sslDir, crlFile), cas); err != nil {
			return nil, err
		}
	}
	return clientConfig(cas, crls, mode, cert), nil
}

// clientConfig is the configuration every request of a run uses.
// ServerName is left to the transport (the host of each URL: server,
// ca_server and report_server may differ), which checks it.
func clientConfig(cas []*x509.Certificate, crls []*x509.RevocationList, mode string, cert tls.Certificate) *tls.Config {
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	cfg := &tls.Config{
		RootCAs:    pool,
		MinVersion: tls.VersionTLS12,
	}
	if cert.Certificate != nil {
		cfg.Certificates = []tls.Certificate{cert}
	}
	if mode != RevocationOff {
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { return checkRevoked(cs, crls, mode) }
	}
	return cfg
}

// parseCerts reads every certificate of a PEM bundle.
func parseCerts(data []byte, file string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return out, nil
}

// parseCRLs reads every CRL of a PEM bundle, each checked against the CA
// that issued it.
func parseCRLs(data []byte, file string, cas []*x509.Certificate) ([]*x509.RevocationList, error) {
	var out []*x509.RevocationList
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		ok := false
		for _, ca := range cas {
			if crl.CheckSignatureFrom(ca) == nil {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("%s: invalid signature for CRL issued by '%s'", file, crl.Issuer)
		}
		out = append(out, crl)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no CRL", file)
	}
	return out, nil
}

// crlSlack is how far in the future a CRL's thisUpdate may be, as
// Puppet's verifier forgives a clock a little behind the CA's.
const crlSlack = 5 * time.Minute

// revocation tells whether c is revoked by the CRL of its issuer, the
// one check behind both the server's chain and the agent's own
// certificate: errNoCRL when no CRL of the issuer is known, errCRLTime
// when that CRL is out of its validity.
func revocation(c *x509.Certificate, crls []*x509.RevocationList, now time.Time) (revoked bool, err error) {
	var crl *x509.RevocationList
	for _, l := range crls {
		if bytes.Equal(l.RawIssuer, c.RawIssuer) {
			crl = l
			break
		}
	}
	if crl == nil {
		return false, errNoCRL
	}
	if crl.ThisUpdate.After(now.Add(crlSlack)) {
		return false, fmt.Errorf("%w: not yet valid", errCRLTime)
	}
	if !crl.NextUpdate.IsZero() && now.After(crl.NextUpdate) {
		return false, fmt.Errorf("%w: has expired", errCRLTime)
	}
	for _, e := range crl.RevokedCertificateEntries {
		if sameSerial(e.SerialNumber, c.SerialNumber) {
			return true, nil
		}
	}
	return false, nil
}

var (
	errNoCRL   = errors.New("no CRL of the issuer")
	errCRLTime = errors.New("CRL out of its validity")
)

// checkRevoked refuses a verified server chain one of whose certificates
// (with mode leaf: the server's own) a CRL of its issuer lists; an issuer
// with no CRL is refused too.
func checkRevoked(cs tls.ConnectionState, crls []*x509.RevocationList, mode string) error {
	if len(cs.VerifiedChains) == 0 {
		return errors.New("the server's certificate chain was not verified")
	}
	chain := cs.VerifiedChains[0]
	if mode == RevocationLeaf {
		chain = chain[:1]
	}
	now := time.Now()
	for _, c := range chain {
		revoked, err := revocation(c, crls, now)
		switch {
		case errors.Is(err, errNoCRL):
			return fmt.Errorf("the CRL issued by '%s' is missing", subject(c.Issuer))
		case errors.Is(err, errCRLTime):
			return fmt.Errorf("the CRL issued by '%s' %s, verify time is synchronized", subject(c.Issuer), strings.TrimPrefix(err.Error(), errCRLTime.Error()+": "))
		case revoked:
			return fmt.Errorf("certificate '%s' is revoked", subject(c.Subject))
		}
	}
	return nil
}

func sameSerial(a, b *big.Int) bool { return a != nil && b != nil && a.Cmp(b) == 0 }

// subject renders a name as OpenSSL's one-line form does: /CN=name.
func subject(n pkix.Name) string {
	var b strings.Builder
	for _, a := range n.ToRDNSequence() {
		for _, v := range a {
			k := v.Type.String()
			switch k {
			case "2.5.4.3":
				k = "CN"
			case "2.5.4.10":
				k = "O"
			case "2.5.4.11":
				k = "OU"
			case "2.5.4.6":
				k = "C"
			}
			fmt.Fprintf(&b, "/%s=%v", k, v.Value)
		}
	}
	return b.String()
}

// verifyClient checks the agent's own certificate as Puppet does before
// it uses it (SSLProvider#create_context): valid now, issued by one of the
// CAs, not revoked (as mode says), and matching the private key. Errors
// are in Puppet's words; an issuer that is not in the bundle is only a
// warning (the server may know it), returned as warn.
func verifyClient(cert *x509.Certificate, key crypto.Signer, cas []*x509.Certificate, crls []*x509.RevocationList, mode string, now time.Time) (warn string, err error) {
	name := cert.Subject.String()
	if now.Before(cert.NotBefore) {
		return "", fmt.Errorf("The certificate '%s' is not yet valid, verify time is synchronized", name)
	}
	if now.After(cert.NotAfter) {
		return "", fmt.Errorf("The certificate '%s' has expired, verify time is synchronized", name)
	}
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	chains, verr := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	var chain []*x509.Certificate
	if verr != nil {
		var ua x509.UnknownAuthorityError
		if !errors.As(verr, &ua) {
			return "", fmt.Errorf("Certificate '%s' failed verification: %w", name, verr)
		}
		warn = fmt.Sprintf("The issuer '%s' of certificate '%s' cannot be found locally", cert.Issuer.String(), name)
		chain = []*x509.Certificate{cert}
	} else {
		chain = chains[0]
	}
	if mode != RevocationOff && verr == nil {
		check := chain
		if mode == RevocationLeaf {
			check = chain[:1]
		}
		for _, c := range check {
			revoked, err := revocation(c, crls, now)
			switch {
			case errors.Is(err, errNoCRL):
				return "", fmt.Errorf("The CRL issued by '%s' is missing", c.Issuer.String())
			case errors.Is(err, errCRLTime):
				return "", fmt.Errorf("The CRL issued by '%s' %s, verify time is synchronized", c.Issuer.String(), strings.TrimPrefix(err.Error(), errCRLTime.Error()+": "))
			case revoked:
				return "", fmt.Errorf("Certificate '%s' is revoked", c.Subject.String())
			}
		}
	}
	if !samePublicKey(cert.PublicKey, key.Public()) {
		return "", fmt.Errorf("The certificate for '%s' does not match its private key", name)
	}
	return warn, nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}
