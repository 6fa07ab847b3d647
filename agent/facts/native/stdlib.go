package native

import (
	"errors"
	"os"
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
//     AIX resolutions do not apply on Linux); from 8.6.0, on any kernel,
//     root's home as Ruby's Etc.getpwnam says it (the C library's
//     getpwnam, which getent asks too; /etc/passwd without getent).
func init() {
	register(&File{
		Module: "stdlib", Name: "package_provider.rb",
		Digests: []string{
			"4bebfa2bfd6b23a680b317b59699b47621e24a8515aff5def45b2133ba4b6b06", // Debian 8.5.0-1
		},
		Facts:          []string{"package_provider"},
		NeedsProviders: true,
		resolve:        providerFact("package_provider", "package"),
		// The same question, without the test of Puppet's version.
		Forge: []Release{{Module: "puppetlabs-stdlib", Version: "9.7.0", Releases: "8.6.0 to 9.7.0",
			Digest: "b8b79c0e50b4157ce6e139cf6338095ad15d0def3697d97498f6f6b7b1e242ca"}},
	})
	register(&File{
		Module: "stdlib", Name: "service_provider.rb",
		Digests: []string{
			"12f477c5d71d2e0b23a813a587c4028a7688813b47390e77b75ddded0ae56555", // Debian 8.5.0-1
		},
		Facts:          []string{"service_provider"},
		NeedsProviders: true,
		resolve:        providerFact("service_provider", "service"),
		// Debian's digest is also the Forge's, 7.0.0 to 9.7.0.
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
		// The same code, written otherwise (rubocop's).
		Forge: []Release{{Module: "puppetlabs-stdlib", Version: "9.7.0", Releases: "9.0.0 to 9.7.0",
			Digest: "ea15e3b915e7f382e1cb98e1802b0a49f6d75b34d799749f317bab2254966dfd"}},
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
		Forge: []Release{{Module: "puppetlabs-stdlib", Version: "9.7.0", Releases: "8.6.0 to 9.7.0",
			Digest: "f07c76ca898e90bdb32b744c8639eceb96a06b2292c1e08c4827f96af1ca0d79", resolve: rootHomeEtc}},
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
	// The others ask Facter for pe_version.
	version = r.own("pe_version", Value{V: version})
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

// rootHomeEtc is root_home from stdlib 8.6.0: Etc.getpwnam('root')&.dir,
// without confine (weight 0). getpwnam goes through the C library's
// name service, as `getent passwd root` does; without getent,
// /etc/passwd. No root: Ruby raises (the fact is absent, one error).
func rootHomeEtc(r *Run, out map[string]Value) {
	var ent string
	if r.Which("getent") != "" {
		var err error
		if ent, err = r.Exec("getent passwd root"); err != nil {
			r.Fail(r.file("root_home"), "root_home", err)
			return
		}
	} else if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "root:") {
				ent = line
				break
			}
		}
	}
	f := strings.Split(ent, ":")
	if len(f) < 7 || f[0] != "root" {
		r.Fail(r.file("root_home"), "root_home", errors.New("can't find user for root"))
		return
	}
	out["root_home"] = Value{V: f[5]}
}
