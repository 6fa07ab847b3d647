package notify_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/notify"
	"github.com/pippet/pippet/applier/typetest"
)

// TestMessageKinds, recorded from Puppet 7 (puppet apply -e): a message
// of false changes nothing and logs nothing; a mapping is printed, as
// Ruby prints a Hash, and its event shows it as Puppet displays one (the
// keys in order of name: the request's mapping keeps no order); true is
// printed as true.
func TestMessageKinds(t *testing.T) {
	e := typetest.New(t, []*applier.Type{notify.Type})
	res := e.Apply("notify", "n1", "{message: false}")
	assert.Equal(t, "unchanged", typetest.Summary(res))
	assert.Empty(t, typetest.Events(res))
	assert.NotContains(t, e.Log(), "false")

	res = e.Apply("notify", "n2", `{"message":{"a":1,"b":[2,"x"]}}`)
	assert.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "message: defined 'message' as {\n  'a' => 1,\n  'b' => [2, 'x']\n} (success)\n", typetest.Events(res))
	assert.Contains(t, e.Log(), "msg="+strconv.Quote(`{"a"=>1, "b"=>[2, "x"]}`), "printed as Ruby prints a Hash")

	res = e.Apply("notify", "n3", "{message: true}")
	assert.Equal(t, "changed", typetest.Summary(res))
	assert.Contains(t, e.Log(), "true")
}
