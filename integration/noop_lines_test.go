package integration

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
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

// TestNoopConcatLineMatchesPuppet: a concat target out of sync in noop is
// reported as Puppet reports the File the concat module generates, by the
// File's own property and values (testdata/noop/puppet-concat-noop.out,
// recorded from puppet apply --noop --catalog): `/content:
// current_value '{sha256}...', should be '{sha256}...' (noop)`. It said
// `/ensure: current_value 'File content out of sync', should be
// 'present' (noop)`.
func TestNoopConcatLineMatchesPuppet(t *testing.T) {
	const target = "/tmp/pippet-noop-concat-target"
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	t.Cleanup(func() { os.Remove(target) })
	want, err := os.ReadFile("testdata/noop/puppet-concat-noop.out")
	require.NoError(t, err)
	cmd := exec.Command(receiverBin, "apply", "--noop", "--state-dir", t.TempDir(), "testdata/noop/concat.json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	assert.Equal(t, first(string(want)), first(stderr.String()))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(b), "noop changes nothing")
}
