package service_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/types/service"
	"github.com/pippet/pippet/applier/typetest"
)

func titles(list []typetest.Listed) []string {
	out := make([]string, len(list))
	for i, l := range list {
		out[i] = l.Title
	}
	return out
}

// The debian listing: every init script of /etc/init.d, read as a find
// reads it (status through `service NAME status`, enable through
// invoke-rc.d), a real script installed here among them; hidden,
// excluded and non-executable files are not services.
func TestDebianInstances(t *testing.T) {
	name, pidfile, _ := initScript(t)
	list := typetest.List(t, service.Type, service.Debian, nil)
	st := typetest.FindListed(list, name)
	require.NotNil(t, st, "%v", titles(list))
	assert.Equal(t, "stopped", st.Value("ensure"))
	assert.Equal(t, "false", st.Value("enable"))

	e := engine(t)
	require.Equal(t, "changed", typetest.Summary(e.Apply("service", name, "{ensure: running, enable: true}")), e.Log())
	require.FileExists(t, pidfile)
	st = typetest.FindListed(typetest.List(t, service.Type, service.Debian, nil), name)
	assert.Equal(t, "running", st.Value("ensure"))
	assert.Equal(t, "true", st.Value("enable"))
	// What the listing says is what apply finds: nothing to change.
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("service", name, "{ensure: running, enable: true}")))

	// Only init scripts of the path given; scripts sorted by name.
	dir := t.TempDir()
	for n, mode := range map[string]os.FileMode{"pipb": 0o755, "pipa": 0o755, ".pipc": 0o755, "pipd": 0o644, "reboot": 0o755} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 3\n"), mode))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "pipdir"), 0o755))
	list = typetest.List(t, service.Type, service.Debian, map[string]any{"path": dir})
	assert.Equal(t, []string{"pipa", "pipb"}, titles(list))
	for _, l := range list {
		assert.Equal(t, "stopped", l.State.Value("ensure"), l.Title)
	}
	assert.Empty(t, typetest.List(t, service.Type, service.Debian, map[string]any{"path": filepath.Join(dir, "none")}))
}

// The systemd listing reads `systemctl list-unit-files` as Puppet reads
// it, then each unit as a find reads it.
func TestSystemdInstances(t *testing.T) {
	dir := t.TempDir()
	comm := filepath.Join(dir, "comm")
	require.NoError(t, os.WriteFile(comm, []byte("systemd\n"), 0o644))
	ctl, err := filepath.Abs("testdata/systemctl")
	require.NoError(t, err)
	service.FakeSystemd(t, comm, ctl)
	t.Setenv("SYSTEMCTL_STATE", dir)
	for unit, enabled := range map[string]string{"pipa.service": "enabled", "pipb.service": "disabled", "pipm.service": "masked", "pips.service": "static"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, unit+".exists"), nil, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, unit+".enabled"), []byte(enabled+"\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pipa.service.active"), nil, 0o644))

	list := typetest.List(t, service.Type, service.Systemd, nil)
	require.Equal(t, []string{"pipa.service", "pipb.service", "pipm.service", "pips.service"}, titles(list))
	want := map[string][2]string{"pipa.service": {"running", "true"}, "pipb.service": {"stopped", "false"},
		"pipm.service": {"stopped", "false"}, "pips.service": {"stopped", "static"}}
	for _, l := range list {
		assert.Equal(t, want[l.Title][0], l.State.Value("ensure"), l.Title)
		assert.Equal(t, want[l.Title][1], l.State.Value("enable"), l.Title)
	}
	e := engine(t)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("service", "pipa.service", "{ensure: running, enable: true}")))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("service", "pipm.service", "{ensure: stopped, enable: false}")))

	// A systemctl that fails fails the listing, with its words.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad"), []byte("#!/bin/sh\necho 'System has not been booted with systemd' >&2\nexit 1\n"), 0o755))
	service.FakeSystemd(t, comm, filepath.Join(dir, "bad"))
	_, err = typetest.TryList(service.Type, service.Systemd, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "System has not been booted with systemd")
}

// base knows a service only by the commands a request gives: it cannot list.
func TestBaseCannotList(t *testing.T) {
	assert.Nil(t, service.Base.Instances)
}
