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
	})
	register(&File{
		Module: "ssh", Name: "ssh_client_version.rb",
		Digests: []string{
			"7a3fc7fb7221edd1dd2355838e6748bc7825da5eb196a6288ae3f1d844c2dc0f", // Debian 2.8.1-4
		},
		Facts:   []string{"ssh_client_version_full", "ssh_client_version_major", "ssh_client_version_release"},
		resolve: sshVersion("ssh_client_version"),
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
		text, err := r.Exec("sshd -V 2>&1")
		if err == nil {
			err = errors.New("sshd -V printed no OpenSSH_ line")
			for _, line := range rubyLines(text) {
				if sshLine.MatchString(line) {
					full := sshFull.ReplaceAllString(strings.TrimRight(line, " \t\n\v\f\r\x00"), "${1}")
					out[prefix+"_full"] = Value{V: full}
					out[prefix+"_major"] = Value{V: sshMajor.ReplaceAllString(full, "${1}")}
					out[prefix+"_release"] = Value{V: sshRelease.ReplaceAllString(full, "${1}")}
					return
				}
			}
		}
		for _, s := range []string{"_full", "_major", "_release"} {
			r.Fail(f, prefix+s, err)
		}
	}
}
