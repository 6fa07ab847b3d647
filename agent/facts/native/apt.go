package native

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// puppetlabs-apt's facts, on the Debian family only (confine osfamily).
//
//   - apt_has_updates, apt_has_dist_updates: whether `apt-get -s -o
//     Debug::NoLocking=true upgrade` (dist-upgrade) would install
//     anything (its Inst lines); absent without /usr/bin/apt-get. Both
//     commands run concurrently (Facter runs them one after the other).
//   - apt_package_updates, apt_package_dist_updates: the packages, in
//     apt-get's order; apt_package_security_updates,
//     apt_package_security_dist_updates: those from a security archive
//     (Debian-Security, Ubuntu*-security, gNewSense*-security);
//     apt_updates, apt_dist_updates, apt_security_updates,
//     apt_security_dist_updates: how many (integers). Each only when
//     there are updates.
//   - apt_reboot_required: whether /var/run/reboot-required is a file.
//   - apt_sources: "sources.list" and the names of
//     /etc/apt/sources.list.d/*.list (and *.sources, from 10.0.1).
//   - apt_update_last_success: the modification time (Unix seconds) of
//     /var/lib/apt/periodic/update-success-stamp, else -1.
func init() {
	// puppetlabs-apt 10.0.1 to 11.3.2: the same code, confined on the
	// structured fact's os.family (Facter 4's dotted query), and
	// apt_sources lists /etc/apt/sources.list.d/*.sources too (deb822
	// files, after the *.list ones, each sorted, as Ruby's glob of
	// *.{list,sources}).
	forge := func(digest string, resolve func(r *Run, out map[string]Value)) []Release {
		return []Release{{Module: "puppetlabs-apt", Version: "11.3.2", Releases: "10.0.1 to 11.3.2", Digest: digest, resolve: resolve}}
	}
	register(&File{
		Module: "apt", Name: "apt_updates.rb",
		Digests: []string{
			"2bc2923a88d382f2245a145b1abbd9961a1699116cdb4603fb916f159c835859", // Debian 9.0.1-1
		},
		Facts: []string{
			"apt_has_updates", "apt_has_dist_updates",
			"apt_package_updates", "apt_package_dist_updates",
			"apt_package_security_updates", "apt_package_security_dist_updates",
			"apt_updates", "apt_dist_updates", "apt_security_updates", "apt_security_dist_updates",
		},
		resolve: aptUpdatesFacts("osfamily"),
		Forge:   forge("f892ca9a462a669ec0940df50976491a410a2950c665a4a7d03b5c506bc0f612", aptUpdatesFacts("os.family")),
	})
	register(&File{
		Module: "apt", Name: "apt_reboot_required.rb",
		Digests: []string{
			"f49d37ee9baf1ce42540421079e54acd18f89851c41573756c897a4e6d09aece", // Debian 9.0.1-1
		},
		Facts:   []string{"apt_reboot_required"},
		resolve: aptRebootRequired("osfamily"),
		Forge:   forge("5bb611781119dac93b2fcf0855847e9634fa861410f64a3f4aa021e78efcbc69", aptRebootRequired("os.family")),
	})
	register(&File{
		Module: "apt", Name: "apt_sources.rb",
		Digests: []string{
			"1d7f0e1b6ebc8c026abae5cdcbc89e0bcb3e5e0a6e13b0893d80293e10396179", // Debian 9.0.1-1
		},
		Facts:   []string{"apt_sources"},
		resolve: aptSources("osfamily", "list"),
		Forge:   forge("22fd91eb6908fedf5392210ed14dc959e44488fd5f3895b507f471ed5f0e751a", aptSources("os.family", "list", "sources")),
	})
	register(&File{
		Module: "apt", Name: "apt_update_last_success.rb",
		Digests: []string{
			"d5431f3d8c9575a36ed3ffa88d554bf464e91b45ba2fdbf9c5f6c376567f0340", // Debian 9.0.1-1
		},
		Facts:   []string{"apt_update_last_success"},
		resolve: aptUpdateLastSuccess("osfamily"),
		Forge:   forge("b38cf0a0e9397768338891e6964359ad4f55fb7ff6bdb76e40818b2e6d6b715f", aptUpdateLastSuccess("os.family")),
	})
}

