package sshauthkey_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sshauthkey "github.com/pippet/pippet/applier/types/ssh_authorized_key"
	"github.com/pippet/pippet/applier/typetest"
)

// The listing of one user's keys, and of a target: named keys by name in
// file order, the last line of a repeated name (the one a resource is
// bound to), options as a find reports them, an unnamed key left out;
// each state one that apply finds unchanged. Without user or target
// there is no file to list.
func TestInstances(t *testing.T) {
	home, _ := testUser(t, "pipcronk7", 47507)
	e := engine(t)
	require.Equal(t, "changed", typetest.Summary(e.Apply("ssh_authorized_key", "k1@h", "{user: pipcronk7, type: rsa, key: "+rsa+"}")), e.Log())
	target := filepath.Join(home, ".ssh", "authorized_keys")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	b = append(b, []byte("no-pty,command=\"/bin/x y\" ssh-ed25519 "+ed+" k2@h\nssh-rsa "+rsa+"\n# c\nssh-ed25519 "+ed+" k1@h\n")...)
	require.NoError(t, os.WriteFile(target, b, 0o600))

	for _, scope := range []map[string]any{{"user": "pipcronk7"}, {"target": target}} {
		list := typetest.List(t, sshauthkey.Type, sshauthkey.Parsed, scope)
		require.Len(t, list, 2, "%v", scope)
		assert.Equal(t, "k2@h", list[0].Title)
		assert.Equal(t, "k1@h", list[1].Title, "listed at its last line")
		st := list[0].State
		assert.Equal(t, "present", st.Value("ensure"))
		assert.Equal(t, "ssh-ed25519", st.Value("type"))
		assert.Equal(t, ed, st.Value("key"))
		assert.Equal(t, []any{"no-pty", `command="/bin/x y"`}, st.Value("options"))
		assert.Equal(t, target, st.Value("target"))
		assert.Equal(t, ed, list[1].State.Value("key"), "the last k1@h")
		assert.Equal(t, []any{"absent"}, list[1].State.Value("options"))
		if scope["user"] != nil {
			assert.Equal(t, "pipcronk7", st.Value("user"))
		} else {
			assert.Nil(t, st.Value("user"), "the user is what the search says")
		}
	}
	res := e.Apply("ssh_authorized_key", "k2@h", `{user: pipcronk7, type: ssh-ed25519, key: `+ed+`, options: [no-pty, 'command="/bin/x y"']}`)
	assert.Equal(t, "unchanged", typetest.Summary(res))
	res = e.Apply("ssh_authorized_key", "k1@h", "{user: pipcronk7, type: ssh-ed25519, key: "+ed+", options: absent}")
	assert.Equal(t, "unchanged", typetest.Summary(res))

	assert.Empty(t, typetest.List(t, sshauthkey.Type, sshauthkey.Parsed, map[string]any{"target": target + ".none"}))
	assert.Empty(t, typetest.List(t, sshauthkey.Type, sshauthkey.Parsed, map[string]any{"user": "pipnosuchuser"}))
	_, err = typetest.TryList(sshauthkey.Type, sshauthkey.Parsed, nil)
	assert.ErrorContains(t, err, "Attribute 'user' or 'target' is mandatory")
}
