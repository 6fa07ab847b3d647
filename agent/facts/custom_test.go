package facts_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/delegate"
)

func writeFile(t *testing.T, dir, name, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), mode))
	return p
}

// A fake ruby that records that it ran, then fails as a Ruby without
// Facter does in the helper (exit 3).
func fakeRuby(t *testing.T) (ruby, marker string) {
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	ruby = writeFile(t, dir, "ruby", "#!/bin/sh\ntouch '"+marker+"'\necho 'Facter cannot be loaded: cannot load such file -- facter' >&2\nexit 3\n", 0o755)
	return ruby, marker
}

func TestCustomFactsWithoutRubyFilesStartNoProcess(t *testing.T) {
	ruby, marker := fakeRuby(t)
	dir := t.TempDir()
	writeFile(t, dir, "README", "not a fact\n", 0o644)
	writeFile(t, dir, "sub/deep.rb", "raise 'not loaded: Facter reads only the directory itself'\n", 0o644)
	f, weights, errs := facts.LoadCustom(context.Background(), []string{dir, filepath.Join(dir, "missing")}, ruby, 0)
	assert.Empty(t, f)
	assert.Empty(t, weights)
	assert.Empty(t, errs)
	assert.NoFileExists(t, marker, "no process started")
}

func TestCustomFactsWithoutFacterAreSkippedWithAWarning(t *testing.T) {
	ruby, marker := fakeRuby(t)
	dir := t.TempDir()
	writeFile(t, dir, "site_role.rb", "Facter.add(:site_role) { setcode { 'web' } }\n", 0o644)
	writeFile(t, dir, "rack.rb", "Facter.add(:rack) { setcode { 'r1' } }\n", 0o644)
	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}, CustomDirs: []string{dir}, Ruby: ruby})
	assert.FileExists(t, marker)
	require.Len(t, errs, 1)
	var skipped *facts.SkippedError
	require.True(t, errors.As(errs[0], &skipped), "%v", errs[0])
	assert.Equal(t, []string{"rack", "site_role"}, skipped.Facts)
	assert.Equal(t, "custom facts not evaluated (Facter is not installed for "+ruby+"): rack, site_role", errs[0].Error())
	assert.NotContains(t, f, "site_role")
	assert.Contains(t, f, "kernel", "the other facts are gathered")

	_, _, errs = facts.LoadCustom(context.Background(), []string{dir}, filepath.Join(t.TempDir(), "no-ruby"), 0)
	require.Len(t, errs, 1)
	require.True(t, errors.As(errs[0], &skipped), "%v", errs[0])
	assert.Contains(t, errs[0].Error(), "no Ruby at ")
}

// needFacter skips where Facter is not installed.
func needFacter(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("facter"); err != nil {
		t.Skip("Facter is not installed")
	}
	if exec.Command("ruby", "-e", "require 'facter'").Run() != nil {
		t.Skip("Ruby cannot load Facter")
	}
}

const customFacts = `Facter.add(:pippet_custom) do
  setcode { "on " + Facter.value(:kernel).to_s }
end
Facter.add(:pippet_count) { setcode { 42 } }
Facter.add(:pippet_struct) do
  setcode { { 'list' => [1, 2.5, true, nil, 'x'], 'nested' => { 'a' => 'b' } } }
end
# A core fact's name without weight: Facter keeps the core value.
Facter.add(:kernel) { setcode { 'custom-kernel' } }
# With weight: the custom value wins.
Facter.add(:osfamily) do
  has_weight 5
  setcode { 'custom-family' }
end
# An external fact of the same name wins over a light custom one ...
Facter.add(:pippet_shared) { setcode { 'from custom' } }
# ... not over one that weighs more than an external fact.
Facter.add(:pippet_heavy) do
  has_weight 20_000
  setcode { 'from custom' }
end
Facter.add(:pippet_nil) { setcode { nil } }
Facter.add(:pippet_confined) do
  confine kernel: 'NotThisKernel'
  setcode { 'never' }
end
`

func TestCustomFactsEvaluatedByFacter(t *testing.T) {
	needFacter(t)
	checkCustomFacts(t, nil)
}

// needPuppet is the fallback of an agent's run (Puppet's bridge), where
// Puppet is installed; it is stopped when the test ends.
func needPuppet(t *testing.T) *delegate.Fallback {
	t.Helper()
	if _, ok := delegate.FindPuppet(); !ok {
		t.Skip("Puppet is not installed")
	}
	fb, err := delegate.New(delegate.Options{Fallback: delegate.ModePuppet, LibDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fb.Close(context.Background()) })
	return fb
}

// The same facts, the same errors, when the Puppet an agent's run starts
// for the types pippet lacks evaluates them (no Facter process).
func TestCustomFactsEvaluatedByTheRunsPuppet(t *testing.T) {
	needFacter(t)
	fb := needPuppet(t)
	calls := 0
	checkCustomFacts(t, func(ctx context.Context, dirs []string) ([]byte, error) {
		calls++
		return fb.CustomFacts(ctx, dirs)
	})
	assert.Equal(t, 1, calls)
	assert.NotZero(t, fb.Pid(), "Puppet is running, kept for the resources")
}

