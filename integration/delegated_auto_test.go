package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The autorelationships a delegated type declares in its Ruby
// (pippet_mark: autorequire(:file), autosubscribe(:pippet_mark),
// autobefore(:file)) order the walk and carry refreshes as in Puppet,
// whatever the catalog's order: the mark runs after the file it requires
// and before the one it precedes, and the mark listening to it is
// refreshed. Puppet applied the same catalog into the same log.
func TestCatalogDelegatedAutorelations(t *testing.T) {
	needPuppet(t)
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	run := func(t *testing.T, apply func(cat string)) string {
		dir := t.TempDir()
		log, f, g := filepath.Join(dir, "log"), filepath.Join(dir, "f"), filepath.Join(dir, "g")
		cat := handCatalog(t,
			[3]any{"File", g, map[string]any{"ensure": "file"}},
			[3]any{"Pippet_mark", "listener", map[string]any{"log": log, "listen": "first"}},
			[3]any{"Pippet_mark", "first", map[string]any{"log": log, "after": f, "ahead": g}},
			[3]any{"File", f, map[string]any{"ensure": "file"}},
		)
		apply(cat)
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		out := string(data)
		for _, p := range []string{f, g} {
			out = strings.ReplaceAll(out, p, filepath.Base(p))
		}
		return out
	}
	want := "first f=present g=absent\nlistener\nlistener refreshed\n"
	t.Run("puppet", func(t *testing.T) {
		got := run(t, func(cat string) {
			out, err := exec.Command("puppet", "apply", "--catalog", cat, "--modulepath", modulepath).CombinedOutput()
			require.NoError(t, err, string(out))
		})
		assert.Equal(t, want, got)
	})
	t.Run("pippet", func(t *testing.T) {
		got := run(t, func(cat string) {
			_, stderr := applyHand(t, cat, "--modulepath", modulepath)
			t.Log(stderr)
		})
		assert.Equal(t, want, got)
	})
}
