package osfacts_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/osfacts"
)

func TestParseOSRelease(t *testing.T) {
	b, err := os.ReadFile("../../agent/facts/testdata/root/etc/os-release")
	require.NoError(t, err)
	m := osfacts.ParseOSRelease(b)
	assert.Equal(t, "rocky", m["ID"])
	assert.Equal(t, "Rocky Linux 9.3 (Blue Onyx)", m["PRETTY_NAME"])
	assert.Equal(t, "platform:el9", m["PLATFORM_ID"], "single quotes")
	assert.NotContains(t, m, "# a comment")
	assert.Empty(t, osfacts.ParseOSRelease([]byte("garbage without equals\n\x00\xff")))

	for _, c := range []struct{ id, like, family, name string }{
		{"debian", "", "Debian", "Debian"},
		{"ubuntu", "debian", "Debian", "Ubuntu"},
		{"rocky", "rhel centos fedora", "RedHat", "Rocky"},
		{"pop", "ubuntu debian", "Debian", "Pop"},
		{"nixos", "", "Nixos", "Nixos"},
	} {
		name := osfacts.OSName(c.id, "")
		assert.Equal(t, c.name, name, c.id)
		assert.Equal(t, c.family, osfacts.OSFamily(c.id, strings.Fields(c.like), name), c.id)
	}
	maj, min := osfacts.SplitRelease("12.11")
	assert.Equal(t, []string{"12", "11"}, []string{maj, min})
	maj, min = osfacts.SplitRelease("22.04.3")
	assert.Equal(t, []string{"22", "04"}, []string{maj, min})
	maj, min = osfacts.SplitRelease("rolling")
	assert.Equal(t, []string{"rolling", ""}, []string{maj, min})
}
