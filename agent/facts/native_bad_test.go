package facts_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
)

// debianFactFile copies Debian's module/lib/facter/name into dir.
func debianFactFile(t *testing.T, dir, module, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(debianModules, module, "lib", "facter", name))
	require.NoError(t, err, "Debian's %s module (installed by .ci/run)", module)
	return writeFile(t, dir, name, string(b), 0o644)
}

// pathWith is the environment with bin first in PATH.
func pathWith(bin string) []string {
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// A fact's command that hangs, floods or fails: the fact is absent with
// one error naming it, its file and the command (hang, flood), or has
// the value Facter gives (a non-zero exit: Facter does not look at the
// status); the other facts are there, and the run does not wait.
func TestNativeFactCommandsBadBehaviour(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         any    // haproxy_version; nil: absent
		err          string // the error about it; "": none
	}{
		{"hangs", "#!/bin/sh\nsleep 30\n", nil, "haproxy -v 2>&1: still running after 300ms; killed"},
		{"floods", "#!/bin/sh\nyes HAProxy version 2.6.12\n", nil, "printed more than"},
		{"fails", "#!/bin/sh\necho 'HAProxy version 2.6.12-1 2023/12/16 - https://haproxy.org/'\nexit 3\n", "2.6.12", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin, dir := t.TempDir(), t.TempDir()
			writeFile(t, bin, "haproxy", c.script, 0o755)
			debianFactFile(t, dir, "haproxy", "haproxy_version.rb")
			debianFactFile(t, dir, "apt", "apt_reboot_required.rb")
			ruby, marker := fakeRuby(t)
			start := time.Now()
			f, errs := facts.Gather(context.Background(), facts.Options{
				CustomDirs: []string{dir}, Ruby: ruby, Env: pathWith(bin), CommandTimeout: 300 * time.Millisecond,
			})
			assert.Less(t, time.Since(start), 10*time.Second)
			assert.NoFileExists(t, marker, "no Ruby started")
			assert.Equal(t, c.want, f["haproxy_version"])
			assert.Equal(t, false, f["apt_reboot_required"], "the other facts are there")
			if c.err == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "%v", errs)
			assert.Contains(t, errs[0].Error(), "custom fact haproxy_version (haproxy/lib/facter/haproxy_version.rb, resolved natively): ")
			assert.Contains(t, errs[0].Error(), c.err)
		})
	}
}

// A known file edited by one byte goes to Facter, only it: Ruby is given
// the directory (searched) and that file; the others stay native; the
// values are Facter's in both cases.
func TestNativeFactsEditedFileGoesToFacter(t *testing.T) {
	ruby, err := exec.LookPath("ruby")
	if err != nil {
		t.Skip("no Ruby")
	}
	dir, logDir := t.TempDir(), t.TempDir()
	debianFactFile(t, dir, "apt", "apt_reboot_required.rb")
	debianFactFile(t, dir, "apt", "apt_sources.rb")
	edited := debianFactFile(t, dir, "ssh", "ssh_server_version.rb")
	b, err := os.ReadFile(edited)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(edited, append(b, '\n'), 0o644))
	argv := filepath.Join(logDir, "argv")
	wrapper := writeFile(t, logDir, "ruby", "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in /*) echo \"$a\";; esac; done >> '"+argv+"'\nexec "+ruby+" \"$@\"\n", 0o755)

	want := facterP(t, dir, []string{"apt_reboot_required", "apt_sources", "ssh_server_version_full", "ssh_server_version_major"})
	f, errs := facts.Gather(context.Background(), facts.Options{CustomDirs: []string{dir}, Ruby: wrapper})
	assert.Empty(t, errs)
	for _, name := range []string{"apt_reboot_required", "apt_sources", "ssh_server_version_full", "ssh_server_version_major"} {
		assert.Equal(t, encodeFact(t, want[name]), encodeFact(t, f[name]), name)
	}
	got, err := os.ReadFile(argv)
	require.NoError(t, err, "Ruby evaluated the edited file")
	assert.Equal(t, dir+"\n"+edited+"\n", string(got), "Ruby is given the directory and the edited file, nothing else")
}

// Without the engine's provider choice (DefaultProvider nil), stdlib's
// package_provider is not known: it goes to Facter, the rest of stdlib
// stays native.
func TestNativeFactsNeedingPuppetGoToFacterWithoutIt(t *testing.T) {
	dir := t.TempDir()
	debianFactFile(t, dir, "stdlib", "package_provider.rb")
	debianFactFile(t, dir, "stdlib", "pe_version.rb")
	ruby, marker := fakeRuby(t)
	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}, CustomDirs: []string{dir}, Ruby: ruby})
	assert.FileExists(t, marker)
	require.Len(t, errs, 1)
	var skipped *facts.SkippedError
	require.True(t, errors.As(errs[0], &skipped), "%v", errs[0])
	assert.Equal(t, []string{"package_provider"}, skipped.Facts)
	assert.Equal(t, false, f["is_pe"])
}

