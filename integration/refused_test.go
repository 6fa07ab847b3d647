package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/internal/testutil"
)

// reportFields are the parts of a report (or summary) compared with
// Puppet's: what says the run failed and why.
type reportFields struct {
	Status               string `yaml:"status"`
	TransactionCompleted *bool  `yaml:"transaction_completed"`
	Logs                 []struct {
		Level   string `yaml:"level"`
		Message string `yaml:"message"`
		Source  string `yaml:"source"`
	} `yaml:"logs"`
	ResourceStatuses map[string]any `yaml:"resource_statuses"`
	Resources        map[string]int `yaml:"resources"`
	Events           map[string]int `yaml:"events"`
	Changes          map[string]int `yaml:"changes"`
}

func readReportFields(t *testing.T, path string) reportFields {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var f reportFields
	require.NoError(t, yaml.Unmarshal(b, &f), path)
	return f
}

// TestApplyRefusedCatalogWritesReport: a catalog refused before anything
// runs (here a relationship to a resource it lacks) still leaves
// --lastrunreport and --lastrunfile, status failed, with Puppet's error
// line, as `puppet apply --catalog` leaves them (testdata/refused holds
// what Puppet 7 wrote for this catalog). They were not written at all.
func TestApplyRefusedCatalogWritesReport(t *testing.T) {
	dir := t.TempDir()
	report, summary := filepath.Join(dir, "report.yaml"), filepath.Join(dir, "summary.yaml")
	cmd := exec.Command(receiverBin, "apply", "--state-dir", dir, "--lastrunreport", report, "--lastrunfile", summary, "testdata/refused/catalog.json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	code := exitCode(t, cmd.Run())
	assert.Equal(t, 1, code, "the truth: the run failed (Puppet exits 0, docs/compatibility.md)")
	assert.Equal(t, "Error: Failed to apply catalog: Could not retrieve dependency 'Exec[nosuch]' of Exec[a]\n", stderr.String())

	want := readReportFields(t, "testdata/refused/puppet-report.yaml")
	got := readReportFields(t, report)
	assert.Equal(t, "failed", want.Status)
	assert.Equal(t, want.Status, got.Status)
	require.NotNil(t, got.TransactionCompleted)
	assert.Equal(t, *want.TransactionCompleted, *got.TransactionCompleted)
	assert.Equal(t, want.Logs, got.Logs)
	assert.Empty(t, got.ResourceStatuses)

	want = readReportFields(t, "testdata/refused/puppet-summary.yaml")
	got = readReportFields(t, summary)
	assert.Equal(t, want.Resources, got.Resources)
	assert.Equal(t, want.Events, got.Events)
	assert.Equal(t, want.Changes, got.Changes)
}

// TestApplySIGTERM: receiver apply stopped by SIGTERM says so as Puppet
// does (recorded: puppet apply of an exec running sleep, killed with
// TERM, prints "Error: Could not run: SIGTERM" and exits 1) and still
// writes its report, status failed. It died of the signal (exit 143) and
// said nothing.
func TestApplySIGTERM(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	cat := handCatalog(t,
		[3]any{"Exec", "slow", map[string]any{"command": "/bin/sh -c 'touch " + started + "; exec sleep 60'"}},
		[3]any{"Exec", "after", map[string]any{"command": "/bin/true", "require": "Exec[slow]"}})
	report := filepath.Join(dir, "report.yaml")
	cmd := exec.Command(receiverBin, "apply", "--state-dir", dir, "--lastrunreport", report, cat)
	// Read while the process writes: a buffer with a lock.
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the exec never started: %s", stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("receiver apply did not end after SIGTERM")
	}
	assert.Equal(t, 1, exitCode(t, err), stderr.String())
	assert.Contains(t, stderr.String(), "Error: Could not run: SIGTERM\n")
	assert.NotContains(t, stderr.String(), "Exec[after]/returns: executed successfully", "nothing runs after the signal")
	got := readReportFields(t, report)
	assert.Equal(t, "failed", got.Status)
	require.NotNil(t, got.TransactionCompleted)
	assert.False(t, *got.TransactionCompleted)
}
