package agent

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pippet/pippet/agent/config"
)

// ErrNoFingerprint: neither the certificate nor the certificate request
// is there (Puppet's words, which `puppet agent --fingerprint` prints on
// stderr before it exits 1).
var ErrNoFingerprint = errors.New("Fingerprint asked but neither the certificate, nor the certificate request have been issued")

// digests are the algorithms --digest takes (OpenSSL's names, any case),
// with the name Puppet prints.
var digests = map[string]struct {
	name string
	new  func() hash.Hash
}{
	"md5":        {"MD5", md5.New},
	"sha1":       {"SHA1", sha1.New},
	"sha224":     {"SHA224", sha256.New224},
	"sha2-224":   {"SHA224", sha256.New224},
	"sha256":     {"SHA256", sha256.New},
	"sha2-256":   {"SHA256", sha256.New},
	"sha384":     {"SHA384", sha512.New384},
	"sha2-384":   {"SHA384", sha512.New384},
	"sha512":     {"SHA512", sha512.New},
	"sha2-512":   {"SHA512", sha512.New},
	"sha512-224": {"SHA512-224", sha512.New512_224},
	"sha512-256": {"SHA512-256", sha512.New512_256},
	"sha3-224":   {"SHA3-224", func() hash.Hash { return sha3.New224() }},
	"sha3-256":   {"SHA3-256", func() hash.Hash { return sha3.New256() }},
	"sha3-384":   {"SHA3-384", func() hash.Hash { return sha3.New384() }},
	"sha3-512":   {"SHA3-512", func() hash.Hash { return sha3.New512() }},
}

// Fingerprint is what `puppet agent --fingerprint [--digest ALG]`
// prints: the digest of the agent's certificate (the hostcert setting's
// file), else of its pending certificate request (REQUESTDIR/CERTNAME.pem),
// in DER, as "(SHA256) AB:CD:...". digest "" is SHA256. The error is
// ErrNoFingerprint when there is neither; others say what could not be
// read (Puppet's "Failed to generate fingerprint: ...").
func Fingerprint(s *config.Settings, digest string) (string, error) {
	if digest == "" {
		digest = "SHA256"
	}
	d, ok := digests[strings.ToLower(digest)]
	if !ok {
		return "", fmt.Errorf("Unsupported digest algorithm (%s)", digest)
	}
	certPath := s.Values["hostcert"]
	if certPath == "" {
		certPath = filepath.Join(s.SSLDir, "certs", s.Certname+".pem")
	}
	reqDir := s.Values["requestdir"]
	if reqDir == "" {
		reqDir = filepath.Join(s.SSLDir, "certificate_requests")
	}
	der, err := readDER(certPath, "CERTIFICATE", func(b []byte) error { _, err := x509.ParseCertificate(b); return err })
	if errors.Is(err, os.ErrNotExist) {
		der, err = readDER(filepath.Join(reqDir, s.Certname+".pem"), "CERTIFICATE REQUEST",
			func(b []byte) error { _, err := x509.ParseCertificateRequest(b); return err })
		if errors.Is(err, os.ErrNotExist) {
			return "", ErrNoFingerprint
		}
	}
	if err != nil {
		return "", err
	}
	h := d.new()
	h.Write(der)
	sum := strings.ToUpper(hex.EncodeToString(h.Sum(nil)))
	pairs := make([]string, 0, len(sum)/2)
	for i := 0; i < len(sum); i += 2 {
		pairs = append(pairs, sum[i:i+2])
	}
	return "(" + d.name + ") " + strings.Join(pairs, ":"), nil
}

// readDER reads the first PEM block of kind from path (a few KiB at
// most) and checks it parses.
func readDER(path, kind string, parse func([]byte) error) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%s: no %s in it", path, kind)
		}
		if blk.Type == kind || kind == "CERTIFICATE REQUEST" && blk.Type == "NEW CERTIFICATE REQUEST" {
			if err := parse(blk.Bytes); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return blk.Bytes, nil
		}
	}
}
