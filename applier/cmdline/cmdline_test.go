package cmdline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShellMeta(t *testing.T) {
	cases := map[string]bool{
		"/bin/echo a b":          false,
		"/bin/echo  a\tb":        false,
		"/bin/echo a'b":          true,
		`/bin/echo "a b"`:        true,
		"/bin/echo a; ls":        true,
		"/bin/echo $HOME":        true,
		"/bin/ls *":              true,
		"/bin/echo a > /tmp/x":   true,
		"/bin/echo a | cat":      true,
		"/bin/true && /bin/true": true,
		"FOO=bar /bin/env":       true,
		"/usr/bin/env FOO=bar":   false,
		"/opt/a=b/run":           false,
		"exit 3":                 true,
		"if":                     true,
		"test -f /x":             false,
		"/bin/echo ~":            true,
		"/bin/echo # hi":         true,
		"/bin/echo 100%":         false,
		"  set -e":               true,
	}
	for cmd, want := range cases {
		assert.Equal(t, want, NeedsShell(cmd), cmd)
	}
}

func TestArgv(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string
	}{
		{"/usr/sbin/visudo -cf /tmp/x", []string{"/usr/sbin/visudo", "-cf", "/tmp/x"}},
		{"  /bin/echo   a\tb ", []string{"/bin/echo", "a", "b"}},
		{"/usr/sbin/nginx -t -c /tmp/x 2>&1", []string{"/bin/sh", "-c", "/usr/sbin/nginx -t -c /tmp/x 2>&1"}},
		{"/bin/echo 'a b'", []string{"/bin/sh", "-c", "/bin/echo 'a b'"}},
		{"/bin/true", []string{"/bin/true"}},
		{"", []string{}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Argv(c.cmd), c.cmd)
	}
}
