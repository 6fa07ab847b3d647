package applier

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadFactsFrom(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  Facts
	}{
		{
			name: "debian with point release and search domain",
			files: map[string]string{
				"etc/os-release":     "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\nID=debian\n",
				"etc/debian_version": "12.11\n",
				"etc/hostname":       "web1\n",
				"etc/resolv.conf":    "# x\nsearch example.com other.org\nnameserver 1.1.1.1\n",
			},
			want: Facts{"os.family": "Debian", "os.name": "Debian", "os.release.full": "12.11",
				"os.release.major": "12", "os.release.minor": "11", "osfamily": "Debian", "operatingsystem": "Debian",
				"operatingsystemrelease": "12.11", "operatingsystemmajrelease": "12", "os.distro.codename": "bookworm",
				"hostname": "web1", "domain": "example.com", "fqdn": "web1.example.com"},
		},
		{
			name: "rocky via ID_LIKE-less id, fqdn hostname",
			files: map[string]string{
				"etc/os-release": "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.3\"\n",
				"etc/hostname":   "db.corp.local",
			},
			want: Facts{"os.family": "RedHat", "os.name": "Rocky", "os.release.full": "9.3", "os.release.major": "9",
				"hostname": "db", "domain": "corp.local", "fqdn": "db.corp.local"},
		},
		{
			name: "unknown derivative falls back on ID_LIKE",
			files: map[string]string{
				"etc/os-release": "ID=pop\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=22.04\n",
				"etc/hostname":   "box",
			},
			want: Facts{"os.family": "Debian", "os.name": "Pop", "os.release.full": "22.04", "hostname": "box", "fqdn": "box"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, c := range tc.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(c), 0o644))
			}
			got := loadFactsFrom(root)
			for k, v := range tc.want {
				assert.Equal(t, v, got[k], k)
			}
			if _, ok := tc.want["domain"]; !ok {
				assert.NotContains(t, got, "domain")
			}
		})
	}
}

func TestLoadFactsHere(t *testing.T) {
	f := LoadFacts()
	host, err := os.Hostname()
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(host[:len(f["hostname"])]), f["hostname"])
	assert.Equal(t, "Linux", f["kernel"])
	assert.NotEmpty(t, f["kernelrelease"])
	assert.NotEmpty(t, f["os.family"])
	assert.Equal(t, f["os.family"], f["osfamily"])
}
