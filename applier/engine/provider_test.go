package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/mock"
)

func TestSelectProvider(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	require.NoError(t, os.WriteFile(present, nil, 0o644))

	spec := func(name string, c applier.Confine, d map[string][]string) *applier.ProviderSpec {
		s := mock.NewProvider(nil).Spec(name)
		s.Confine, s.Defaults = c, d
		return s
	}
	debian := applier.Facts{"os.family": "Debian", "os.name": "Debian"}
	redhat := applier.Facts{"os.family": "RedHat", "os.name": "Fedora"}
	posix := map[string]bool{"posix": true}

	cases := []struct {
		name      string
		providers []*applier.ProviderSpec
		facts     applier.Facts
		features  map[string]bool
		params    map[string]any
		want      string
		wantErr   string
	}{
		{name: "first suitable", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{spec("a", applier.Confine{}, nil), spec("b", applier.Confine{}, nil)}, want: "a"},
		{name: "default by fact wins", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{
				spec("rpm", applier.Confine{}, map[string][]string{"os.family": {"RedHat"}}),
				spec("dpkg", applier.Confine{}, map[string][]string{"os.family": {"debian"}}),
			}, want: "dpkg"},
		{name: "default by fact, other facts", facts: redhat, features: posix,
			providers: []*applier.ProviderSpec{
				spec("dpkg", applier.Confine{}, map[string][]string{"os.family": {"Debian"}}),
				spec("rpm", applier.Confine{}, map[string][]string{"os.family": {"RedHat"}}),
			}, want: "rpm"},
		{name: "more specific default wins", facts: redhat, features: posix,
			providers: []*applier.ProviderSpec{
				spec("yum", applier.Confine{}, map[string][]string{"os.family": {"RedHat"}}),
				spec("dnf", applier.Confine{}, map[string][]string{"os.family": {"RedHat"}, "os.name": {"Fedora"}}),
			}, want: "dnf"},
		{name: "default by feature", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{
				spec("windows", applier.Confine{}, map[string][]string{"feature": {"microsoft_windows"}}),
				spec("posix", applier.Confine{}, map[string][]string{"feature": {"posix"}}),
			}, want: "posix"},
		{name: "unsuitable default skipped", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{
				spec("dpkg", applier.Confine{Commands: []string{"no-such-command-xyz"}}, map[string][]string{"os.family": {"Debian"}}),
				spec("other", applier.Confine{}, nil),
			}, want: "other"},
		{name: "confine on facts", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{
				spec("rh", applier.Confine{Facts: map[string][]string{"os.family": {"RedHat"}}}, nil),
				spec("deb", applier.Confine{Facts: map[string][]string{"os.family": {"Debian"}}}, nil),
			}, want: "deb"},
		{name: "confine on command, file, feature, func all hold", facts: debian, features: map[string]bool{"posix": true, "root": true},
			providers: []*applier.ProviderSpec{spec("x", applier.Confine{
				Commands: []string{"sh", "/bin/sh"}, Files: []string{present}, Features: []string{"root"},
				Func: func(*applier.Env) string { return "" }}, nil)}, want: "x"},
		{name: "explicit provider", facts: debian, features: posix, params: map[string]any{"provider": "b"},
			providers: []*applier.ProviderSpec{spec("a", applier.Confine{}, nil), spec("b", applier.Confine{}, nil)}, want: "b"},
		{name: "explicit provider unsuitable", facts: debian, features: posix, params: map[string]any{"provider": "b"},
			providers: []*applier.ProviderSpec{spec("a", applier.Confine{}, nil), spec("b", applier.Confine{Features: []string{"root"}}, nil)},
			wantErr:   "Parameter provider failed on Widget[/a]: provider b is not functional on this host: feature 'root' missing"},
		{name: "none suitable, one provider", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{spec("a", applier.Confine{Commands: []string{"no-such-command-xyz"}}, nil)},
			wantErr:   "no suitable provider for Widget: command 'no-such-command-xyz' not found"},
		{name: "none suitable, several", facts: debian, features: posix,
			providers: []*applier.ProviderSpec{
				spec("a", applier.Confine{Files: []string{filepath.Join(dir, "missing")}}, nil),
				spec("b", applier.Confine{Facts: map[string][]string{"os.family": {"RedHat", "Suse"}}}, nil),
				spec("c", applier.Confine{Facts: map[string][]string{"virtual": {"kvm"}}}, nil),
				spec("d", applier.Confine{Func: func(*applier.Env) string { return "no tea" }}, nil),
			},
			wantErr: "no suitable provider for Widget: a: file '" + filepath.Join(dir, "missing") + "' not found; " +
				"b: fact 'os.family' is 'Debian', not RedHat or Suse; c: fact 'virtual' is unset, not kvm; d: no tea"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ty := mock.Widget(mock.NewProvider(nil))
			ty.Providers = tc.providers
			env := &applier.Env{Facts: tc.facts, Features: tc.features}
			e := engine.New(applier.NewRegistry(), env)
			r, err := ty.NewResource("/a", tc.params, false)
			require.NoError(t, err)
			got, err := e.SelectProvider(r)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Name)
		})
	}
}

