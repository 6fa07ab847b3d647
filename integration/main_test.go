// Package integration runs the real receiver binary: fixture streams with
// golden answers (testdata/*.ndjson), the limits that protect it, a
// controller written the way existing ones are, and the cases recorded
// from real Puppet (every ../shared/puppet-oracle/cases*.json, and this
// project's own recordings in testdata/oracle-*.json), compared as the
// oracle's score script compares them; the cases not passed yet are listed
// by name with the reason in oraclePending.
package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	_ "github.com/pippet/pippet/applier/types/all"
	"github.com/pippet/pippet/internal/testutil"
)

// receiverBin is the binary built once for the whole package.
var receiverBin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pippet-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if receiverBin, err = testutil.BuildReceiver(dir); err != nil {
		fmt.Fprintln(os.Stderr, "integration: building the receiver:", err)
		return 1
	}
	// No test leaves one of its accounts behind.
	return testutil.RunLeakingNoAccounts(m, regexp.MustCompile(`^(pipg397|pipu397|pipcronv1|pipvi7\d\d|pipvig7\d\d)$`))
}

// registered reports whether every named type is registered.
func registered(types ...string) bool {
	for _, t := range types {
		if _, ok := applier.Default.Lookup(t); !ok {
			return false
		}
	}
	return true
}

// startReceiver starts the built receiver with a scratch state directory
// and args, and returns its pipes and its captured stderr; the process is
// killed when the test ends if it is still running.
func startReceiver(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, *testutil.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(receiverBin, append([]string{"--state-dir", t.TempDir()}, args...)...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	// The test may read stderr while the process writes it.
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, stdin, stdout, &stderr
}

// run feeds input to one receiver process and returns its stdout and
// stderr; it fails the test if the process does not end in time. The
// receiver keeps its state (filebucket) in a temporary directory.
func run(t *testing.T, dir string, input io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--state-dir", t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, receiverBin, args...)
	cmd.Dir = dir
	cmd.Stdin = input
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("receiver did not finish: %v", ctx.Err())
	}
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running receiver: %v", err)
	}
	return o.String(), e.String(), code
}
