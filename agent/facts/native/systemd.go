package native

import (
	"errors"
	"regexp"
)

// camptocamp-systemd's facts, on Linux.
//
//   - systemd: whether the fact service_provider (stdlib's) is
//     "systemd"; false without it.
//   - systemd_version: the second field of systemctl --version's line
//     that names systemd, when systemd is true.
//   - systemd_internal_services: the enabled, disabled, enabled-runtime
//     and indirect systemd-* services and their state, from systemctl
//     list-unit-files, when systemd is true.
func init() {
	register(&File{
		Module: "systemd", Name: "systemd.rb",
		Digests: []string{
			"22b1971091271b8798874a6db4288977b32e3130ed9fd0b94e3ce619987e9f1d", // Debian 2.12.0-3
		},
		// The same code (a frozen_string_literal comment, a comma).
		Forge: []Release{
			{Module: "puppet-systemd", Version: "3.5.1", Releases: "3.1.0 to 3.5.1",
				Digest: "44ff1550b84c7c139cb622b65784f63341bdce656ebd006c21dbb1d9dd3704cc"},
			{Module: "puppet-systemd", Version: "9.4.0", Releases: "3.5.2 to 9.4.0 but 4.0.0",
				Digest: "d96ea2304307c354a7465b32fd5354aef4dab01dc4a38201ad17a1549e50b8ce"},
			{Module: "puppet-systemd", Version: "10.0.0", Releases: "10.0.0",
				Digest: "4c05a0927192bc6253dca60480a50edab924c897f05ccfc9d1e8d8f4c05a0c1f"},
		},
		Facts:   []string{"systemd", "systemd_version", "systemd_internal_services"},
		resolve: resolveSystemd,
	})
}

var whitespace = regexp.MustCompile(`\s+`)

func resolveSystemd(r *Run, out map[string]Value) {
	if !r.confine("kernel", "linux") {
		return
	}
	isSystemd := r.Value("service_provider") == "systemd"
	out["systemd"] = Value{V: isSystemd, Weight: 1}
	// The others are confined on Facter's systemd.
	if r.own("systemd", Value{V: isSystemd, Weight: 1}) != true {
		return
	}
	if v, err := r.Exec("systemctl --version | awk '/systemd/{ print $2 }'"); err == nil {
		out["systemd_version"] = Value{V: v, Weight: 1}
	} else if !errors.Is(err, ErrNotFound) {
		r.Fail(r.file("systemd_version"), "systemd_version", err)
	}
	text, err := r.Exec(`systemctl list-unit-files --no-legend --no-pager "systemd-*" -t service --state=enabled,disabled,enabled-runtime,indirect`)
	if err != nil {
		// Facter's nil.lines raises.
		r.Fail(r.file("systemd_internal_services"), "systemd_internal_services", err)
		return
	}
	services := map[string]any{}
	for _, line := range rubyLines(text) {
		f := rubySplitRe(line, whitespace)
		var service, status any
		if len(f) > 0 {
			service = f[0]
		}
		if len(f) > 1 {
			status = f[1]
		}
		if service != nil {
			services[service.(string)] = status
		}
	}
	out["systemd_internal_services"] = Value{V: services, Weight: 1}
}

// rubySplitRe is Ruby's String#split(regexp): leading empty field kept
// unless the match is at 0 with zero width... simplified to what fact
// lines need: trailing empty fields dropped.
func rubySplitRe(s string, re *regexp.Regexp) []string {
	f := re.Split(s, -1)
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return f
}