// TestSelectProviderSeesNewFiles: the order of preference is cached, but
// commands and files are looked for on every request, since an earlier
// resource may have installed them.
func TestSelectProviderSeesNewFiles(t *testing.T) {
	later := filepath.Join(t.TempDir(), "installed-later")
	best := mock.NewProvider(nil).Spec("best")
	best.Confine = applier.Confine{Files: []string{later}}
	best.Defaults = map[string][]string{"os.family": {"Debian"}}
	fallback := mock.NewProvider(nil).Spec("fallback")
	ty := mock.Widget(mock.NewProvider(nil))
	ty.Providers = []*applier.ProviderSpec{fallback, best}
	e := engine.New(applier.NewRegistry(), &applier.Env{Facts: applier.Facts{"os.family": "Debian"}, Features: map[string]bool{"posix": true}})
	r, err := ty.NewResource("/a", nil, false)
	require.NoError(t, err)

	got, err := e.SelectProvider(r)
	require.NoError(t, err)
	assert.Equal(t, "fallback", got.Name, "the default's file is missing")
	require.NoError(t, os.WriteFile(later, nil, 0o644))
	got, err = e.SelectProvider(r)
	require.NoError(t, err)
	assert.Equal(t, "best", got.Name, "the default once its file exists")
}

// A Commands confine is cached per command while PATH and the file found
// hold, and looked up again when either changes: a command removed,
// replaced by a non-executable file, or PATH changed is seen at once.
func TestConfineCommandsCache(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	t.Setenv("PATH", dir1)
	s := mock.NewProvider(nil).Spec("p")
	s.Confine = applier.Confine{Commands: []string{"pippet-confine-probe"}}
	e := engine.New(applier.NewRegistry(), &applier.Env{})
	tool1, tool2 := filepath.Join(dir1, "pippet-confine-probe"), filepath.Join(dir2, "pippet-confine-probe")
	missing := "command 'pippet-confine-probe' not found"

	assert.Equal(t, missing, e.Suitable(s))
	require.NoError(t, os.WriteFile(tool1, []byte("#!/bin/sh\n"), 0o755))
	assert.Equal(t, "", e.Suitable(s), "installed: found")
	assert.Equal(t, "", e.Suitable(s), "found again (cached)")
	require.NoError(t, os.Chmod(tool1, 0o644))
	assert.Equal(t, missing, e.Suitable(s), "no longer executable")
	require.NoError(t, os.Chmod(tool1, 0o755))
	assert.Equal(t, "", e.Suitable(s))
	require.NoError(t, os.Remove(tool1))
	assert.Equal(t, missing, e.Suitable(s), "removed")
	require.NoError(t, os.WriteFile(tool2, []byte("#!/bin/sh\n"), 0o755))
	assert.Equal(t, missing, e.Suitable(s), "elsewhere, not on PATH")
	t.Setenv("PATH", dir1+":"+dir2)
	assert.Equal(t, "", e.Suitable(s), "PATH changed: found in its new directory")
	require.NoError(t, os.Rename(tool2, tool2+".old"))
	require.NoError(t, os.WriteFile(tool1, nil, 0o644))
	assert.Equal(t, missing, e.Suitable(s), "the one found is gone; a non-executable one is no command")
}
