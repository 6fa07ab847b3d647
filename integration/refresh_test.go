package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// A refresh whose callback does nothing is still Puppet's event: its
// transaction logs Triggered 'refresh' from 1 event and records it
// (changed) whatever the type's refresh did: an anchor's (which does
// nothing), a service's that is not running or is to be stopped (not
// restarted), an exec's whose checks hold it back. A service the run
// started is the exception (the start invalidates the refresh). The same
// catalog applied by Puppet and by pippet gives the same statuses.
func TestCatalogRefreshThatDoesNothing(t *testing.T) {
	needPuppet(t)
	run := func(t *testing.T, apply func(cat string) map[string]ourStatus) map[string]string {
		dir := t.TempDir()
		svc := func(name string, params map[string]any) [3]any {
			flag := filepath.Join(dir, name+".run")
			params["provider"] = "base"
			params["binary"] = "/bin/true"
			params["status"] = "/usr/bin/test -f " + flag
			params["start"] = "/usr/bin/touch " + flag
			params["stop"] = "/bin/rm -f " + flag
			params["restart"] = "/usr/bin/touch " + flag + ".restarted"
			return [3]any{"Service", name, params}
		}
		rs := [][3]any{
			{"Notify", "n1", map[string]any{"notify": "Anchor[a]"}},
			{"Anchor", "a", map[string]any{}},
			{"Notify", "n2", map[string]any{"notify": "Service[stopped]"}},
			svc("stopped", map[string]any{"ensure": "stopped"}),
			{"Notify", "n3", map[string]any{"notify": "Service[unmanaged]"}},
			svc("unmanaged", map[string]any{}),
			{"Notify", "n4", map[string]any{"notify": "Service[started]"}},
			svc("started", map[string]any{"ensure": "running"}),
			{"Notify", "n5", map[string]any{"notify": "Exec[held]"}},
			{"Exec", "held", map[string]any{"command": "/usr/bin/touch " + filepath.Join(dir, "ran"), "refreshonly": true, "unless": "/bin/true"}},
		}
		st := apply(handCatalog(t, rs...))
		_, err := os.Stat(filepath.Join(dir, "ran"))
		assert.True(t, os.IsNotExist(err), "the held exec did not run")
		for _, n := range []string{"stopped", "unmanaged", "started"} {
			_, err := os.Stat(filepath.Join(dir, n+".run.restarted"))
			assert.True(t, os.IsNotExist(err), "%s not restarted", n)
		}
		out := map[string]string{}
		for _, ref := range []string{"Anchor[a]", "Service[stopped]", "Service[unmanaged]", "Service[started]", "Exec[held]"} {
			s, ok := st[ref]
			require.True(t, ok, "%s reported", ref)
			line := fmt.Sprintf("changed=%v failed=%v", s.Changed, s.Failed)
			for _, e := range s.Events {
				p := "nil"
				if e.Property != nil {
					p = *e.Property
				}
				if p == "ensure" {
					e.Message = "(ensure's wording)" // not what this test is about
				}
				line += fmt.Sprintf(" [%s %s %s]", p, e.Status, e.Message)
			}
			out[ref] = line
		}
		return out
	}
	puppet := run(t, func(cat string) map[string]ourStatus {
		report := filepath.Join(t.TempDir(), "report.yaml")
		out, err := exec.Command("puppet", "apply", "--catalog", cat, "--lastrunreport", report).CombinedOutput()
		require.NoError(t, err, string(out))
		data, err := os.ReadFile(report)
		require.NoError(t, err)
		var doc struct {
			Statuses map[string]ourStatus `yaml:"resource_statuses"`
		}
		require.NoError(t, yaml.Unmarshal(data, &doc))
		return doc.Statuses
	})
	assert.Equal(t, "changed=true failed=false [nil success Triggered 'refresh' from 1 event]", puppet["Anchor[a]"])
	assert.Equal(t, "changed=true failed=false [ensure success (ensure's wording)]", puppet["Service[started]"])
	ours := run(t, func(cat string) map[string]ourStatus {
		st, _ := applyHand(t, cat)
		return st
	})
	assert.Equal(t, puppet, ours)
}
