package accounts

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The parsers skip what the C library skips and keep the first of
// duplicate names, as getpwnam and getgrnam find it.
func TestParse(t *testing.T) {
	u, err := ParseUsers([]byte("root:x:0:0:root:/root:/bin/bash\n" +
		"# comment\n\n+nis\n-nis2\n" +
		"bad:x:abc:0::/:/bin/sh\n" +
		"short:x:1\n" +
		"big:x:4294967296:0::/:/bin/sh\n" +
		"a:x:5:6:A, B:/home/a:/bin/sh\n" +
		"a:x:7:7::/:/bin/sh\n" +
		"last:x:9:9::/h:/bin/sh"))
	require.NoError(t, err)
	plain := func(e *User) User { c := *e; c.boxed = [5]any{}; return c }
	assert.Equal(t, User{Name: "root", UID: 0, GID: 0, Gecos: "root", Home: "/root", Shell: "/bin/bash"}, plain(u.Lookup("root")))
	assert.Equal(t, User{Name: "a", UID: 5, GID: 6, Gecos: "A, B", Home: "/home/a", Shell: "/bin/sh"}, plain(u.Lookup("a")))
	uid, gid, home, shell, gecos := u.Lookup("a").Boxed()
	assert.Equal(t, []any{int64(5), int64(6), "/home/a", "/bin/sh", "A, B"}, []any{uid, gid, home, shell, gecos})
	assert.NotNil(t, u.Lookup("last"))
	for _, n := range []string{"bad", "short", "big", "+nis", "nis", "-nis2", "# comment"} {
		assert.Nil(t, u.Lookup(n), n)
	}

	s, err := ParseShadows([]byte("a:$6$x$y:20000:0:99999:7:::\nb:!::::::19000:\nc:!:x::::::\n"))
	require.NoError(t, err)
	plainShadow := func(e *Shadow) Shadow { c := *e; c.boxed = [4]any{}; return c }
	assert.Equal(t, Shadow{Name: "a", Password: "$6$x$y", LastChange: 20000, Min: 0, Max: 99999, Warn: 7, Inactive: -1, Expire: -1}, plainShadow(s.Lookup("a")))
	assert.Equal(t, Shadow{Name: "b", Password: "!", LastChange: -1, Min: -1, Max: -1, Warn: -1, Inactive: -1, Expire: 19000}, plainShadow(s.Lookup("b")))
	pw, min, max, warn := s.Lookup("a").Boxed()
	assert.Equal(t, []any{"$6$x$y", int64(0), int64(99999), int64(7)}, []any{pw, min, max, warn})
	var names []string
	for _, e := range u.All() {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"root", "a", "last"}, names, "file order, each name once")
	assert.Equal(t, 5.0, float64(u.Lookup("a").UID), "the first entry of a name")
	assert.Nil(t, s.Lookup("c"))

	g, err := ParseGroups([]byte("root:x:0:\nadm:x:4:syslog,a\nusers:x:100:a,b,a\ndup:x:4:\nadm:x:5:\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(4), g.Lookup("adm").GID)
	assert.Equal(t, "adm", g.ByGID(4).Name)
	assert.Equal(t, []string{"adm", "users"}, g.MemberOf("a"))
	assert.Equal(t, []string{"users"}, g.MemberOf("b"))
	assert.Nil(t, g.MemberOf("root"))
	names = nil
	for _, e := range g.All() {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"root", "adm", "users", "dup"}, names, "file order, each name once")
}

func TestNameArgs(t *testing.T) {
	assert.Equal(t, []string{"x"}, NameArgs("x"))
	assert.Equal(t, []string{"--", "-r"}, NameArgs("-r"))
}

func TestToolsFound(t *testing.T) {
	assert.Equal(t, "", ToolsFound("sh")(nil))
	assert.Equal(t, "command 'pippet-no-such-tool' not found", ToolsFound("sh", "pippet-no-such-tool")(nil))
	// a negative verdict is not kept
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	f := ToolsFound("pippet-tool")
	assert.NotEqual(t, "", f(nil))
	require.NoError(t, os.WriteFile(dir+"/pippet-tool", []byte("#!/bin/sh\n"), 0o755))
	assert.Equal(t, "", f(nil))
}
