package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/source"
)

func TestFilebucket(t *testing.T) {
	state, root := t.TempDir(), t.TempDir()
	target := filepath.Join(root, "motd")
	ctx := context.Background()
	var in strings.Builder
	for _, c := range []string{"first", "second", "third"} {
		fmt.Fprintf(&in, `{"type":"file","title":%q,"params":"{content: %s, backup: main}"}`+"\n", target, c)
	}
	fmt.Fprintf(&in, `{"type":"file","title":%q,"params":"{ensure: absent, backup: main}"}`+"\n", target)
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, realMain(ctx, []string{"--no-banner", "--state-dir", state}, strings.NewReader(in.String()), &out, &errb), errb.String())
	assert.Equal(t, 4, strings.Count(out.String(), `"changed":true`), out.String())
	assert.NoFileExists(t, target)

	run := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := realMain(ctx, append([]string{"filebucket"}, args...), strings.NewReader(""), &o, &e)
		return code, o.String(), e.String()
	}
	code, list, stderr := run("--state-dir", state, "list")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	require.Len(t, lines, 3, list)
	sums := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		require.Len(t, f, 4, l)
		assert.Equal(t, target, f[3])
		sums[f[0]] = true
	}
	for _, c := range []string{"first", "second", "third"} {
		assert.True(t, sums[source.SumString(source.SHA256, c)], "%s backed up", c)
	}

	second := source.SumString(source.SHA256, "second")
	code, got, stderr := run("get", second[:8], "--state-dir", state)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "second", got)

	code, _, stderr = run("--state-dir", state, "restore", target, second)
	require.Equal(t, exitOK, code, stderr)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "second", string(b))
	fi, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode())

	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--state-dir", state, "get", "0123456789"}, exitInput, "no backup"},
		{[]string{"--state-dir", state, "get", "zz"}, exitInput, "too short"},
		{[]string{"--state-dir", state, "restore", "relative", second}, exitInput, "absolute"},
		{[]string{"--state-dir", state, "frobnicate"}, exitUsage, "usage"},
		{[]string{}, exitUsage, "usage"},
	}
	for _, tc := range cases {
		code, _, stderr := run(tc.args...)
		assert.Equal(t, tc.code, code, tc.args)
		assert.Contains(t, stderr, tc.msg, tc.args)
	}
	code, list, _ = run("--state-dir", filepath.Join(state, "empty"), "list")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, list)
}
