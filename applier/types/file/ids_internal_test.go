package file

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/protocol"
)

// A change to the user or group database drops the cached owner and group
// ids (and nothing else); a change to another file keeps them.
func TestIDCacheDroppedWhenDatabaseChanges(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "passwd") // stands in for /etc/passwd
	other := filepath.Join(dir, "other")
	idDatabase[db] = true
	defer delete(idDatabase, db)

	reg := applier.NewRegistry()
	reg.Add(Type)
	env := &applier.Env{Options: applier.Options{StateDir: t.TempDir()}}
	e := engine.New(reg, env)
	fill := func() {
		env.Cache.Put("file:uid:alice", 1001)
		env.Cache.Put("file:gid:staff", 50)
		env.Cache.Put("parsedfile:host:/etc/hosts", "kept")
	}
	cached := func(k string) bool { _, ok := env.Cache.Get(k); return ok }

	tests := []struct {
		name    string
		path    string
		dropped bool
	}{
		{"another file keeps the ids", other, false},
		{"the database drops them", db, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fill()
			var dec protocol.Decoder // the receiver's decoding
			var req protocol.Request
			require.NoError(t, dec.DecodeLine([]byte(`{"type":"file","title":"`+tt.path+
				`","params":"{ensure: file, content: \"x:1:1::/:/bin/sh\\n\"}"}`), &req))
			res := e.Apply(context.Background(), &req)
			require.False(t, res.Failed, res.Exception)
			require.True(t, res.Changed)
			b, err := os.ReadFile(tt.path)
			require.NoError(t, err)
			assert.Equal(t, "x:1:1::/:/bin/sh\n", string(b))
			assert.Equal(t, !tt.dropped, cached("file:uid:alice"))
			assert.Equal(t, !tt.dropped, cached("file:gid:staff"))
			assert.True(t, cached("parsedfile:host:/etc/hosts"), "other types' entries stay")
		})
	}
}

func TestLexicallyClean(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b", "/a/b.c", "/a/.b", "/a/..b", "/a/b..", "/.a", "//", "/a/", "/a//b",
		"/a/./b", "/a/../b", "/a/.", "/a/..", "/.", "/..", "/./a", "/../a", "/a/b/", "/...", "/a/.../b"} {
		assert.Equal(t, filepath.Clean(p) == p, lexicallyClean(p), "%q", p)
	}
	// Every absolute path of up to 8 bytes over "/", "a" and ".".
	var walk func(p string)
	walk = func(p string) {
		if filepath.Clean(p) == p != lexicallyClean(p) {
			t.Errorf("%q: Clean says clean=%v", p, filepath.Clean(p) == p)
		}
		if len(p) < 8 {
			for _, c := range []string{"/", "a", "."} {
				walk(p + c)
			}
		}
	}
	walk("/")
}
