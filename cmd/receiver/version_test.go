package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/protocol"
)

func TestBuildSource(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/pippet/pippet", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	tests := []struct {
		name      string
		described string
		info      *debug.BuildInfo
		want      string
	}{
		{"makefile clean", "0a6e840", vcs("ffffffffffffffffffffffffffffffffffffffff", "true"), "commit 0a6e840"},
		{"makefile dirty", "v0.1.0-3-g0a6e840-dirty", nil, "commit v0.1.0-3-g0a6e840, tree modified"},
		{"vcs stamp clean", "", vcs("0a6e840bbb6bb5c61f78a63e3128a31d78b7513c", "false"), "commit 0a6e840bbb6b"},
		{"vcs stamp modified", "", vcs("0a6e840bbb6bb5c61f78a63e3128a31d78b7513c", "true"), "commit 0a6e840bbb6b, tree modified"},
		{"go install module@version", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/pippet/pippet", Version: "v0.0.0-20261123014019-0a6e840bbb6b"}},
			"module github.com/pippet/pippet v0.0.0-20261123014019-0a6e840bbb6b"},
		{"nothing known", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "commit unknown (built without the Makefile's -ldflags or VCS information)"},
		{"no build info", "", nil, "commit unknown (built without the Makefile's -ldflags or VCS information)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, buildSource(tt.described, tt.info))
		})
	}
}

// TestVersionNamesTheBannersProtocol: --version and the banner name the
// same protocol level (--version said "protocol 1" while the banner said 2).
func TestVersionNamesTheBannersProtocol(t *testing.T) {
	line := versionLine()
	assert.Contains(t, line, "(protocol "+protocol.ProtocolLevel+")")
	assert.Contains(t, protocol.Banner, `"protocol":`+protocol.ProtocolLevel+",")
}

func TestWithSbin(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"/usr/bin:/bin", "/usr/bin:/bin:/usr/sbin:/sbin"},
		{"/usr/local/bin:/usr/sbin:/usr/bin", "/usr/local/bin:/usr/sbin:/usr/bin:/sbin"},
		{"/usr/sbin:/sbin:/usr/bin", "/usr/sbin:/sbin:/usr/bin"},
		{"", "/usr/sbin:/sbin"},
	} {
		assert.Equal(t, tt.want, withSbin(tt.path), tt.path)
	}
}
