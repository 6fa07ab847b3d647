package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReceiverStaysThin: the command is flags, signals and wiring, under
// 1,000 lines of code; what it wires lives in the packages (the run's
// assembly in internal/assemble, the agent's command in agent).
func TestReceiverStaysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines += bytes.Count(b, []byte("\n"))
	}
	assert.Less(t, lines, 1000, "cmd/receiver's non-test lines")
}
