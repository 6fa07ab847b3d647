package applier_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/mock"
)

func TestDescribe(t *testing.T) {
	ty := mock.Widget(mock.NewProvider(nil))
	ty.Providers = append(ty.Providers, &applier.ProviderSpec{Name: "disk", Doc: "On disk.",
		Confine:  applier.Confine{Features: []string{"posix"}, Commands: []string{"dd"}},
		Defaults: map[string][]string{"os.family": {"Debian"}}})
	var b strings.Builder
	require.NoError(t, applier.Describe(&b, ty))
	out := b.String()
	for _, want := range []string{
		"\nwidget\n======\nA test type.\n",
		"\nParameters\n----------\n",
		"- **path** (*namevar*)\n    The path.\n    Kind: absolute path.\n",
		"- **ensure** (*property*)\n    Presence.\n    Kind: enum.\n    Valid values are `present` (also called `installed`), `absent`.\n",
		"- **colour** (*property*)\n    Colour.\n    Kind: enum. Default: `red`.\n    Valid values are `red`, `blue`.\n",
		"- **tags** (*property*)\n    Tags.\n    Kind: array of string (a single value is a one-element array), order\n    ignored.\n",
		"- **label**\n    Label.\n    Kind: string. Has a computed default.\n",
		"- **serial** (*read-only*)\n",
		"- **provider**\n    The specific backend to use for this resource, one of mem, disk.\n    Normally chosen from the facts.\n    Kind: enum.\n    Valid values are `mem`, `disk`.\n",
		"\nProviders\n---------\n    mem, disk\n",
		"- **disk**\n    On disk.\n    Confined to: feature posix, command dd.\n    Default for os.family Debian.\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.Less(t, strings.Index(out, "**colour**"), strings.Index(out, "**ensure**"), "attributes sorted")

	reg := applier.NewRegistry()
	reg.Add(ty)
	b.Reset()
	require.NoError(t, applier.DescribeList(&b, reg))
	assert.Equal(t, "These are the types known to pippet:\nwidget          - A test type\n", b.String())
}

func TestDescribeMeta(t *testing.T) {
	var b strings.Builder
	require.NoError(t, applier.DescribeMeta(&b))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "\nMeta Parameters\n---------------\n"))
	for _, m := range applier.MetaparamNames() {
		assert.Contains(t, out, "\n- **"+m+"**\n    ")
	}
}
