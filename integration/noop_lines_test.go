package integration

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoopLinesMatchPuppet: receiver apply --noop prints the lines
// puppet apply --noop --catalog prints for the same catalog
// (testdata/noop/puppet-noop.out, recorded from Puppet 7 and its seconds
// replaced by N): a new file's current_value 'absent', the refresh a
// subscriber would have had, and the containers' lines, Class[Main]
// counting the noop events of what it contains and Stage[main] the
// class's. The container lines were missing.
func TestNoopLinesMatchPuppet(t *testing.T) {
	want, err := os.ReadFile("testdata/noop/puppet-noop.out")
	require.NoError(t, err)
	cmd := exec.Command(receiverBin, "apply", "--noop", "--state-dir", t.TempDir(), "testdata/noop/catalog.json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	got := regexp.MustCompile(`in [0-9.]+ seconds`).ReplaceAllString(stderr.String(), "in N seconds")
	assert.Equal(t, string(want), got)
}
