package main

import (
	"runtime/debug"
	"strings"

	"github.com/pippet/pippet/protocol"
)

// commit is what `git describe --always --dirty` said when the binary was
// built by the Makefile (-ldflags "-X main.commit=..."); empty otherwise.
var commit string

// versionLine is what --version prints: the receiver's and the protocol's
// versions, then which source the binary was built from and whether that
// tree had uncommitted changes.
func versionLine() string {
	info, _ := debug.ReadBuildInfo()
	return "receiver " + protocol.Version + " (protocol " + protocol.ProtocolLevel + ") " + buildSource(commit, info) + "\n"
}

// buildSource describes the source of the build, from the first of:
//   - described, `git describe --always --dirty` stamped by the Makefile;
//   - the VCS stamp `go build` and `go install` put in the build info when
//     building inside a git checkout (vcs.revision, vcs.modified);
//   - the module version `go install module@version` records;
//
// else it says the commit is unknown.
func buildSource(described string, info *debug.BuildInfo) string {
	if described != "" {
		if c, dirty := strings.CutSuffix(described, "-dirty"); dirty {
			return "commit " + c + ", tree modified"
		}
		return "commit " + described
	}
	if info != nil {
		var rev string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if modified {
				return "commit " + rev + ", tree modified"
			}
			return "commit " + rev
		}
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return "module " + info.Main.Path + " " + v
		}
	}
	return "commit unknown (built without the Makefile's -ldflags or VCS information)"
}
