package host_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/host"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/protocol"
)

func TestFindAndSearch(t *testing.T) {
	target := parsedfiletest.Target(t, "hosts", "# a comment\n127.0.0.1\tlocalhost\n10.0.0.6 db.example\n10.0.0.5 db.example db  # the database\n::1 ip6-localhost ip6-loopback\n")
	e := typetest.New(t, []*applier.Type{host.Type})
	tgt := "{target: '" + target + "'}"

	// Of two lines of one name, the last is the resource, as in Puppet.
	res := e.Find("host", "db.example", tgt)
	require.False(t, res.Failed, res.Exception)
	assert.Equal(t, protocol.State{
		{Name: "ensure", Value: "present"},
		{Name: "comment", Value: "the database"},
		{Name: "host_aliases", Value: []any{"db"}},
		{Name: "ip", Value: "10.0.0.5"},
		{Name: "provider", Value: "parsed"},
		{Name: "target", Value: target},
	}, res.State)
	before, err := os.ReadFile(target)
	require.NoError(t, err)
	back := e.Apply("host", "db.example", res.Params)
	assert.Equal(t, "unchanged", typetest.Summary(back), "%s\n%s", res.Params, typetest.Events(back))

	res = e.Find("host", "localhost", tgt)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "present"}, {Name: "ip", Value: "127.0.0.1"},
		{Name: "provider", Value: "parsed"}, {Name: "target", Value: target}}, res.State)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("host", "localhost", res.Params)))

	res = e.Find("host", "nowhere.example", tgt)
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "parsed"}}, res.State)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("host", "nowhere.example", res.Params+"")))

	after, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "find or a round trip changed the file")

	res = e.Search("host", tgt)
	require.False(t, res.Failed, res.Exception)
	var titles []string
	for _, in := range res.Instances {
		titles = append(titles, in.Title)
	}
	assert.Equal(t, []string{"db.example", "ip6-localhost", "localhost"}, titles, "sorted by title")
	assert.Equal(t, e.Find("host", "db.example", tgt).State, res.Instances[0].State)
	res = e.Search("host", "{target: '"+target+"', ip: '::1'}")
	require.Len(t, res.Instances, 1)
	assert.Equal(t, "ip6-localhost", res.Instances[0].Title)
}
