package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// compileCatalog has Puppet compile code (puppet apply --noop
// --catalog_cache_terminus json, nothing applied) and returns the path of
// the catalog it wrote.
func compileCatalog(t *testing.T, code string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("puppet", "apply", "--noop", "--catalog_cache_terminus", "json", "--client_datadir", dir,
		"--color", "false", "-e", code).CombinedOutput()
	require.NoError(t, err, string(out))
	found, _ := filepath.Glob(filepath.Join(dir, "catalog", "*.json"))
	require.Len(t, found, 1, string(out))
	return found[0]
}

// reportStatuses reads a report's resource statuses, Puppet's or pippet's.
func reportStatuses(t *testing.T, report string) map[string]ourStatus {
	t.Helper()
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var doc struct {
		Statuses map[string]ourStatus `yaml:"resource_statuses"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	return doc.Statuses
}

// statusLines is each status as one comparable line.
func statusLines(st map[string]ourStatus) []string {
	var out []string
	for ref, s := range st {
		if strings.HasPrefix(ref, "Schedule[") || strings.HasPrefix(ref, "Filebucket[") {
			continue
		}
		line := fmt.Sprintf("%s changed=%v failed=%v skipped=%v", ref, s.Changed, s.Failed, s.Skipped)
		for _, e := range s.Events {
			p := "nil"
			if e.Property != nil {
				p = *e.Property
			}
			line += fmt.Sprintf(" [%s %s %s]", p, e.Status, e.Message)
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// A delegated type that looks at its catalog, as any of Puppet's types
// may: richardc-datacat's datacat_collector finds its File in the
// catalog, merges the datacat_fragments it finds there and sets the
// File's content before the File is applied. The catalog Puppet compiled,
// applied twice by Puppet and twice by pippet, writes the same file with
// the same statuses, the second run unchanged (it failed with "Failed to
// map File[...] into a resource", the File skipped, when the collector saw
// a catalog of its own).
func TestCatalogDelegatedDatacat(t *testing.T) {
	needPuppet(t)
	if _, err := os.Stat("/usr/share/puppet/modules/datacat"); err != nil {
		t.Skip("puppet-module-richardc-datacat not installed")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "merged.conf")
	code := fmt.Sprintf(`
datacat { '%[1]s':
  template_body => "<%% @data.keys.sort.each do |k| -%%><%%= k %%>=<%%= @data[k] %%>\n<%% end -%%>",
}
datacat_fragment { 'one': target => '%[1]s', data => { 'a' => 1, 'list' => ['x'] } }
datacat_fragment { 'two': target => '%[1]s', data => { 'b' => 2, 'list' => ['y'] }, order => '10' }
`, target)
	cat := compileCatalog(t, code)
	_, err := os.Stat(target)
	require.True(t, os.IsNotExist(err), "compiling wrote nothing")

	run := func(t *testing.T, apply func(report string)) (content string, runs [2][]string) {
		require.NoError(t, os.RemoveAll(target))
		for i := range runs {
			report := filepath.Join(t.TempDir(), "report.yaml")
			apply(report)
			runs[i] = statusLines(reportStatuses(t, report))
			if i == 0 {
				data, err := os.ReadFile(target)
				require.NoError(t, err)
				content = string(data)
			}
		}
		return content, runs
	}
	puppetContent, puppetRuns := run(t, func(report string) {
		out, err := exec.Command("puppet", "apply", "--catalog", cat, "--lastrunreport", report, "--color", "false").CombinedOutput()
		require.NoError(t, err, string(out))
	})
	require.Equal(t, "a=1\nb=2\nlist=[\"y\", \"x\"]\n", puppetContent, "fragment two (order 10) merged first")
	ourContent, ourRuns := run(t, func(report string) {
		cmd := exec.Command(receiverBin, "apply", "--state-dir", t.TempDir(), "--lastrunreport", report, "--detailed-exitcodes", cat)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 2) {
			t.Fatalf("receiver apply: %v\n%s", err, out)
		}
		assert.NotContains(t, string(out), "Error:")
	})
	assert.Equal(t, puppetContent, ourContent)
	assert.Equal(t, puppetRuns[0], ourRuns[0], "run 1")
	assert.Equal(t, puppetRuns[1], ourRuns[1], "run 2")
	for _, l := range ourRuns[1] {
		assert.Contains(t, l, "changed=false failed=false skipped=false", "run 2 unchanged")
	}
}
