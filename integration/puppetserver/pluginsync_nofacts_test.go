package puppetserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/pluginsync"
	"github.com/pippet/pippet/internal/testutil"
)

// The environment pippetnofacts has one module, with plugins and no
// facts.d: the server answers a find of puppet:///pluginfacts with 404
// there, and its search with the empty root (as for most real sites).
func init() {
	fixtures = append(fixtures, func(s *server) error {
		return write(filepath.Join(s.dir, "code", "environments", "pippetnofacts", "modules", "nofactsmod", "lib", "facter", "nofacts.rb"),
			"Facter.add(:pippet_nofacts) { setcode { 'yes' } }\n")
	})
}

// TestPluginsyncWithoutPluginfacts: an environment whose modules have no
// facts.d syncs as Puppet's agent syncs it: no error, the plugins
// brought, an empty facts.d (what an earlier environment left there
// purged).
func TestPluginsyncWithoutPluginfacts(t *testing.T) {
	s := need(t)
	vardir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(vardir, "facts.d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(vardir, "facts.d", "left.txt"), []byte("left=1\n"), 0o644))
	var log testutil.SyncBuffer
	o := pluginsyncOptions(t, s, vardir, &log)
	o.Environment = "pippetnofacts"
	_, err := pluginsync.Sync(context.Background(), o)
	require.NoError(t, err, log.Take())
	assert.FileExists(t, filepath.Join(vardir, "lib", "facter", "nofacts.rb"))
	assert.DirExists(t, filepath.Join(vardir, "facts.d"))
	assert.NoFileExists(t, filepath.Join(vardir, "facts.d", "left.txt"))
}
