package facts_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
)

// nobody is the account the checks that need a user whom file modes
// bind run as, when the tests run as root (root reads a directory of
// mode 000).
const nobody = 65534

// unreadableHelperEnv, set, has the test binary run
// TestCustomFactDirUnreadableHelper: Gather on the directories it lists
// (separated by ":"), its answer printed as JSON.
const unreadableHelperEnv = "PIPPET_FACTS_UNREADABLE_DIRS"

type gathered struct {
	Facts  map[string]any `json:"facts"`
	Errors []string       `json:"errors"`
	Dirs   []bool         `json:"dir_warnings"` // per error: a *facts.DirWarning
}

func gatherDirs(dirs []string) gathered {
	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}, CustomDirs: dirs})
	g := gathered{Facts: map[string]any{}}
	for _, n := range []string{"rack", "site_role", "apt_reboot_required", "kernel"} {
		if v, ok := f[n]; ok {
			g.Facts[n] = v
		}
	}
	for _, err := range errs {
		var dw *facts.DirWarning
		g.Errors = append(g.Errors, err.Error())
		g.Dirs = append(g.Dirs, errors.As(err, &dw))
	}
	return g
}

// TestCustomFactDirUnreadableHelper is the other side of
// TestCustomFactDirUnreadableWarns, run as a user file modes bind.
func TestCustomFactDirUnreadableHelper(t *testing.T) {
	dirs := os.Getenv(unreadableHelperEnv)
	if dirs == "" {
		t.Skip("run by TestCustomFactDirUnreadableWarns")
	}
	b, err := json.Marshal(gatherDirs(strings.Split(dirs, ":")))
	require.NoError(t, err)
	os.Stdout.Write(append([]byte("ANSWER "), append(b, '\n')...))
}

// A custom fact directory the agent's user cannot read (mode 000): one
// warning naming it, its facts are missing (Facter says nothing and
// leaves them out), and the run goes on: the facts of the other
// directory are there, native (apt's) and Facter's (an unknown file).
// Run as root, the check runs as uid 65534, whom the mode binds.
func TestCustomFactDirUnreadableWarns(t *testing.T) {
	needFacter(t)
	top, err := os.MkdirTemp("", "pippet-factdirs-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(top) })
	require.NoError(t, os.Chmod(top, 0o755))
	readable, unreadable := filepath.Join(top, "readable"), filepath.Join(top, "unreadable")
	for _, d := range []string{readable, unreadable} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	writeFile(t, readable, "rack.rb", "Facter.add(:rack) { setcode { 'r1' } }\n", 0o644)
	debianFactFile(t, readable, "apt", "apt_reboot_required.rb")
	writeFile(t, unreadable, "site_role.rb", "Facter.add(:site_role) { setcode { 'web' } }\n", 0o644)
	require.NoError(t, os.Chmod(unreadable, 0o000))
	t.Cleanup(func() { _ = os.Chmod(unreadable, 0o755) })

	var g gathered
	if os.Geteuid() != 0 {
		g = gatherDirs([]string{readable, unreadable})
	} else {
		bin := filepath.Join(top, "facts.test")
		exe, err := os.ReadFile(os.Args[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bin, exe, 0o755))
		cmd := exec.Command(bin, "-test.run=^TestCustomFactDirUnreadableHelper$", "-test.count=1")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + top, unreadableHelperEnv + "=" + readable + ":" + unreadable}
		cmd.Dir = top
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "%s%s", out, stderr.String())
		_, answer, ok := strings.Cut(string(out), "ANSWER ")
		require.True(t, ok, "%s", out)
		answer, _, _ = strings.Cut(answer, "\n")
		require.NoError(t, json.Unmarshal([]byte(answer), &g))
	}
	assert.Equal(t, "r1", g.Facts["rack"], "Facter's facts of the readable directory")
	assert.Equal(t, false, g.Facts["apt_reboot_required"], "the native facts of the readable directory")
	assert.NotContains(t, g.Facts, "site_role")
	assert.Contains(t, g.Facts, "kernel")
	require.Len(t, g.Errors, 1, "%q", g.Errors)
	assert.True(t, g.Dirs[0])
	assert.Equal(t, "custom fact directory "+unreadable+": cannot be read (open "+unreadable+": permission denied); its facts are missing", g.Errors[0])
}

// A module's custom fact named like a core fact: the value is Facter's
// (without weight the core value stays, with weight the custom one
// replaces it, and Facter says nothing), and each is one warning naming
// the fact and its file; the known files beside them stay native.
func TestCustomFactNamedLikeACoreFact(t *testing.T) {
	needFacter(t)
	dir := t.TempDir()
	kernel := writeFile(t, dir, "kernel.rb", "Facter.add(:kernel) { setcode { 'custom-kernel' } }\n", 0o644)
	osFile := writeFile(t, dir, "site_os.rb", "Facter.add(:os) do\n  has_weight 5\n  setcode { { 'name' => 'SiteOS' } }\nend\n", 0o644)
	writeFile(t, dir, "rack.rb", "Facter.add(:rack) { setcode { 'r1' } }\n", 0o644)
	debianFactFile(t, dir, "apt", "apt_reboot_required.rb")
	names := []string{"kernel", "os", "rack", "apt_reboot_required"}
	want := facterP(t, dir, names)

	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}, CustomDirs: []string{dir}})
	for _, n := range names {
		assert.Equal(t, encodeFact(t, want[n]), encodeFact(t, f[n]), n)
	}
	assert.Equal(t, "Linux", f["kernel"])
	assert.Equal(t, map[string]any{"name": "SiteOS"}, f["os"])
	var msgs []string
	for _, err := range errs {
		var cw *facts.CoreNameWarning
		assert.True(t, errors.As(err, &cw), "%v", err)
		assert.True(t, facts.IsWarning(err))
		msgs = append(msgs, err.Error())
	}
	assert.ElementsMatch(t, []string{
		"custom fact kernel (" + kernel + ") is named like a core fact; its resolution has no weight, so the core value is kept, as Facter keeps it",
		"custom fact os (" + osFile + ") is named like a core fact; its resolution has weight 5, so its value replaces the core fact's, as in Facter",
	}, msgs)
}
