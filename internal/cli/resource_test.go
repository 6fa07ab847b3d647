package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/protocol"
)

func TestManifest(t *testing.T) {
	got := Manifest("user", "o'k", protocol.State{
		{Name: "ensure", Value: "present"},
		{Name: "groups", Value: []any{"a", "b"}},
		{Name: "password_max_age", Value: int64(-1)},
		{Name: "purge", Value: true},
		{Name: "home", Value: `C:\x`},
	})
	assert.Equal(t, "user { 'o\\'k':\n"+
		"  ensure           => 'present',\n"+
		"  groups           => ['a', 'b'],\n"+
		"  password_max_age => -1,\n"+
		"  purge            => true,\n"+
		"  home             => 'C:\\\\x',\n"+
		"}\n", got)
}
