package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The secrets of testdata/secrets/secrets.pp, and what a weak one could
// be guessed from: the checksums of the Sensitive contents.
var secretsOfCatalog = []string{"NEWSECRET1", "NEWSECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6",
	sha256Hex("NEWSECRET1\n"), sha256Hex("NEWSECRET2\n")}

// leaks lists the files under dir (but the skipped ones) holding one of
// the secrets, with the secret.
func leaks(t *testing.T, dir string, skip map[string]bool) []string {
	t.Helper()
	var found []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || skip[p] || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secretsOfCatalog {
			if strings.Contains(string(b), s) {
				found = append(found, p+": "+s)
			}
		}
		return nil
	}))
	return found
}

// TestSecretsNeverWritten: a catalog Puppet 7 compiled from
// testdata/secrets/secrets.pp (Sensitive file contents, a Sensitive exec
// command that fails, a Sensitive unless, a Sensitive notify message),
// applied by `receiver apply --show_diff` in noop and then for real,
// changes, fails and diffs; no secret, nor a Sensitive content's
// checksum, is in anything it writes: stdout, stderr, the report, the
// summary, the state directory. The lines about the secrets are Puppet's
// (testdata/secrets/puppet.txt, what `puppet apply --show_diff` printed).
func TestSecretsNeverWritten(t *testing.T) {
	t.Run("native", func(t *testing.T) { secretsNeverWritten(t) })
	// The bridge hands sensitive_parameters to Puppet's own types.
	t.Run("delegated", func(t *testing.T) {
		if _, err := exec.LookPath("puppet"); err != nil {
			t.Skip("no puppet")
		}
		secretsNeverWritten(t, "--delegate", "exec,notify")
	})
}

func secretsNeverWritten(t *testing.T, extra ...string) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "secrets", "catalog.json"))
	require.NoError(t, err)
	cat := filepath.Join(dir, "catalog.json")
	require.NoError(t, os.WriteFile(cat, []byte(strings.ReplaceAll(string(data), "@DIR@", dir)), 0o600))
	want, err := os.ReadFile(filepath.Join("testdata", "secrets", "puppet.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("OLD\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain"), []byte("plain old\n"), 0o644))
	state := filepath.Join(dir, "state")
	report, summary := filepath.Join(dir, "report.yaml"), filepath.Join(dir, "summary.yaml")
	var all strings.Builder
	for _, noop := range []bool{true, false} {
		args := append([]string{"apply", "--show_diff", "--state-dir", state, "--lastrunreport", report, "--lastrunfile", summary, "--detailed-exitcodes"}, extra...)
		if noop {
			args = append(args, "--noop")
		}
		out, stderr, code := runApply(t, dir, append(args, cat)...)
		all.WriteString(out + stderr)
		if noop {
			assert.Contains(t, stderr, "/File["+dir+"/f]/content: [diff redacted]")
			assert.Contains(t, stderr, "/File["+dir+"/f]/content: current_value [redacted], should be [redacted] (noop)")
			assert.Contains(t, stderr, "-plain old\n", "a plain file's diff is shown (the test can fail)")
			continue
		}
		assert.Equal(t, 6, code, stderr)
		for _, line := range strings.Split(strings.ReplaceAll(string(want), "@DIR@", dir), "\n") {
			if strings.Contains(line, "redacted") && (strings.HasPrefix(line, "Notice: ") || strings.HasPrefix(line, "Error: /")) {
				assert.Contains(t, stderr, line+"\n", "Puppet's line")
			}
		}
		b, err := os.ReadFile(report)
		require.NoError(t, err)
		assert.Contains(t, string(b), "[command redacted] returned 3 instead of one of [0]")
	}
	got, err := os.ReadFile(filepath.Join(dir, "f"))
	require.NoError(t, err)
	assert.Equal(t, "NEWSECRET1\n", string(got), "the secret is applied")
	for _, s := range secretsOfCatalog {
		assert.NotContains(t, all.String(), s, "the output")
	}
	assert.Empty(t, leaks(t, dir, map[string]bool{
		cat:                         true, // the input
		filepath.Join(dir, "f"):     true, // the managed files
		filepath.Join(dir, "new"):   true,
		filepath.Join(dir, "plain"): true,
	}))
}

// runApply runs the receiver with args (a subcommand first) in dir.
func runApply(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "receiver did not finish")
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}
