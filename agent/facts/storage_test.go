package facts_test

import (
	"context"
	"math"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/agent/facts"
)

// mountFigure is the path of a mount point's figures that change as the
// machine writes (TestAgainstFacter compares their kind only).
var mountFigure = regexp.MustCompile(`^mountpoints\..*\.(available|available_bytes|used|used_bytes|capacity)$`)

// storageFacts are the facts issue 38 found missing from the native set
// (modules and dashboards read mountpoints, disks and blockdevices).
var storageFacts = []string{"augeas", "augeasversion", "blockdevices", "disks", "mountpoints", "dhcp_servers",
	"hypervisors", "ruby", "rubyversion", "rubyplatform", "rubysitedir"}

// TestStorageAndRuntimeFactsAsFacter: each of those facts facter
// --show-legacy gives on this machine (and every blockdevice_*), we give,
// of the same kind and value; of a mount point's figures, those that
// change while the tests write (available, used, capacity) within 1% of
// its size.
func TestStorageAndRuntimeFactsAsFacter(t *testing.T) {
	want := runFacter(t, "--show-legacy")
	got, _ := facts.Gather(context.Background(), facts.Options{})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]any
	if err := json.Unmarshal(b, &ours); err != nil {
		t.Fatal(err)
	}
	names := append([]string{}, storageFacts...)
	for k := range want {
		if strings.HasPrefix(k, "blockdevice_") {
			names = append(names, k)
		}
	}
	for k := range ours {
		if strings.HasPrefix(k, "blockdevice_") {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: we give it (%v), facter does not", k, ours[k])
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		w, ok := want[name]
		if !ok {
			if _, have := ours[name]; have {
				t.Errorf("%s: we give it (%v), facter does not", name, ours[name])
			}
			continue
		}
		o, ok := ours[name]
		if !assert.True(t, ok, "%s: facter gives %v, we do not", name, w) {
			continue
		}
		if name != "mountpoints" {
			assert.Equal(t, w, o, name)
			continue
		}
		wm, om := w.(map[string]any), o.(map[string]any)
		assert.Equal(t, keysOf(wm), keysOf(om), "the mount points")
		for path, wv := range wm {
			wmp, _ := wv.(map[string]any)
			omp, _ := om[path].(map[string]any)
			if omp == nil {
				continue
			}
			assert.Equal(t, keysOf(wmp), keysOf(omp), "%s: members", path)
			size, _ := wmp["size_bytes"].(float64)
			for k, v := range wmp {
				switch k {
				case "available_bytes", "used_bytes":
					ov, _ := omp[k].(float64)
					assert.LessOrEqual(t, math.Abs(ov-v.(float64)), 0.01*size+4096, "%s: %s %v, facter %v", path, k, ov, v)
				case "available", "used", "capacity":
					assert.IsType(t, v, omp[k], "%s: %s", path, k)
				default:
					assert.Equal(t, v, omp[k], "%s: %s", path, k)
				}
			}
		}
	}
	// Ruby's facts where Ruby is installed.
	if _, err := exec.LookPath("ruby"); err == nil {
		assert.Contains(t, ours, "ruby")
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestParseRbConfig: the values RbConfig::CONFIG holds, from Debian's
// layout (a fixed prefix) and the all-in-one agent's (TOPDIR, the
// file's own directory without the suffix rbconfig.rb chomps).
func TestParseRbConfig(t *testing.T) {
	tests := []struct {
		name, path, src string
		want            map[string]string
	}{
		{"debian", "/usr/lib/x86_64-linux-gnu/ruby/3.1.0/rbconfig.rb", `
  TOPDIR = File.dirname(__FILE__).chomp!("/lib/x86_64-linux-gnu/ruby/3.1.0")
  CONFIG["MAJOR"] = "3"
  CONFIG["MINOR"] = "1"
  CONFIG["TEENY"] = "2"
  CONFIG["sitelibdir"] = "$(sitedir)/$(ruby_version)"
  CONFIG["sitedir"] = "$(DESTDIR)/usr/local/lib/site_ruby"
  CONFIG["ruby_version"] = "3.1.0"
  CONFIG["arch"] = "x86_64-linux-gnu"
  CONFIG["RUBY_PROGRAM_VERSION"] = "$(MAJOR).$(MINOR).$(TEENY)"
`, map[string]string{"sitelibdir": "/usr/local/lib/site_ruby/3.1.0", "arch": "x86_64-linux-gnu", "RUBY_PROGRAM_VERSION": "3.1.2"}},
		{"all-in-one", "/opt/puppetlabs/puppet/lib/ruby/2.7.0/x86_64-linux/rbconfig.rb", `
  TOPDIR = File.dirname(__FILE__).chomp!("/lib/ruby/2.7.0/x86_64-linux")
  CONFIG["prefix"] = (TOPDIR || DESTDIR + "/opt/puppetlabs/puppet")
  CONFIG["exec_prefix"] = "$(prefix)"
  CONFIG["libdir"] = "$(exec_prefix)/lib"
  CONFIG["RUBY_BASE_NAME"] = "ruby"
  CONFIG["rubylibprefix"] = "$(libdir)/$(RUBY_BASE_NAME)"
  CONFIG["sitedir"] = "$(rubylibprefix)/site_ruby"
  CONFIG["sitelibdir"] = "$(sitedir)/$(ruby_version)"
  CONFIG["ruby_version"] = "2.7.0"
  CONFIG["arch"] = "x86_64-linux"
  CONFIG["RUBY_PROGRAM_VERSION"] = "2.7.8"
`, map[string]string{"sitelibdir": "/opt/puppetlabs/puppet/lib/ruby/site_ruby/2.7.0", "arch": "x86_64-linux", "RUBY_PROGRAM_VERSION": "2.7.8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := facts.ParseRbConfig([]byte(tc.src), tc.path)
			for k, v := range tc.want {
				assert.Equal(t, v, got[k], k)
			}
		})
	}
}
