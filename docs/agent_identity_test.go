package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentSecondIdentity holds docs/agent.md's "A second identity" to
// what is true: the directories its command gives are those
// TestAgentQuickStart gives its agent, and none of publicdir, rundir,
// logdir and ssldir follows from --vardir and --confdir in Puppet's
// settings, which is why each is given.
func TestAgentSecondIdentity(t *testing.T) {
	var cmd string
	for _, bl := range blocks(t, filepath.Join(root, "docs", "agent.md")) {
		if strings.Contains(bl.text, "receiver agent") && strings.Contains(bl.text, "--certname pippet-test") {
			cmd = bl.text
		}
	}
	require.NotEmpty(t, cmd, "docs/agent.md shows the second identity's command")
	dirFlags := func(s string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`--(\w+dir)\b`).FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		sort.Strings(out)
		return out
	}
	doc := dirFlags(cmd)
	assert.Equal(t, []string{"confdir", "logdir", "publicdir", "rundir", "ssldir", "vardir"}, doc)

	src, err := os.ReadFile(filepath.Join(root, "integration", "puppetserver", "agent_test.go"))
	require.NoError(t, err)
	body := string(src)
	start := strings.Index(body, "func TestAgentQuickStart(")
	require.GreaterOrEqual(t, start, 0)
	body = body[start:]
	body = body[:strings.Index(body, "\n}\n")]
	for _, f := range doc {
		assert.Contains(t, body, `"--`+f+`"`, "TestAgentQuickStart gives --%s", f)
	}

	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet is not installed")
	}
	out, err := exec.Command("puppet", "config", "print", "publicdir", "rundir", "logdir", "ssldir", "statedir",
		"--section", "agent", "--vardir", "/nonexistent-x", "--confdir", "/nonexistent-y").Output()
	require.NoError(t, err)
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, val, _ := strings.Cut(l, " = ")
		if name == "statedir" {
			assert.Equal(t, "/nonexistent-x/state", val, "statedir (the run lock) follows vardir")
			continue
		}
		assert.NotContains(t, val, "/nonexistent-", "%s does not follow --vardir or --confdir", name)
	}
}
