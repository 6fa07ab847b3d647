package puppetserver

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/internal/testutil"
)

// uniqueName is a certname no other test (or earlier run) uses.
func uniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// waitFile waits until path exists (or the deadline).
func waitFile(t *testing.T, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %s", path, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nodeRequest asks the server for the node of certname with cfg: the
// server's auth.conf lets only that certificate have it.
func nodeRequest(s *server, cfg *tls.Config, certname string) (int, string, error) {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 2 * time.Minute}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://localhost:%d/puppet/v3/node/%s?environment=production", s.port, certname), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestAgentSSLBootstrapAgainstPuppetServer: a fresh ssldir, a new
// certname; Bootstrap submits the request and waits; the test signs it
// with `puppetserver ca sign` meanwhile; the files then let a request
// through that only this certificate may make. Real `puppet ssl
// bootstrap` does the same for another certname, and both ssldirs are
// compared: the same files, modes, owners and formats.
func TestAgentSSLBootstrapAgainstPuppetServer(t *testing.T) {
	s := need(t)
	root := t.TempDir()
	name := uniqueName("pippet-ssl")
	ssldir := filepath.Join(root, "pippet", "ssl")
	var logs testutil.SyncBuffer
	o := ssl.Options{
		SSLDir: ssldir, Certname: name, CAServer: "localhost", CAPort: s.port,
		Waitforcert: 2 * time.Second, Timeout: time.Minute,
		CSRAttributes: filepath.Join(root, "pippet", "csr_attributes.yaml"),
		Log:           slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	type result struct {
		cfg *tls.Config
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		cfg, err := ssl.Bootstrap(ctx, o)
		done <- result{cfg, err}
	}()
	// Submitted (the request is saved once the CA took it), then waiting.
	waitFile(t, filepath.Join(ssldir, "certificate_requests", name+".pem"), 2*time.Minute)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), "Will try again in 2 seconds.") {
		require.True(t, time.Now().Before(deadline), "Bootstrap did not wait:\n%s", logs.String())
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, ca(s.confFile, "sign", "--certname", name))
	r := <-done
	require.NoError(t, r.err, logs.String())
	t.Logf("bootstrapped %s in %.1fs (signing included)", name, time.Since(start).Seconds())
	out := logs.String()
	for _, want := range []string{
		"Creating a new RSA SSL key for " + name,
		"Creating a new SSL certificate request for " + name,
		"Certificate Request fingerprint (SHA256): ",
		"Certificate for " + name + " has not been signed yet",
		"Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (" + name + ").",
		fmt.Sprintf("Downloaded certificate for %s from https://localhost:%d/puppet-ca/v1", name, s.port),
	} {
		assert.Contains(t, out, want)
	}

	// The certificate is this node's: the node endpoint answers it.
	code, body, err := nodeRequest(s, r.cfg, name)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"name":"`+name+`"`)
	// And the same files, read again with no request, do too.
	cfg, err := ssl.Files{Dir: ssldir, Certname: name, Revocation: "chain"}.TLSConfig()
	require.NoError(t, err)
	code, body, err = nodeRequest(s, cfg, name)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	// Another node's is refused to it (so the certificate was presented
	// and checked, not merely accepted).
	code, _, err = nodeRequest(s, cfg, "agent1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, code)

	// Real Puppet, for another certname, into its own ssldir.
	other := uniqueName("puppet-ssl")
	pdir := filepath.Join(root, "puppet")
	pssl := filepath.Join(pdir, "ssl")
	require.NoError(t, os.MkdirAll(pdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pdir, "puppet.conf"), nil, 0o644))
	cmd := exec.CommandContext(ctx, "puppet", "ssl", "bootstrap", "--certname", other, "--ssldir", pssl,
		"--server", "localhost", "--serverport", fmt.Sprint(s.port), "--waitforcert", "2",
		"--confdir", pdir, "--vardir", filepath.Join(pdir, "var"), "--logdir", filepath.Join(pdir, "log"),
		"--rundir", filepath.Join(pdir, "run"), "--codedir", filepath.Join(pdir, "code"))
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	var pout testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &pout, &pout
	require.NoError(t, cmd.Start())
	deadline = time.Now().Add(2 * time.Minute)
	for !strings.Contains(pout.String(), "Will try again in 2 seconds.") {
		require.True(t, time.Now().Before(deadline), "puppet ssl bootstrap did not wait:\n%s", pout.String())
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, ca(s.confFile, "sign", "--certname", other))
	require.NoError(t, cmd.Wait(), pout.String())
	t.Logf("puppet ssl bootstrap said:\n%s", pout.String())
	for _, want := range []string{
		"Creating a new RSA SSL key for " + other,
		"Creating a new SSL certificate request for " + other,
		"Certificate for " + other + " has not been signed yet",
		"Couldn't fetch certificate from CA server; you might still need to sign this agent's certificate (" + other + ").",
		"Will try again in 2 seconds.",
		"Downloaded certificate for " + other + " from https://localhost:",
	} {
		assert.Contains(t, pout.String(), want, "Puppet's words changed?")
	}

	// The two ssldirs: the same entries (names of the certname mapped),
	// modes, owners; the same CA bundle and CRL; keys of the same kind.
	ours, theirs := tree(t, ssldir, name), tree(t, pssl, other)
	assert.Equal(t, theirs, ours)
	t.Logf("puppet ssl bootstrap's ssldir:\n%s", strings.Join(theirs, "\n"))
	for _, f := range []string{"certs/ca.pem", "crl.pem"} {
		a, err := os.ReadFile(filepath.Join(ssldir, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(pssl, f))
		require.NoError(t, err)
		assert.Equal(t, string(b), string(a), f)
	}
	ka, kb := keyInfo(t, filepath.Join(ssldir, "private_keys", name+".pem")), keyInfo(t, filepath.Join(pssl, "private_keys", other+".pem"))
	assert.Equal(t, kb, ka)
	// Bootstrap takes the ssldir Puppet made as it is: no request to the
	// CA, and the node request goes through with Puppet's files.
	caRequests := func() int {
		b, err := os.ReadFile(s.access)
		require.NoError(t, err)
		return strings.Count(string(b), "/puppet-ca/v1/")
	}
	n := caRequests()
	pcfg, err := ssl.Bootstrap(ctx, ssl.Options{SSLDir: pssl, Certname: other, CAServer: "localhost", CAPort: s.port})
	require.NoError(t, err)
	code, body, err = nodeRequest(s, pcfg, other)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, body)
	time.Sleep(300 * time.Millisecond) // the access log trails the answer
	assert.Equal(t, n, caRequests(), "a complete ssldir made requests to the CA")

	// Puppet's own agent accepts our ssldir: `puppet ssl verify`.
	vcmd := exec.CommandContext(ctx, "puppet", "ssl", "verify", "--certname", name, "--ssldir", ssldir,
		"--server", "localhost", "--serverport", fmt.Sprint(s.port),
		"--confdir", pdir, "--vardir", filepath.Join(pdir, "var"), "--logdir", filepath.Join(pdir, "log"),
		"--rundir", filepath.Join(pdir, "run"), "--codedir", filepath.Join(pdir, "code"))
	vcmd.Env = cmd.Env
	vout, err := vcmd.CombinedOutput()
	require.NoError(t, err, string(vout))
	assert.Contains(t, string(vout), "Verified client certificate '"+"CN="+name+"'")

	// crl_refresh_interval against the real CA: unchanged, the server
	// answers 304 and the CRL is kept; once `puppetserver ca revoke` has
	// revoked the certificate, the refresh brings the new CRL and the
	// certificate is refused.
	crl := filepath.Join(ssldir, "crl.pem")
	before, err := os.ReadFile(crl)
	require.NoError(t, err)
	recent := time.Now().Add(-5 * time.Second)
	require.NoError(t, os.Chtimes(crl, recent, recent))
	var rlogs testutil.SyncBuffer
	o.Log = slog.New(slog.NewTextHandler(&rlogs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	o.CRLRefreshInterval = time.Second
	_, err = ssl.Bootstrap(ctx, o)
	require.NoError(t, err, rlogs.String())
	assert.Contains(t, rlogs.String(), "Refreshing CRL")
	assert.Contains(t, rlogs.String(), "CRL is unmodified, using existing CRL")
	after, err := os.ReadFile(crl)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	revokedAt := time.Now().Add(-2 * time.Second)
	require.NoError(t, ca(s.confFile, "revoke", "--certname", name))
	require.NoError(t, os.Chtimes(crl, revokedAt, revokedAt))
	_, err = ssl.Bootstrap(ctx, o)
	require.Error(t, err)
	assert.EqualError(t, err, "Certificate 'CN="+name+"' is revoked")
	// The new CRL is on disk: without refresh, refused too.
	o.CRLRefreshInterval = 0
	_, err = ssl.Bootstrap(ctx, o)
	assert.EqualError(t, err, "Certificate 'CN="+name+"' is revoked")
}

// tree lists an ssldir: each entry's path (the certname's files as
// NAME.pem), type, mode and owner.
func tree(t *testing.T, dir, certname string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys := st.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(dir, p)
		rel = strings.ReplaceAll(rel, certname, "NAME")
		out = append(out, fmt.Sprintf("%s %v %d:%d", rel, st.Mode(), sys.Uid, sys.Gid))
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

// keyInfo is a private key's PEM type and size.
func keyInfo(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	blk, _ := pem.Decode(b)
	require.NotNil(t, blk, p)
	k, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
	require.NoError(t, err, p)
	return fmt.Sprintf("%s %d bits", blk.Type, k.N.BitLen())
}
