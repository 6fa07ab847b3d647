package user_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/user"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

func TestFindAndSearch(t *testing.T) {
	needRoot(t)
	cleanup(t, []string{"pipv680", "pipv681"}, []string{"pipvg682"})
	mkgroup(t, "pipvg682", "47682")
	e := typetest.New(t, []*applier.Type{user.Type})
	require.Equal(t, "changed", typetest.Summary(e.Apply("user", "pipv680",
		"{uid: 47680, gid: 47682, groups: [pipvg682], shell: /bin/sh, home: /nonexistent/pipv680, comment: 'Pip, \"V\"', password: '$6$x$y', password_max_age: 90}")))

	res := e.Find("user", "pipv680", "")
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{
		{Name: "ensure", Value: "present"},
		{Name: "comment", Value: `Pip, "V"`},
		{Name: "gid", Value: int64(47682)},
		{Name: "groups", Value: []any{"pipvg682"}},
		{Name: "home", Value: "/nonexistent/pipv680"},
		{Name: "password", Value: "$6$x$y"},
		{Name: "password_max_age", Value: int64(90)},
		{Name: "password_min_age", Value: int64(0)},
		{Name: "password_warn_days", Value: int64(7)},
		{Name: "provider", Value: "useradd"},
		{Name: "shell", Value: "/bin/sh"},
		{Name: "uid", Value: int64(47680)},
	}, res.State)

	// Round trip: the params applied change nothing.
	before := state(t, "pipv680")
	back := e.Apply("user", "pipv680", res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(back), "%s\n%s", res.Params, typetest.Events(back))
	assert.Equal(t, before, state(t, "pipv680"))

	// Missing: absent, nothing created.
	res = e.Find("user", "pipv681", "{uid: 47681}")
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "useradd"}}, res.State)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("user", "pipv681", res.Params)))
	assert.Error(t, exec.Command("getent", "passwd", "pipv681").Run(), "find or its round trip created pipv681")

	// Search lists it with the same state as find, root too; a filter
	// on a property keeps only the matches.
	res = e.Search("user", "")
	require.False(t, res.Failed, res.Exception)
	st, ok := typetest.Instance(res, "pipv680")
	require.True(t, ok)
	assert.Equal(t, e.Find("user", "pipv680", "").State, st)
	_, ok = typetest.Instance(res, "root")
	assert.True(t, ok)
	res = e.Search("user", "{uid: 47680}")
	require.False(t, res.Failed, res.Exception)
	require.Len(t, res.Instances, 1)
	assert.Equal(t, "pipv680", res.Instances[0].Title)
	res = e.Search("user", "{shell: /bin/pipv-none}")
	require.False(t, res.Failed, res.Exception)
	assert.Empty(t, res.Instances)
}
