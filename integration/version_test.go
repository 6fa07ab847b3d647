package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `receiver --version` names the commit the binary was built from and
// says whether the tree had uncommitted changes: through the Makefile's
// -ldflags (git describe --dirty) and through the VCS stamp `go build`
// and `go install` record in a git checkout. The working tree is copied
// into a fresh repository so that the test builds what is checked out
// here, committed or not.
func TestVersionNamesCommit(t *testing.T) {
	for _, tool := range []string{"git", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("the source is not a git checkout: %v", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		from := filepath.Join(root, f)
		fi, err := os.Lstat(from)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755))
		copyFile(t, from, filepath.Join(src, f), fi.Mode().Perm())
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com", "-C", src}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "snapshot")
	rev := git("rev-parse", "HEAD")

	version := func(build ...string) string {
		t.Helper()
		bin := filepath.Join(src, "bin", "receiver")
		os.Remove(bin)
		cmd := exec.Command(build[0], build[1:]...)
		cmd.Dir = src
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", build, out)
		out, err = exec.Command(bin, "--version").Output()
		require.NoError(t, err)
		return string(out)
	}
	makeBuild := []string{"make", "build"}
	goBuild := []string{"go", "build", "-buildvcs=true", "-o", "bin/receiver", "./cmd/receiver"}

	described := git("describe", "--always", "--dirty")
	assert.NotContains(t, described, "dirty")
	assert.Regexp(t, `^receiver \S+ \(protocol 3\) commit `+described+"\n$", version(makeBuild...))
	assert.Regexp(t, `^receiver \S+ \(protocol 3\) commit `+rev[:12]+"\n$", version(goBuild...))

	// A change to a tracked file makes the tree modified.
	f, err := os.OpenFile(filepath.Join(src, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\nA local change.\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Regexp(t, `^receiver \S+ \(protocol 3\) commit `+described+", tree modified\n$", version(makeBuild...))
	assert.Regexp(t, `^receiver \S+ \(protocol 3\) commit `+rev[:12]+", tree modified\n$", version(goBuild...))
}