// The same through the run's Puppet: the bridge is given the directory
// and the edited file, and evaluates that file's facts alone (the known
// files' facts come from Go, so apt's are not evaluated by Ruby: a fact
// file of the directory that records its evaluation says so).
func TestNativeFactsEditedFileGoesToTheRunsPuppet(t *testing.T) {
	fb := needPuppet(t)
	dir, logDir := t.TempDir(), t.TempDir()
	debianFactFile(t, dir, "apt", "apt_reboot_required.rb")
	edited := debianFactFile(t, dir, "ssh", "ssh_server_version.rb")
	b, err := os.ReadFile(edited)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(edited, append(b, '\n'), 0o644))
	var asked [][]string
	f, errs := facts.Gather(context.Background(), facts.Options{CustomDirs: []string{dir}, Ruby: filepath.Join(logDir, "no-ruby"),
		Evaluate: func(ctx context.Context, dirs []string) ([]byte, error) {
			asked = append(asked, dirs)
			out, err := fb.CustomFacts(ctx, dirs)
			if err == nil && strings.Contains(string(out), "apt_reboot_required") {
				t.Errorf("the bridge evaluated a known file: %s", out)
			}
			return out, err
		}})
	assert.Empty(t, errs)
	assert.Equal(t, [][]string{{dir, edited}}, asked)
	want := facterP(t, dir, []string{"apt_reboot_required", "ssh_server_version_full"})
	assert.Equal(t, encodeFact(t, want["ssh_server_version_full"]), encodeFact(t, f["ssh_server_version_full"]))
	assert.Equal(t, false, f["apt_reboot_required"])
}

// A custom fact directory that is a symbolic link to elsewhere: its
// facts are read from there (as Facter), with one warning saying so.
func TestCustomFactDirSymlinkWarns(t *testing.T) {
	real, parent := t.TempDir(), t.TempDir()
	debianFactFile(t, real, "apt", "apt_reboot_required.rb")
	link := filepath.Join(parent, "facter")
	require.NoError(t, os.Symlink(real, link))
	ruby, marker := fakeRuby(t)
	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}, CustomDirs: []string{link}, Ruby: ruby})
	assert.NoFileExists(t, marker)
	assert.Equal(t, false, f["apt_reboot_required"])
	require.Len(t, errs, 1)
	var dw *facts.DirWarning
	require.True(t, errors.As(errs[0], &dw), "%v", errs[0])
	assert.Equal(t, "custom fact directory "+link+": a symbolic link to "+real+"; its facts are read from there", errs[0].Error())
}

// A fact of a file Facter evaluates that a known file asks for (here
// osfamily, which apt's files confine on): the known files see
// Facter's value, and the result is Facter's, with either value.
func TestNativeFactsAskingForAFacterFact(t *testing.T) {
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("no Ruby")
	}
	for _, family := range []string{"Plan9", "Debian"} {
		dir := t.TempDir()
		debianFactFile(t, dir, "apt", "apt_reboot_required.rb")
		debianFactFile(t, dir, "apt", "apt_sources.rb")
		writeFile(t, dir, "family.rb", "Facter.add(:osfamily) do\n  has_weight 100\n  setcode { '"+family+"' }\nend\n", 0o644)
		names := []string{"osfamily", "apt_reboot_required", "apt_sources"}
		want := facterP(t, dir, names)
		f, errs := facts.Gather(context.Background(), facts.Options{CustomDirs: []string{dir}})
		// osfamily is a core fact's name: that warning, and nothing else.
		require.Len(t, errs, 1, "%v", errs)
		var cw *facts.CoreNameWarning
		assert.ErrorAs(t, errs[0], &cw)
		for _, name := range names {
			assert.Equal(t, encodeFact(t, want[name]), encodeFact(t, f[name]), "%s, osfamily %s", name, family)
		}
		assert.Equal(t, family, f["osfamily"])
		if family == "Plan9" {
			assert.NotContains(t, f, "apt_reboot_required", "confined to Debian")
		} else {
			assert.Contains(t, f, "apt_reboot_required")
		}
	}
}

// A file Facter evaluates that asks, when loaded, for a fact nobody
// defines makes Facter load every file of the directory, the known ones
// included, and evaluate their facts (ipaclient's files do, on a site
// with every Debian module): those are Facter's, and the known file is
// not resolved again (its command runs once, not twice).
func TestNativeFactsFacterGaveAlreadyAreNotResolvedAgain(t *testing.T) {
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("no Ruby")
	}
	bin, dir := t.TempDir(), t.TempDir()
	runs := filepath.Join(bin, "runs")
	writeFile(t, bin, "haproxy", "#!/bin/sh\necho run >> '"+runs+"'\necho 'HAProxy version 2.6.12-1 2023/12/16 - https://haproxy.org/'\n", 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	debianFactFile(t, dir, "haproxy", "haproxy_version.rb")
	// Asked when the file is loaded, as ipaclient's files do.
	writeFile(t, dir, "trigger.rb", "Facter.value(:pippet_no_such_fact)\nFacter.add(:trigger) do\n  setcode { 'loaded all' }\nend\n", 0o644)
	f, errs := facts.Gather(context.Background(), facts.Options{CustomDirs: []string{dir}})
	assert.Empty(t, errs)
	assert.Equal(t, "loaded all", f["trigger"])
	assert.Equal(t, "2.6.12", f["haproxy_version"])
	b, err := os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, "run\n", string(b), "haproxy -v ran once, in Facter")
}
