package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/runner"
)

// TestSiteAgainstTheReceiver runs site.yaml, moved into a temp dir, through
// the receiver built from this module: twice, the second run finding
// everything in place.
func TestSiteAgainstTheReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the receiver")
	}
	bin := testutil.Receiver(t)

	tmp := t.TempDir()
	root := filepath.Join(tmp, "pippet-graph-site")
	data, err := os.ReadFile("site.yaml")
	require.NoError(t, err)
	data, err = Expand(data, func(name string) (string, bool) {
		return map[string]string{"TMPDIR": tmp, "USER": "site"}[name], true
	})
	require.NoError(t, err)
	g, err := Parse(data)
	require.NoError(t, err)

	r := runner.New(runner.Options{Command: []string{bin, "--state-dir", t.TempDir()}})
	require.NoError(t, r.Register())
	defer r.Unregister()
	statuses := func() map[string]Status {
		m := map[string]Status{}
		for _, o := range g.Run(context.Background(), r, 30*time.Second, func(Outcome) {}) {
			assert.NoError(t, o.Err, o.Ref)
			m[strings.ReplaceAll(o.Ref, root, "ROOT")] = o.Status
		}
		return m
	}
	assert.Equal(t, map[string]Status{
		"File[ROOT]":          Changed,
		"File[ROOT/motd]":     Changed,
		"File[ROOT/app.conf]": Changed,
		"Exec[write version]": Changed,
		"Exec[check config]":  Changed,
		"Notify[done]":        Changed,
		"Notify[hello]":       Changed,
	}, statuses())
	motd, err := os.ReadFile(filepath.Join(root, "motd"))
	require.NoError(t, err)
	assert.Equal(t, "Welcome, managed by pippet\n", string(motd))
	fi, err := os.Stat(filepath.Join(root, "app.conf"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.FileExists(t, filepath.Join(root, "version"))
	assert.FileExists(t, filepath.Join(root, "checked"))

	assert.Equal(t, map[string]Status{
		"File[ROOT]":          Unchanged,
		"File[ROOT/motd]":     Unchanged,
		"File[ROOT/app.conf]": Unchanged,
		"Exec[write version]": Unchanged,
		"Exec[check config]":  Unchanged,
		"Notify[done]":        Changed,
		"Notify[hello]":       Changed,
	}, statuses(), "the second run finds everything in place")
}
