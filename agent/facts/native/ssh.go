package native

import (
	"errors"
	"regexp"
	"strings"
)

// saz-ssh's facts. Both files run `sshd -V 2>&1` (the server's version,
// for the client facts too, as the module has it); the command runs once.
//
//   - ssh_server_version_full, ssh_client_version_full: what follows
//     "OpenSSH_" up to the first space in the first line of its output
//     that starts with "OpenSSH_";
//   - *_major: its first two numbers (9.2); *_release: its first two or
//     three (9.2, 8.9.1).
//
// Without sshd, or without such a line, the facts are absent, with one
// error each, as Facter's resolution raises.
func init() {
	register(&File{
		Module: "ssh", Name: "ssh_server_version.rb",
		Digests: []string{
			"e1a34d99a42564e98bc9b2997fbac00ae9c1f60df43e670cc18474e05eba7970", // Debian 2.8.1-4
		},
		Facts:   []string{"ssh_server_version_full", "ssh_server_version_major", "ssh_server_version_release"},
		resolve: sshVersion("ssh_server_version"),
		Forge: []Release{{Module: "saz-ssh", Version: "14.1.0", Releases: "11.1.0 to 14.1.0",
			Digest: "1ff4a0fe52064ab138fa6b5f0d2c0f8bbf1faee977b6b795182713be82755efc", resolve: sshServerVersion11}},
	})
	register(&File{
		Module: "ssh", Name: "ssh_client_version.rb",
		Digests: []string{
			"7a3fc7fb7221edd1dd2355838e6748bc7825da5eb196a6288ae3f1d844c2dc0f", // Debian 2.8.1-4
		},
		Facts:   []string{"ssh_client_version_full", "ssh_client_version_major", "ssh_client_version_release"},
		resolve: sshVersion("ssh_client_version"),
		Forge: []Release{{Module: "saz-ssh", Version: "14.1.0", Releases: "10.0.0 to 14.1.0",
			Digest: "2ff01755ef4b213ed4c2a87fb515d5cabea80fbacd4f14d3fe02979e30f16951", resolve: sshClientVersion10}},
	})
}

var (
	sshLine    = regexp.MustCompile(`(?m)^OpenSSH_`)
	sshFull    = regexp.MustCompile(`(?m)^OpenSSH_([^ ]+).*$`)
	sshMajor   = regexp.MustCompile(`(?m)^([0-9]+\.[0-9]+).*$`)
	sshRelease = regexp.MustCompile(`(?m)^([0-9]+\.[0-9]+(?:\.[0-9]+)?).*$`)
)

func sshVersion(prefix string) func(r *Run, out map[string]Value) {
	return func(r *Run, out map[string]Value) {
		f := r.file(prefix + "_full")
		var full any
		text, err := r.Exec("sshd -V 2>&1")
		if err == nil {
			err = errors.New("sshd -V printed no OpenSSH_ line")
			for _, line := range rubyLines(text) {
				if sshLine.MatchString(line) {
					full, err = sshFull.ReplaceAllString(strings.TrimRight(line, " \t\n\v\f\r\x00"), "${1}"), nil
					out[prefix+"_full"] = Value{V: full}
					break
				}
			}
		}
		if err != nil {
			r.Fail(f, prefix+"_full", err)
		}
		// _major and _release ask Facter for _full.
		version, ok := r.own(prefix+"_full", Value{V: full}).(string)
		if !ok && err == nil {
			err = errors.New(prefix + "_full is not a string")
		}
		for _, k := range []struct {
			suffix string
			re     *regexp.Regexp
		}{{"_major", sshMajor}, {"_release", sshRelease}} {
			if ok {
				out[prefix+k.suffix] = Value{V: k.re.ReplaceAllString(version, "${1}")}
			} else {
				r.Fail(f, prefix+k.suffix, err)
			}
		}
	}
}

// From saz-ssh 10.0.0 (the client) and 11.1.0 (the server), on Linux,
// SunOS, FreeBSD, DragonFly and Darwin:
//
//   - ssh_client_version_full: from `ssh -V` (the client's own version),
//     ssh_server_version_full from `sshd -V`, each only when the program
//     is installed: what follows OpenSSH_ (or Sun_SSH_) up to a space or
//     comma in the first line that starts with either;
//   - ssh_client_version_major and _release are confined on
//     ssh_client_version_full being true, which a version string never
//     is (Facter's confine compares with ===): never defined;
//   - ssh_server_version_major: its first number (9), when the full
//     version has a digit; ssh_server_version_release: its first two or
//     three numbers, likewise (on any kernel).
var (
	sshLine11  = regexp.MustCompile(`(?m)^OpenSSH_|^Sun_SSH_`)
	sshFull11  = regexp.MustCompile(`(?m)^(OpenSSH_|Sun_SSH_)([^ ,]+).*$`)
	sshMajor11 = regexp.MustCompile(`(?m)^([0-9]+)\..*$`)
	sshDigit   = regexp.MustCompile(`\d+`)
	sshKernels = []string{"Linux", "SunOS", "FreeBSD", "DragonFly", "Darwin"}
)

// sshFullVersion is the _full fact of saz-ssh 10.0.0 and later, from
// program -V: ok false when it is absent (err says why, when Ruby
// would raise).
func sshFullVersion(r *Run, program string) (full string, ok bool, err error) {
	if r.Which(program) == "" {
		return "", false, nil
	}
	text, err := r.Exec(program + " -V 2>&1")
	if err != nil {
		return "", false, err
	}
	for _, line := range rubyLines(text) {
		if sshLine11.MatchString(line) {
			return sshFull11.ReplaceAllString(strings.TrimRight(line, " \t\n\v\f\r\x00"), "${2}"), true, nil
		}
	}
	return "", false, errors.New(program + " -V printed no OpenSSH_ or Sun_SSH_ line")
}

func sshClientVersion10(r *Run, out map[string]Value) {
	if !r.confine("kernel", sshKernels...) {
		return
	}
	full, ok, err := sshFullVersion(r, "ssh")
	if err != nil {
		r.Fail(r.file("ssh_client_version_full"), "ssh_client_version_full", err)
	}
	if ok {
		out["ssh_client_version_full"] = Value{V: full, Weight: 1}
	}
}

func sshServerVersion11(r *Run, out map[string]Value) {
	full, ok, err := "", false, error(nil)
	if r.confine("kernel", sshKernels...) {
		if full, ok, err = sshFullVersion(r, "sshd"); err != nil {
			r.Fail(r.file("ssh_server_version_full"), "ssh_server_version_full", err)
		}
	}
	if ok {
		out["ssh_server_version_full"] = Value{V: full, Weight: 1}
	}
	// _major and _release are confined on Facter's _full, and ask for it.
	var v any
	if ok {
		v = full
	}
	full, isString := r.own("ssh_server_version_full", Value{V: v, Weight: 1}).(string)
	if !isString || !sshDigit.MatchString(strings.ToLower(full)) {
		return
	}
	if r.confine("kernel", sshKernels...) {
		out["ssh_server_version_major"] = Value{V: sshMajor11.ReplaceAllString(full, "${1}"), Weight: 2}
	}
	out["ssh_server_version_release"] = Value{V: sshRelease.ReplaceAllString(full, "${1}"), Weight: 1}
}
