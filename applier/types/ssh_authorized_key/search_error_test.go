package sshauthkey_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSearchErrorNamesTheType: a search without user or target is an
// error naming the type as a search's answer does (Ssh_authorized_key),
// not an empty reference (Ssh_authorized_key[]).
func TestSearchErrorNamesTheType(t *testing.T) {
	res := engine(t).Search("ssh_authorized_key", "{}")
	assert.True(t, res.Error)
	assert.Equal(t, "Ssh_authorized_key", res.Resource)
	if assert.NotNil(t, res.Exception) {
		assert.NotContains(t, res.Exception, "[]")
		assert.Contains(t, res.Exception, "Ssh_authorized_key")
		assert.Contains(t, res.Exception, "'user' or 'target' is mandatory")
	}
}
