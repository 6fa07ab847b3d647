package file

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/source"
)

// One fetcher serves every request with the same options; options that
// differ (here the Puppet Server's, behind a pointer) get their own.
func TestFetcherKeyedByOptions(t *testing.T) {
	env := &applier.Env{Cache: &applier.Cache{}}
	fetch := func() *source.Fetcher {
		t.Helper()
		f, err := (&posix{env: env}).fetcher()
		require.NoError(t, err)
		return f
	}
	plain := fetch()
	assert.Same(t, plain, fetch(), "unchanged options: the cached fetcher")

	SetSourceOptions(env, source.Options{Puppet: &source.PuppetOptions{Server: "a.example", Port: 8140}})
	withA := fetch()
	assert.NotSame(t, plain, withA)
	SetSourceOptions(env, source.Options{Puppet: &source.PuppetOptions{Server: "a.example", Port: 8140}})
	assert.Same(t, withA, fetch(), "equal options behind another pointer: the same fetcher")
	SetSourceOptions(env, source.Options{Puppet: &source.PuppetOptions{Server: "b.example", Port: 8140}})
	assert.NotSame(t, withA, fetch(), "another server: another fetcher")
}
