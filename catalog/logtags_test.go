package catalog_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/catalog"
)

// TestLogTagsAreTheResourcesTags: a line about a resource logged after
// it was applied (Scheduling refresh of ...) carries the resource's tags,
// file and line in the report, as Puppet's (its report, recorded by
// `puppet apply -v m.pp --lastrunreport` into
// testdata/puppet-scheduling-refresh-report.yaml); PuppetDB and the
// dashboards filter logs by tag.
func TestLogTagsAreTheResourcesTags(t *testing.T) {
	b, err := os.ReadFile("testdata/puppet-scheduling-refresh-report.yaml")
	require.NoError(t, err)
	var puppet struct {
		Logs []struct {
			Message string   `yaml:"message"`
			Tags    []string `yaml:"tags"`
		} `yaml:"logs"`
	}
	require.NoError(t, yaml.Unmarshal(regexp.MustCompile(`!ruby/[^\s]+`).ReplaceAll(b, nil), &puppet))
	var want []string
	for _, l := range puppet.Logs {
		if l.Message == "Scheduling refresh of Exec[refresh]" {
			want = l.Tags
		}
	}
	require.Equal(t, []string{"info", "file", "class", "conf"}, want, "Puppet's recorded tags")

	dir := t.TempDir()
	data := build(t,
		class("Conf", nil),
		res{typ: "File", title: filepath.Join(dir, "f"), params: map[string]any{"content": "x\n", "notify": "Exec[refresh]"},
			in: "Class[Conf]", tags: []string{"class", "conf"}},
		res{typ: "Exec", title: "refresh", params: map[string]any{"command": "/bin/true", "refreshonly": true}},
	)
	logh := catalog.NewLog(nil)
	logh.Keep(slog.LevelInfo)
	eng := engine.New(applier.Default, &applier.Env{Options: applier.Options{StateDir: t.TempDir()}, Log: slog.New(logh)})
	c, err := catalog.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	g, err := catalog.Build(c, applier.Default)
	require.NoError(t, err)
	rep := catalog.Apply(context.Background(), g, eng, catalog.Options{Log: logh})
	var found bool
	for _, l := range rep.Logs {
		if l.Message == "Scheduling refresh of Exec[refresh]" {
			found = true
			assert.Equal(t, "/Stage[main]/Conf/File["+filepath.Join(dir, "f")+"]", l.Source)
			assert.Equal(t, want[1:], l.Tags, "the resource's tags (the report adds the level's)")
		}
	}
	assert.True(t, found, "no Scheduling refresh line in the report: %v", rep.Logs)
}
