package puppetserver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRevokedServerCertificateRefused revokes the server's certificate,
// so it must run after every other test of the package that needs the
// CA: go runs a package's tests file by file in name order, and this
// file is named to come last. The agent ssldir the other tests use
// keeps the CRL taken before.
func TestRevokedServerCertificateRefused(t *testing.T) {
	s := need(t)
	require.NoError(t, ca(s.confFile, "revoke", "--certname", "localhost"))
	ssl := t.TempDir()
	for _, f := range []string{"certs/ca.pem", "certs/agent1.pem", "private_keys/agent1.pem"} {
		require.NoError(t, copyFile(filepath.Join(s.agentSSL, f), filepath.Join(ssl, f), 0o600))
	}
	require.NoError(t, copyFile(filepath.Join(s.dir, "puppet", "ca", "ca_crl.pem"), filepath.Join(ssl, "crl.pem"), 0o644))
	dst := filepath.Join(t.TempDir(), "motd")
	meta0 := s.settle(t, "file_metadata", "motd", 0)
	a := receive(t, s, ssl, fileReq(1, dst, "{source: 'puppet:///modules/testmod/motd'}"))
	assert.Contains(t, a[0], `"failed":true`)
	assert.Contains(t, a[0], `certificate '/CN=localhost' is revoked`)
	assert.NoFileExists(t, dst)
	assert.Equal(t, meta0, s.settle(t, "file_metadata", "motd", meta0), "a request went through a revoked certificate")
}
