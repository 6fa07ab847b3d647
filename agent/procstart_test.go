package agent_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent"
)

// loaded is when the test binary's package variables were set: after
// the process started.
var loaded = time.Now()

// TestProcessStart: the kernel's start time of the process, the
// beginning of the report's startup_time (issue 38 item 3: a real
// startup time, not the moment the agent command began), agrees with
// ps's, to the second.
func TestProcessStart(t *testing.T) {
	start := agent.ProcessStart()
	require.False(t, start.IsZero())
	assert.False(t, start.After(loaded), "the process started %s, after its variables were set %s", start, loaded)
	assert.True(t, loaded.Sub(start) < time.Minute, "the process started %s, long before %s", start, loaded)
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(os.Getpid())).Output()
	require.NoError(t, err)
	ps, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", strings.TrimSpace(string(out)), time.Local)
	require.NoError(t, err, string(out))
	assert.Equal(t, ps.Unix(), start.Truncate(time.Second).Unix())
}
