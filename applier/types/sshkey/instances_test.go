package sshkey_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/sshkey"
	"github.com/pippet/pippet/applier/typetest"
)

// The listing of a known_hosts file: `name@type` titles in file order
// (as `puppet resource sshkey` prints them, recorded with Puppet 7 on the
// same lines), aliases, the last line of a repeated name and type (the
// one a resource is bound to), comments and a line without a type left
// out; each state one that apply finds unchanged.
func TestInstances(t *testing.T) {
	target := filepath.Join(t.TempDir(), "known_hosts")
	require.NoError(t, os.WriteFile(target, []byte("# c\nh1,a1,a2 ssh-ed25519 "+ed+"\nh2 ssh-rsa AAAAold\nh1 ssh-rsa "+rsa+"\n\nh2 ssh-rsa "+rsa+"\nnotype\n"), 0o644))
	list := typetest.List(t, sshkey.Type, sshkey.Parsed, map[string]any{"target": target})
	var titles []string
	for _, l := range list {
		titles = append(titles, l.Title)
	}
	require.Equal(t, []string{"h1@ssh-ed25519", "h1@ssh-rsa", "h2@ssh-rsa"}, titles)
	st := list[0].State
	assert.Equal(t, "present", st.Value("ensure"))
	assert.Equal(t, ed, st.Value("key"))
	assert.Equal(t, []any{"a1", "a2"}, st.Value("host_aliases"))
	assert.Equal(t, target, st.Value("target"))
	assert.Equal(t, rsa, list[2].State.Value("key"), "the last line of h2@ssh-rsa")
	assert.Equal(t, []any{}, list[2].State.Value("host_aliases"))

	e := typetest.New(t, []*applier.Type{sshkey.Type})
	before, err := os.ReadFile(target)
	require.NoError(t, err)
	for _, l := range list {
		res := e.Apply("sshkey", l.Title, "{ensure: present, key: '"+l.State.Value("key").(string)+"', target: '"+target+"'}")
		assert.Equal(t, "unchanged", typetest.Summary(res), l.Title)
	}
	after, _ := os.ReadFile(target)
	assert.Equal(t, string(before), string(after))

	// No file, no keys; the default target is /etc/ssh/ssh_known_hosts.
	assert.Empty(t, typetest.List(t, sshkey.Type, sshkey.Parsed, map[string]any{"target": target + ".none"}))
	if _, err := os.Stat(sshkey.DefaultTarget); os.IsNotExist(err) {
		assert.Empty(t, typetest.List(t, sshkey.Type, sshkey.Parsed, nil))
	}
}