func checkCustomFacts(t *testing.T, eval facts.Evaluator) {
	custom, ext := t.TempDir(), t.TempDir()
	writeFile(t, custom, "pippet_custom.rb", customFacts, 0o644)
	writeFile(t, custom, "pippet_raises.rb", "Facter.add(:pippet_raises) { setcode { raise 'boom in setcode' } }\n", 0o644)
	writeFile(t, custom, "pippet_broken.rb", "raise 'boom at load'\n", 0o644)
	// A fact that prints (JSON, even) cannot break Facter's answer.
	writeFile(t, custom, "pippet_chatty.rb", "Facter.add(:pippet_chatty) { setcode { puts '{\"facts\":{}}'; 'said' } }\n", 0o644)
	writeFile(t, ext, "shared.txt", "pippet_shared=from external\npippet_heavy=from external\n", 0o644)

	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{ext}, CustomDirs: []string{custom}, Evaluate: eval})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	assert.Contains(t, msgs, "custom facts: error while resolving custom facts in "+filepath.Join(custom, "pippet_broken.rb")+" boom at load")
	assert.Contains(t, msgs, "custom facts: Error while resolving custom fact fact='pippet_raises', resolution='<anonymous>': boom in setcode")
	// Facter says nothing of these; Gather warns.
	custFile := filepath.Join(custom, "pippet_custom.rb")
	assert.Contains(t, msgs, "custom fact kernel ("+custFile+") is named like a core fact; its resolution has no weight, so the core value is kept, as Facter keeps it")
	assert.Contains(t, msgs, "custom fact osfamily ("+custFile+") is named like a core fact; its resolution has weight 5, so its value replaces the core fact's, as in Facter")
	assert.Len(t, msgs, 4, "%v", msgs)

	assert.Equal(t, "on Linux", f["pippet_custom"])
	assert.Equal(t, "said", f["pippet_chatty"])
	assert.Equal(t, int64(42), f["pippet_count"])
	assert.Equal(t, map[string]any{"list": []any{int64(1), 2.5, true, nil, "x"}, "nested": map[string]any{"a": "b"}}, f["pippet_struct"])
	assert.Equal(t, "Linux", f["kernel"])
	assert.Equal(t, "custom-family", f["osfamily"])
	assert.Equal(t, "from external", f["pippet_shared"])
	assert.Equal(t, "from custom", f["pippet_heavy"])
	for _, absent := range []string{"pippet_nil", "pippet_confined", "pippet_raises"} {
		assert.NotContains(t, f, absent)
	}

	// The same facts, as real Facter gives them.
	names := []string{"pippet_custom", "pippet_count", "pippet_struct", "kernel", "osfamily", "pippet_shared", "pippet_heavy", "pippet_nil", "pippet_confined"}
	cmd := exec.Command("facter", append([]string{"--json", "--custom-dir", custom, "--external-dir", ext}, names...)...)
	out, _ := cmd.Output() // exits 1: two of the files raise
	var want map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	require.NoError(t, dec.Decode(&want))
	for _, n := range names {
		got, ok := f[n]
		if want[n] == nil {
			assert.False(t, ok, n)
			continue
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want[n])
		assert.JSONEq(t, string(wantJSON), string(gotJSON), n)
	}
}

func TestUseVardir(t *testing.T) {
	var o facts.Options
	o.UseVardir("/var/cache/puppet")
	assert.Equal(t, append(append([]string(nil), facts.DefaultExternalDirs...), "/var/cache/puppet/facts.d"), o.ExternalDirs)
	assert.Equal(t, []string{"/var/cache/puppet/lib/facter", "/var/cache/puppet/facts"}, o.CustomDirs)
}

func TestCustomFactsProcessIsBounded(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "slow.rb", "Facter.add(:slow) { setcode { sleep 60 } }\n", 0o644)
	ruby := writeFile(t, t.TempDir(), "ruby", "#!/bin/sh\nsleep 60 &\nsleep 60\n", 0o755)
	start := time.Now()
	_, _, errs := facts.LoadCustom(context.Background(), []string{dir}, ruby, 300*time.Millisecond)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "custom facts ("+dir+"): still running after 300ms; killed")
	assert.Less(t, time.Since(start), 10*time.Second)
}

// When the caller's context ends first (the agent's runtimeout, shorter
// than the facts' own bound), the message says when they were stopped and
// why, not the bound they did not reach ("still running after 1m0s").
func TestCustomFactsStoppedByCaller(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "slow.rb", "Facter.add(:slow) { setcode { sleep 60 } }\n", 0o644)
	ruby := writeFile(t, t.TempDir(), "ruby", "#!/bin/sh\nsleep 60\n", 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, errs := facts.LoadCustom(ctx, []string{dir}, ruby, time.Minute)
	require.Len(t, errs, 1)
	assert.NotContains(t, errs[0].Error(), "1m0s")
	assert.Regexp(t, `custom facts \(`+dir+`\): killed after 1\.[5-9]s: context deadline exceeded`, errs[0].Error())
	assert.Less(t, time.Since(start), 10*time.Second)
}
