package docs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunnerFromOwnModule follows docs/runner.md's "From your own module":
// a new module whose program imports runner runs the page's three
// commands, with $PIPPET this checkout, and builds, the module proxy off
// and the checksum database off (so what is built is the checkout and
// the module cache, without the network).
func TestRunnerFromOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy and go build")
	}
	var script string
	for _, bl := range blocks(t, filepath.Join(root, "docs", "runner.md")) {
		if strings.Contains(bl.text, "go mod edit -replace") {
			script = bl.text
		}
	}
	require.NotEmpty(t, script, "docs/runner.md shows the replace directive's commands")
	require.Len(t, strings.Split(strings.TrimSpace(script), "\n"), 3, "three lines")

	checkout, err := filepath.Abs(root)
	require.NoError(t, err)
	mod := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/mytool\n\ngo 1.24\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "main.go"), []byte(`package main

import (
	"fmt"

	"github.com/pippet/pippet/runner"
)

func main() {
	res := &runner.Resource{Type: "file", Title: "/tmp/x", Params: "{ensure: file}"}
	fmt.Println(res.Ref())
}
`), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(name string, args ...string) string {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "PIPPET="+checkout, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s\n%s", name, args, out)
		return string(out)
	}
	run("bash", "-e", "-c", script)
	gomod, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	require.NoError(t, err)
	require.Contains(t, string(gomod), "replace github.com/pippet/pippet => "+checkout)
	run("go", "build", "-o", filepath.Join(mod, "mytool"), ".")
	require.Equal(t, "File[/tmp/x]\n", run(filepath.Join(mod, "mytool")))
}
