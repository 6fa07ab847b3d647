package catalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/report"
)

// TestAudit follows Puppet 7's recorded behaviour (puppet apply -e of the
// same manifest, twice, the file edited in between): the first run logs
// each audited value as newly recorded; after an edit behind Puppet's
// back, the next run reports an audit event per changed property (status
// audit, not a change) and refreshes subscribers; a run with nothing
// edited says nothing.
func TestAudit(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	log := filepath.Join(dir, "log")
	state := filepath.Join(dir, "audit.json")
	require.NoError(t, os.WriteFile(f, []byte("hi\n"), 0o644))
	require.NoError(t, os.Chmod(f, 0o644))
	data := build(t,
		res{typ: "File", title: f, params: map[string]any{"audit": []any{"content", "mode"}}},
		appendExec("refreshed", log, "refreshed", map[string]any{"refreshonly": true, "subscribe": "File[" + f + "]"}),
	)
	o := catalog.Options{Audits: state}

	rep, out := applied(t, data, o)
	assert.Contains(t, out, "File["+f+"]/content: audit change: newly-recorded value {sha256}")
	assert.Contains(t, out, "File["+f+"]/mode: audit change: newly-recorded value 0644")
	st := status(t, rep, "File["+f+"]")
	assert.Empty(t, st.Events)
	assert.False(t, st.Changed)
	assert.Nil(t, lines(t, log))

	require.NoError(t, os.WriteFile(f, []byte("changed\n"), 0o600))
	require.NoError(t, os.Chmod(f, 0o600))
	rep, out = applied(t, data, o)
	assert.Contains(t, out, "File["+f+"]/mode: audit change: previously recorded value '0644' has been changed to '0600'")
	assert.Contains(t, out, "File["+f+"]/content: audit change: previously recorded value '{sha256}")
	st = status(t, rep, "File["+f+"]")
	require.Len(t, st.Events, 2)
	for _, e := range st.Events {
		assert.Equal(t, report.StatusAudit, e.Status)
		assert.True(t, e.Audited)
		assert.NotNil(t, e.Historical)
	}
	assert.Equal(t, "0600", st.Events[1].Previous)
	assert.Equal(t, "0644", st.Events[1].Historical)
	assert.Equal(t, "mode_changed", st.Events[1].Name)
	assert.False(t, st.Changed, "an audit event is not a change")
	assert.False(t, st.OutOfSync)
	assert.Equal(t, []string{"refreshed"}, lines(t, log), "subscribers hear audit events, as in Puppet")
	assert.Equal(t, 2, rep.ExitCode(), "the refresh it caused is a change")

	rep, out = applied(t, data, o)
	assert.NotContains(t, out, "audit change")
	assert.Empty(t, status(t, rep, "File["+f+"]").Events)
	assert.Equal(t, []string{"refreshed"}, lines(t, log), "nothing changed: no refresh")
}

// TestAuditManagedProperty: a property both managed and audited is
// synced as usual; its change notes the value recorded by the run
// before, and what is recorded is the value found before the sync (so,
// as Puppet's docs warn, the next run reports an audit change too).
func TestAuditManagedProperty(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	state := filepath.Join(dir, "audit.json")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	require.NoError(t, os.Chmod(f, 0o644))
	data := build(t, res{typ: "File", title: f, params: map[string]any{"mode": "0640", "audit": "mode"}})
	o := catalog.Options{Audits: state}
	rep, _ := applied(t, data, o) // records 0644, sets 0640
	st := status(t, rep, "File["+f+"]")
	require.Len(t, st.Events, 1)
	assert.True(t, st.Events[0].Audited)
	assert.Nil(t, st.Events[0].Historical)
	assert.True(t, st.Changed)

	require.NoError(t, os.Chmod(f, 0o600))
	rep, _ = applied(t, data, o)
	st = status(t, rep, "File["+f+"]")
	require.Len(t, st.Events, 1)
	assert.Equal(t, "success", st.Events[0].Status)
	assert.Equal(t, "0644", st.Events[0].Historical)
	assert.Contains(t, st.Events[0].Message, "mode changed '0600' to '0640' (previously recorded value was '0644')")
}

func TestAuditUnknownAttributeFails(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	data := build(t,
		res{typ: "File", title: f, params: map[string]any{"ensure": "file", "audit": []any{"mode", "colour"}}},
		res{typ: "File", title: f + ".after", params: map[string]any{"ensure": "file", "require": "File[" + f + "]"}},
	)
	rep, out := applied(t, data, catalog.Options{Audits: filepath.Join(dir, "audit.json")})
	assert.True(t, status(t, rep, "File["+f+"]").Failed)
	assert.Contains(t, out, "Cannot audit colour: not a valid attribute for File["+f+"]")
	assert.NoFileExists(t, f)
	assert.True(t, status(t, rep, "File["+f+".after]").Skipped)
}

func TestAuditStateUnreadableStartsAfresh(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	state := filepath.Join(dir, "audit.json")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(state, []byte("{not json"), 0o600))
	data := build(t, res{typ: "File", title: f, params: map[string]any{"audit": "mode"}})
	_, out := applied(t, data, catalog.Options{Audits: state})
	assert.Contains(t, out, "is not readable")
	assert.Contains(t, out, "audit change: newly-recorded value")
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"mode":"0644"`)
}

// TestAuditReadsWhereTheParametersSay (issue 36 item 6): the audited
// values are read from where the resource's parameters point, as Puppet
// records them (puppet apply -e "file { 'named': path => P, audit =>
// mode }" logs "File[named]/mode: audit change: newly-recorded value
// 0644"): a file titled apart from its path, an ini_setting's path and
// section. (A host with audit and no ip, in another target, is recorded
// absent and fails "ip is a required attribute for hosts", as Puppet 7
// records and fails it.)
func TestAuditReadsWhereTheParametersSay(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("x\n"), 0o640))
	require.NoError(t, os.Chmod(f, 0o640))
	ini := filepath.Join(dir, "a.ini")
	require.NoError(t, os.WriteFile(ini, []byte("[main]\nk = v\n"), 0o644))
	data := build(t,
		res{typ: "File", title: "named", params: map[string]any{"path": f, "audit": "mode"}},
		res{typ: "Ini_setting", title: "k", params: map[string]any{"path": ini, "section": "main", "setting": "k", "audit": "ensure"}},
	)
	_, out := applied(t, data, catalog.Options{Audits: filepath.Join(dir, "audit.json")})
	assert.Contains(t, out, "File[named]/mode: audit change: newly-recorded value 0640")
	assert.Contains(t, out, "Ini_setting[k]/ensure: audit change: newly-recorded value present")
	assert.NotContains(t, out, "not audited")
}
