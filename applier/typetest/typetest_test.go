package typetest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/mock"
)

// Params reach the type as the receiver decodes them: Psych's booleans and
// octal integers, quoted strings kept.
func TestApplyDecodesAsTheReceiver(t *testing.T) {
	p := mock.NewProvider(map[string]any{"ensure": "present"})
	typ := &applier.Type{Name: "probe", Attrs: []*applier.Attr{
		{Name: "name", Behaviour: applier.Namevar},
		{Name: "ensure", Behaviour: applier.Property, Kind: applier.KindEnum, Values: []string{"present", "absent"}},
		{Name: "flag", Behaviour: applier.Property, Kind: applier.KindAny},
		{Name: "mode", Behaviour: applier.Property, Kind: applier.KindAny},
		{Name: "quoted", Behaviour: applier.Property, Kind: applier.KindAny},
	}, Providers: []*applier.ProviderSpec{p.Spec("mem")}}
	e := typetest.New(t, []*applier.Type{typ})
	res := e.Apply("probe", "x", "{flag: yes, mode: 0644, quoted: '0644'}")
	require.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, true, p.State["flag"])
	assert.Equal(t, int64(420), p.State["mode"])
	assert.Equal(t, "0644", p.State["quoted"])
	assert.Contains(t, typetest.Events(res), "flag: defined 'flag' as 'true' (success)")

	res = e.ApplyLine("probe y {ensure: present}")
	assert.Equal(t, "unchanged", typetest.Summary(res), "the legacy form works too")
	_, err := e.Decode(`{"type":"probe","title":"x","params":"{a: [}"}`)
	assert.Error(t, err)
	res = e.Apply("probe", "x", "{bogus: 1}")
	assert.Equal(t, "error: no parameter named 'bogus' on Probe[x]", typetest.Summary(res))
}
