package facts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/facts"
)

// TestHostNamesHelper is the process TestHostNamesLikeFacter runs inside
// its namespaces: Gather's name facts from the real lookups, as JSON.
func TestHostNamesHelper(t *testing.T) {
	if os.Getenv("PIPPET_HOSTNAMES_HELPER") != "1" {
		t.Skip("run by TestHostNamesLikeFacter")
	}
	f, errs := facts.Gather(context.Background(), facts.Options{ExternalDirs: []string{}, HideLegacy: false})
	require.Empty(t, errs)
	net, _ := f["networking"].(map[string]any)
	out, _ := json.Marshal(map[string]any{"hostname": f["hostname"], "domain": f["domain"], "fqdn": f["fqdn"],
		"networking.hostname": net["hostname"], "networking.domain": net["domain"], "networking.fqdn": net["fqdn"]})
	fmt.Printf("HOSTNAMES %s\n", out)
}

// TestHostNamesLikeFacter compares hostname, domain and fqdn (and their
// networking.* twins) with Facter 4's for crafted host names, /etc/hosts
// and /etc/resolv.conf, each set up in private mount, UTS and network
// namespaces (bind mounts over /etc/hosts and /etc/resolv.conf seen only
// there; the machine's files are not touched), where both Facter and
// Gather's real lookups (gethostname, the canonical name, resolv.conf)
// run.
func TestHostNamesLikeFacter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("namespaces need root")
	}
	facter := "/usr/bin/facter"
	if _, err := os.Stat(facter); err != nil {
		t.Skip("facter is not installed")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command(unshare, "--mount", "--uts", "--net", "true").Run(); err != nil {
		t.Skipf("cannot make namespaces here: %v", err)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	cases := []struct{ name, host, hosts, resolv string }{
		{"canonical name from hosts", "tidyhost", "127.0.1.1 tidyhost.crafted.example tidyhost\n", "search s1.example s2.example\n"},
		{"no canonical name: resolv.conf domain over search", "tidyhost", "127.0.0.1 localhost\n", "search s1.example\ndomain d.example.\n"},
		{"no canonical name: first search entry", "tidyhost", "", "nameserver 127.0.0.1\nsearch s1.example. s2.example\n"},
		{"dotted host name", "tidyhost.dotted.example", "127.0.1.1 tidyhost.crafted.example tidyhost\n", "domain d.example\n"},
		{"canonical name not HOSTNAME.DOMAIN", "tidyhost", "127.0.1.1 other.example tidyhost\n", "search s1.example\n"},
		{"no domain anywhere", "tidyhost", "127.0.0.1 tidyhost\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			hosts, resolv := filepath.Join(dir, "hosts"), filepath.Join(dir, "resolv.conf")
			require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 localhost\n"+c.hosts), 0o644))
			require.NoError(t, os.WriteFile(resolv, []byte(c.resolv), 0o644))
			script := `set -e
mount --bind "$1" /etc/hosts
mount --bind "$2" /etc/resolv.conf
hostname "$3"
echo FACTER $(` + facter + ` --json hostname domain fqdn networking.hostname networking.domain networking.fqdn | tr -d '\n')
PIPPET_HOSTNAMES_HELPER=1 "$4" -test.run '^TestHostNamesHelper$' -test.count=1
`
			cmd := exec.Command(unshare, "--mount", "--uts", "--net", "sh", "-c", script, "sh", hosts, resolv, c.host, self)
			cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=" + dir}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "%s\n%s", out, stderr.Bytes())
			want, got := section(t, out, "FACTER "), section(t, out, "HOSTNAMES ")
			for k, v := range want { // Facter leaves out what it has not
				if v == nil {
					delete(want, k)
				}
			}
			for k, v := range got {
				if v == nil {
					delete(got, k)
				}
			}
			assert.Equal(t, want, got)
			assert.NotEmpty(t, want["fqdn"])
		})
	}
}

func section(t *testing.T, out []byte, prefix string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(l, prefix); ok {
			m := map[string]any{}
			require.NoError(t, json.Unmarshal([]byte(s), &m), "%s", s)
			return m
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, out)
	return nil
}

// TestHostNamesSeam: what the lookups answer decides the facts as
// Facter's resolver does (cases the machine cannot show: a DNS
// answer's trailing dot, a lookup that fails, a numeric answer).
func TestHostNamesSeam(t *testing.T) {
	names := func(host, canon string, cerr error, resolv string) facts.Names {
		return facts.Names{
			Hostname:   func() (string, error) { return host, nil },
			CanonName:  func(context.Context, string) (string, error) { return canon, cerr },
			ResolvConf: func() ([]byte, error) { return []byte(resolv), nil },
		}
	}
	cases := []struct {
		name                   string
		n                      facts.Names
		hostname, domain, fqdn string
	}{
		{"DNS answer", names("web", "web.dc1.example.", nil, "search other.example"), "web", "dc1.example", "web.dc1.example"},
		{"lookup fails", names("web", "", errors.New("no such host"), "search other.example"), "web", "other.example", "web.other.example"},
		{"numeric answer", names("web", "10.0.0.1", nil, ""), "web", "", "web"},
		{"itself", names("web", "web.", nil, "domain d.example"), "web", "d.example", "web.d.example"},
		{"dotted", names("web.a.example", "", errors.New("not asked"), "domain d.example"), "web", "a.example", "web.a.example"},
		{"no host name", names("", "", errors.New("not asked"), "domain d.example"), "", "d.example", ""},
	}
	for _, c := range cases {
		h, d, f := facts.HostNames(context.Background(), c.n)
		assert.Equal(t, []string{c.hostname, c.domain, c.fqdn}, []string{h, d, f}, c.name)
	}
}
