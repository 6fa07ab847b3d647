package testutil

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// MachineLock serialises, across the test processes `go test ./...` runs
// side by side, the tests that share one thing of the machine: name
// "dpkg" for those that install or remove packages (dpkg takes its own
// lock and fails at once when another holds it). It blocks until no other
// test holds the lock of that name and holds it until t ends.
func MachineLock(t testing.TB, name string) {
	t.Helper()
	p := filepath.Join(os.TempDir(), "pippet-test-"+name+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("machine lock %s: %v", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("machine lock %s: %v", name, err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}
