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

// TestNoopConcatLineMatchesPuppet: a concat target out of sync in noop is
// reported as Puppet reports the File the concat module generates, by the
// File's own property and values (`/content: current_value
// '{sha256}...', should be '{sha256}...' (noop)`), then the concat_file,
// which hears the File's noop events in Puppet, says `TARGET: Would have
// triggered 'refresh' from N events` and passes one more event to its
// class: every line as puppet apply --noop --catalog prints them
// (testdata/noop/puppet-concat*-noop.out, recorded from Puppet 7, seconds
// replaced by N). The concat_file's line was missing and Class[Main]
// counted one event less.
func TestNoopConcatLineMatchesPuppet(t *testing.T) {
	const target = "/tmp/pippet-noop-concat-target"
	for _, c := range []struct{ catalog, puppet string }{
		{"testdata/noop/concat.json", "testdata/noop/puppet-concat-noop.out"},           // content
		{"testdata/noop/concat-mode.json", "testdata/noop/puppet-concat-mode-noop.out"}, // content and mode
	} {
		t.Run(c.catalog, func(t *testing.T) {
			require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
			require.NoError(t, os.Chmod(target, 0o644))
			t.Cleanup(func() { os.Remove(target) })
			want, err := os.ReadFile(c.puppet)
			require.NoError(t, err)
			cmd := exec.Command(receiverBin, "apply", "--noop", "--state-dir", t.TempDir(), c.catalog)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Run(), stderr.String())
			got := regexp.MustCompile(`in [0-9.]+ seconds`).ReplaceAllString(stderr.String(), "in N seconds")
			assert.Equal(t, string(want), got)
			b, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "old\n", string(b), "noop changes nothing")
			fi, err := os.Stat(target)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "noop changes nothing")
		})
	}
}
