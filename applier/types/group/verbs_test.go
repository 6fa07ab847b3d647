package group_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/group"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

func TestFindAndSearch(t *testing.T) {
	needRoot(t)
	rm := func() { _ = exec.Command("groupdel", "pipvg690").Run(); _ = exec.Command("groupdel", "pipvg691").Run() }
	rm()
	t.Cleanup(rm)
	e := typetest.New(t, []*applier.Type{group.Type})
	require.Equal(t, "changed", typetest.Summary(e.Apply("group", "pipvg690", "{gid: 47690}")))

	res := e.Find("group", "pipvg690", "")
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "present"}, {Name: "gid", Value: int64(47690)},
		{Name: "provider", Value: "groupadd"}}, res.State)
	assert.Equal(t, "{ensure: 'present', gid: 47690, provider: 'groupadd'}", res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("group", "pipvg690", res.Params)))

	res = e.Find("group", "pipvg691", "")
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "groupadd"}}, res.State)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("group", "pipvg691", res.Params)))
	assert.Error(t, exec.Command("getent", "group", "pipvg691").Run())

	res = e.Search("group", "")
	require.False(t, res.Failed, res.Exception)
	st, ok := typetest.Instance(res, "pipvg690")
	require.True(t, ok)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "present"}, {Name: "gid", Value: int64(47690)},
		{Name: "provider", Value: "groupadd"}}, st)
	for i := 1; i < len(res.Instances); i++ {
		require.Less(t, res.Instances[i-1].Title, res.Instances[i].Title, "sorted by title")
	}
	res = e.Search("group", "{gid: 47690}")
	require.Len(t, res.Instances, 1)
	assert.Equal(t, "pipvg690", res.Instances[0].Title)
}
