package file_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 26 item 14: noop with an absent target still asks the source, as
// Puppet does: a missing source or a server that cannot be reached fails
// the resource; a source that exists gives the kind the change would make.
func TestNoopAsksTheSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/there" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Checksum-Sha256", sha256hex("x\n"))
		w.Write([]byte("x\n"))
	}))
	defer srv.Close()
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	l.Close()
	_, withServer := withPuppet(t, map[string]string{"there": "x\n"})
	e := newEngine(t, withServer)
	dir := t.TempDir()
	dst := filepath.Join(dir, "dst")
	for _, src := range []string{srv.URL + "/missing", "http://" + closed + "/x", "puppet:///modules/m/missing", "puppet://" + closed + "/modules/m/x"} {
		for _, extra := range []string{"", ", ensure: file", ", ensure: present", ", ensure: directory, recurse: true"} {
			res := apply(t, e, dst, "{source: '"+src+"', noop: true"+extra+"}")
			assert.Equal(t, failed, outcomeOf(res), "%s%s: %+v", src, extra, res)
			assert.NoFileExists(t, dst)
		}
	}
	for _, src := range []string{srv.URL + "/there", "puppet:///modules/m/there"} {
		res := apply(t, e, dst, "{source: '"+src+"', noop: true}")
		require.True(t, res.Noop, "%s: %+v", src, res)
		require.Len(t, res.Events, 1)
		assert.Equal(t, "file", res.Events[0].Desired, "%s: %+v", src, res)
		assert.NoFileExists(t, dst)
	}
}
