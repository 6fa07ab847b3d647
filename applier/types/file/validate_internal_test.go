package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate_cmd runs through the shared command runner: its output is kept
// to a bounded tail, and a validator that hangs is killed with its group
// at the timeout (a grandchild holding the output pipe included) instead
// of holding the receiver.
func TestRunValidateBounded(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))

	// 50 MB of output, then the reason: only the tail is kept and quoted.
	err := runValidate(context.Background(), "/bin/sh -c 'head -c 50000000 /dev/zero | tr \"\\\\0\" y; echo; echo REASON; exit 2' %", "%", f)
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 4096)
	assert.True(t, strings.HasSuffix(err.Error(), "REASON"), "%.200s", err.Error())
	assert.Contains(t, err.Error(), "exit status 2")

	old := validateTimeout
	validateTimeout = 300 * time.Millisecond
	t.Cleanup(func() { validateTimeout = old })
	start := time.Now()
	err = runValidate(context.Background(), "/bin/sh -c 'sleep 60 & sleep 60; test -e %'", "%", f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Command exceeded timeout")
	assert.Less(t, time.Since(start), 10*time.Second)

	// A passing command, with the usual timeout: 300 ms is too short for
	// a fork and exec under -race on a loaded machine.
	validateTimeout = old
	assert.NoError(t, runValidate(context.Background(), "/bin/test -e %", "%", f))
}
