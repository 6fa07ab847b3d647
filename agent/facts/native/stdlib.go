package native

import (
	"errors"
	"regexp"
	"strings"
)

// puppetlabs-stdlib's facts.
//
//   - package_provider, service_provider: the provider Puppet would
//     choose for a package, a service (Options.DefaultProvider).
//   - puppet_vardir, puppet_environmentpath, puppet_server: Puppet's
//     settings vardir, environmentpath, server (Options.Puppet).
//   - pe_version: the fact pe_build, else the version in puppetversion's
//     "Puppet Enterprise X.Y.Z"; absent on open-source Puppet. is_pe:
//     whether pe_version is non-empty. pe_major_version,
//     pe_minor_version, pe_patch_version: its parts, only when is_pe.
//   - root_home: the sixth field of `getent passwd root` (the Darwin and
//     AIX resolutions do not apply on Linux).
func init() {
	register(&File{
		Module: "stdlib", Name: "package_provider.rb",
		Digests: []string{
			"4bebfa2bfd6b23a680b317b59699b47621e24a8515aff5def45b2133ba4b6b06", // Debian 8.5.0-1
		},
		Facts:          []string{"package_provider"},
		NeedsProviders: true,
		resolve:        providerFact("package_provider", "package"),
	})
	register(&File{
		Module: "stdlib", Name: "service_provider.rb",
		Digests: []string{
			"12f477c5d71d2e0b23a813a587c4028a7688813b47390e77b75ddded0ae56555", // Debian 8.5.0-1
		},
		Facts:          []string{"service_provider"},
		NeedsProviders: true,
		resolve:        providerFact("service_provider", "service"),
	})
	settings := &File{
		Module: "stdlib", Name: "puppet_settings.rb",
		Digests: []string{
			"a9b6b5816ace9e30669dbfc4a72d74ba716457895b25ac22155e694f1a206263", // Debian 8.5.0-1
		},
		Facts: []string{"puppet_vardir", "puppet_environmentpath", "puppet_server"},
		resolve: func(r *Run, out map[string]Value) {
			for fact, setting := range map[string]string{"puppet_vardir": "vardir", "puppet_environmentpath": "environmentpath", "puppet_server": "server"} {
				out[fact] = Value{V: r.Setting(setting)}
			}
		},
	}
	needsSettings[settings] = []string{"vardir", "environmentpath", "server"}
	register(settings)
	register(&File{
		Module: "stdlib", Name: "pe_version.rb",
		Digests: []string{
			"d3957f7e68ed02bf0a0d7a9524251cf32200029b6eef9289d7db2a25505d5900", // Debian 8.5.0-1
		},
		Facts:   []string{"pe_version", "is_pe", "pe_major_version", "pe_minor_version", "pe_patch_version"},
		resolve: resolvePEVersion,
	})
	register(&File{
		Module: "stdlib", Name: "root_home.rb",
		Digests: []string{
			"a6a8c2cb6c7367372956e08c680c7a4b561ef5eda5f6a70a9f4a1b5a873851ab", // Debian 8.5.0-1
		},
		Facts: []string{"root_home"},
		resolve: func(r *Run, out map[string]Value) {
			if !r.confine("kernel", "Linux") {
				return
			}
			ent, err := r.Exec("getent passwd root")
			if err != nil {
				if !errors.Is(err, ErrNotFound) {
					r.Fail(r.file("root_home"), "root_home", err)
				}
				return
			}
			if f := rubySplit(ent, ":"); len(f) > 5 {
				out["root_home"] = Value{V: f[5]}
			}
		},
	})
}

// providerFact is a fact whose value is the provider Puppet would choose
// for typ.
func providerFact(fact, typ string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		p, err := r.DefaultProvider(typ)
		if err != nil {
			r.Fail(r.file(fact), fact, err)
			return
		}
		out[fact] = Value{V: p}
	}
}

var peVersion = regexp.MustCompile(`Puppet Enterprise (\d+\.\d+\.\d+)`)

func resolvePEVersion(r *Run, out map[string]Value) {
	var version any
	if b := r.Value("pe_build"); b != nil && b != false {
		version = b
	} else if pv, ok := r.Value("puppetversion").(string); ok {
		if m := peVersion.FindStringSubmatch(pv); m != nil {
			version = m[1]
		}
	}
	out["pe_version"] = Value{V: version}
	s := rubyToS(version)
	out["is_pe"] = Value{V: s != ""}
	if s == "" || version == nil {
		return
	}
	parts := rubySplit(s, ".")
	for i, fact := range []string{"pe_major_version", "pe_minor_version", "pe_patch_version"} {
		if i < len(parts) {
			out[fact] = Value{V: parts[i], Weight: 1}
		}
	}
}

// rubySplit is Ruby's String#split(sep) with a plain separator: the
// trailing empty fields dropped.
func rubySplit(s, sep string) []string {
	f := strings.Split(s, sep)
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return f
}
