package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildReceiver builds the receiver (cmd/receiver) into dir and returns
// the binary's path. $PIPPET_TEST_RECEIVER names a binary built already
// instead (a test binary run under valgrind takes a GODEBUG that a `go
// build` would not).
func BuildReceiver(dir string) (string, error) {
	if b := os.Getenv("PIPPET_TEST_RECEIVER"); b != "" {
		return b, nil
	}
	bin := filepath.Join(dir, "receiver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pippet/pippet/cmd/receiver").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/receiver: %w: %s", err, out)
	}
	return bin, nil
}

// Receiver is BuildReceiver into the test's own temporary directory; a
// build that fails fails the test.
func Receiver(t testing.TB) string {
	t.Helper()
	bin, err := BuildReceiver(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
