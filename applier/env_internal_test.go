package applier

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStateDirFor(t *testing.T) {
	tests := []struct {
		name string
		euid int
		env  map[string]string
		want string
	}{
		{"root", 0, map[string]string{"HOME": "/root", "XDG_STATE_HOME": "/root/.st"}, "/var/lib/pippet"},
		{"user with XDG_STATE_HOME", 1000, map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/home/u/st"}, "/home/u/st/pippet"},
		{"user with HOME only", 1000, map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/pippet"},
		{"relative XDG_STATE_HOME is ignored", 1000, map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "st"}, "/home/u/.local/state/pippet"},
		{"user without a home", 1000, map[string]string{"HOME": ""}, "/var/lib/pippet"},
		{"relative HOME", 1000, map[string]string{"HOME": "."}, "/var/lib/pippet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, stateDirFor(tt.euid, func(k string) string { return tt.env[k] }))
		})
	}
}

// DefaultStateDir is stateDirFor of this process.
func TestDefaultStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/nonexistent/xdg")
	want := "/nonexistent/xdg/pippet"
	if os.Geteuid() == 0 {
		want = SystemStateDir
	}
	assert.Equal(t, want, DefaultStateDir())
}
