package integration

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `make install PREFIX=DIR` puts the receiver in DIR/bin (the README's
// install story), and DESTDIR stages it below another root.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	prefix := filepath.Join(t.TempDir(), "prefix")
	dest := t.TempDir()
	for _, args := range [][]string{
		{"PREFIX=" + prefix},
		{"PREFIX=/usr/local", "DESTDIR=" + dest},
	} {
		// -o build: the binary built for this package is the one installed.
		cmd := exec.Command("make", append([]string{"-s", "-C", "..", "-o", "build", "install", "RECEIVER=" + receiverBin}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make install %v: %s", args, out)
	}
	for _, bin := range []string{filepath.Join(prefix, "bin", "receiver"), filepath.Join(dest, "usr", "local", "bin", "receiver")} {
		out, err := exec.Command(bin, "--version").Output()
		require.NoError(t, err, bin)
		assert.Regexp(t, `^receiver `, string(out))
	}
}

// `make static` builds a receiver that needs no C library: no program
// interpreter, no shared library, for copying to a host without Go.
func TestMakeStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the receiver without cgo")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	bin := filepath.Join(t.TempDir(), "receiver")
	out, err := exec.Command("make", "-s", "-C", "..", "static", "STATIC="+bin).CombinedOutput()
	require.NoError(t, err, "make static: %s", out)

	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary has no program interpreter")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	assert.Empty(t, libs)

	// It works: an apply in a scratch directory.
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^receiver `, string(out))
	dir := t.TempDir()
	cmd := exec.Command(bin, "--no-banner", "--state-dir", t.TempDir())
	cmd.Stdin = strings.NewReader("file " + dir + "/motd {content: hi}\n")
	out, err = cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"changed":true`)
	assert.FileExists(t, filepath.Join(dir, "motd"))
}