func aptRebootRequired(family string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		if r.confine(family, "Debian") {
			out["apt_reboot_required"] = Value{V: fileIsFile("/var/run/reboot-required"), Weight: 1}
		}
	}
}

func aptSources(family string, exts ...string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		if !r.confine(family, "Debian") {
			return
		}
		sources := []any{"sources.list"}
		for _, ext := range exts {
			for _, name := range rubyGlob("/etc/apt/sources.list.d/*." + ext) {
				sources = append(sources, filepath.Base(name))
			}
		}
		out["apt_sources"] = Value{V: sources, Weight: 1}
	}
}

func aptUpdateLastSuccess(family string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		if !r.confine(family, "Debian") {
			return
		}
		v := int64(-1)
		if fi, err := os.Stat("/var/lib/apt/periodic/update-success-stamp"); err == nil {
			v = fi.ModTime().Unix()
		}
		out["apt_update_last_success"] = Value{V: v, Weight: 1}
	}
}

var (
	aptInst     = regexp.MustCompile(`^Inst\s`)
	aptPackage  = regexp.MustCompile(`^Inst\s([^\s]+)\s.*`)
	aptSecurity = regexp.MustCompile(` Debian-Security:| Ubuntu[^\s]+-security[, ]| gNewSense[^\s]+-security[, ]`)
)

// aptUpdates is get_updates: the packages apt-get would install and the
// security ones among them; ok false when apt-get is not there.
type aptUpdates struct {
	all, security []any
	ok            bool
	err           error
}

func getUpdates(r *Run, option string) aptUpdates {
	if syscall.Access("/usr/bin/apt-get", 1) != nil {
		return aptUpdates{}
	}
	out, err := r.Exec("/usr/bin/apt-get -s -o Debug::NoLocking=true " + option + " 2>&1")
	if err != nil {
		return aptUpdates{err: err}
	}
	u := aptUpdates{all: []any{}, security: []any{}, ok: true}
	for _, line := range rubyLines(out) {
		if !aptInst.MatchString(line) {
			continue
		}
		pkg := rubyStrip(aptPackage.ReplaceAllString(strings.TrimSuffix(line, "\n"), "$1"))
		u.all = append(u.all, pkg)
		if aptSecurity.MatchString(line) {
			u.security = append(u.security, pkg)
		}
	}
	return u
}

func aptUpdatesFacts(family string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) { resolveAptUpdates(r, out, family) }
}

func resolveAptUpdates(r *Run, out map[string]Value, family string) {
	if !r.confine(family, "Debian") {
		return
	}
	var upgrade, dist aptUpdates
	done := make(chan struct{})
	go func() {
		defer close(done)
		dist = getUpdates(r, "dist-upgrade")
	}()
	upgrade = getUpdates(r, "upgrade")
	<-done
	for _, k := range []struct {
		u                                   aptUpdates
		has, pkgs, secPkgs, count, secCount string
	}{
		{upgrade, "apt_has_updates", "apt_package_updates", "apt_package_security_updates", "apt_updates", "apt_security_updates"},
		{dist, "apt_has_dist_updates", "apt_package_dist_updates", "apt_package_security_dist_updates", "apt_dist_updates", "apt_security_dist_updates"},
	} {
		if k.u.err != nil {
			r.Fail(r.file(k.has), k.has, k.u.err)
			continue
		}
		if !k.u.ok {
			continue
		}
		has := len(k.u.all) > 0 || len(k.u.security) > 0
		out[k.has] = Value{V: has, Weight: 1}
		if !has {
			continue
		}
		out[k.pkgs] = Value{V: k.u.all, Weight: 1}
		out[k.secPkgs] = Value{V: k.u.security, Weight: 1}
		out[k.count] = Value{V: int64(len(k.u.all)), Weight: 1}
		out[k.secCount] = Value{V: int64(len(k.u.security)), Weight: 1}
	}
}

// rubyLines is Ruby's String#each_line: the lines with their newlines.
func rubyLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// rubyGlob is Ruby's Dir.glob of a pattern whose wildcards are in its
// last element: sorted, hidden files not matched by a leading *.
func rubyGlob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	var out []string
	for _, p := range m {
		if strings.HasPrefix(filepath.Base(p), ".") && !strings.HasPrefix(filepath.Base(pattern), ".") {
			continue
		}
		out = append(out, p)
	}
	return out
}
