package sshkey_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/internal/parsedfile/parsedfiletest"
	"github.com/pippet/pippet/applier/types/sshkey"
	"github.com/pippet/pippet/applier/typetest"
)

const (
	ed  = "AAAAC3NzaC1lZDI1NTE5AAAAIBg4Ibu0wzfMGPGKSbJ1y7ItLm0uX4bGQm1k2JHbmVYk"
	rsa = "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDBvh3VmYp2EaV"
)

type step struct {
	title, params string
	want          string // typetest.Summary
	ref           string // the answer's resource
	events        string // typetest.Events, when not ""
	file          string // the file's body afterwards ("-": unchecked)
}

// run applies steps in order against a fresh target (setup its content
// when not ""), each params' TARGET spelled out.
func run(t *testing.T, setup string, steps []step) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "known_hosts")
	if setup != "" {
		require.NoError(t, os.WriteFile(target, []byte(setup), 0o640))
	}
	e := typetest.New(t, []*applier.Type{sshkey.Type})
	for i, s := range steps {
		res := e.Step(i, "sshkey", s.title, strings.ReplaceAll(s.params, "TARGET", target), s.want, s.events)
		if s.ref != "" {
			assert.Equal(t, s.ref, res.Resource, "step %d", i+1)
		}
		if s.file != "-" {
			assert.Equal(t, s.file, parsedfiletest.Body(t, target), "step %d", i+1)
		}
	}
	return target
}

// Recorded with puppet apply (Puppet 7.23, sshkeys_core): what each
// request answers and the file it leaves.
func TestRecordedLifecycle(t *testing.T) {
	line1 := "h1,a1,a2 ssh-rsa " + rsa + "\n"
	line2 := "h1,a2 ssh-rsa " + ed + "\n"
	target := run(t, "", []step{
		{"h1", "{type: rsa, key: " + rsa + ", host_aliases: [a1, a2], target: TARGET}", "changed", "Sshkey[h1@ssh-rsa]",
			"ensure: created (success)\n", line1},
		{"h1", "{type: ssh-rsa, key: " + rsa + ", host_aliases: [a1, a2], target: TARGET}", "unchanged", "Sshkey[h1@ssh-rsa]", "", line1},
		{"h1", "{type: ssh-rsa, key: " + ed + ", host_aliases: [a2], target: TARGET}", "changed", "Sshkey[h1@ssh-rsa]",
			"key: key changed '" + rsa + "' to '" + ed + "' (success)\nhost_aliases: host_aliases changed ['a1', 'a2'] to ['a2'] (success)\n", line2},
		{"h1", "{type: ssh-rsa, key: " + ed + ", host_aliases: [], target: TARGET}", "changed", "Sshkey[h1@ssh-rsa]",
			"host_aliases: host_aliases changed ['a2'] to [] (success)\n", "h1 ssh-rsa " + ed + "\n"},
		{"h1@ssh-rsa", "{key: " + ed + ", target: TARGET}", "unchanged", "Sshkey[h1@ssh-rsa]", "", "h1 ssh-rsa " + ed + "\n"},
		{"h1", "{type: ssh-rsa, ensure: absent, target: TARGET}", "changed", "Sshkey[h1@ssh-rsa]", "ensure: removed (success)\n", "\n"},
		{"h1", "{type: ssh-rsa, ensure: absent, target: TARGET}", "unchanged", "Sshkey[h1@ssh-rsa]", "", "\n"},
	})
	st, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "a new known_hosts file is 0644, as Puppet makes it")
}

func TestRecordedRefusals(t *testing.T) {
	run(t, "", []step{
		// Puppet reports "created" and then fails to write the file.
		{"h2", "{key: " + ed + ", target: TARGET}", "failed: change from 'absent' to 'present' failed: Field 'type' is required", "Sshkey[h2@]", "", ""},
		{"h2", "{type: ed25519, target: TARGET}", "failed: change from 'absent' to 'present' failed: Field 'key' is required", "Sshkey[h2@ssh-ed25519]", "", ""},
		{"h 2", "{type: ed25519, key: " + ed + ", target: TARGET}", "error: Parameter name failed on Sshkey[h 2]: Resourcename cannot include whitespaces", "", "", ""},
		{"h,2", "{type: ed25519, key: " + ed + ", target: TARGET}", "error: Parameter name failed on Sshkey[h,2]: No comma in resourcename allowed. If you want to specify aliases use the host_aliases property", "", "", ""},
		{"h2", "{type: ed25519, key: " + ed + ", host_aliases: 'a,b', target: TARGET}", "error: Parameter host_aliases failed on Sshkey[h2]: Aliases must be provided as an array, not a comma-separated list", "", "", ""},
		{"h2", "{type: ed25519, key: " + ed + ", host_aliases: 'a b', target: TARGET}", "error: Parameter host_aliases failed on Sshkey[h2]: Aliases cannot include whitespace", "", "", ""},
		{"h2", "{type: foo, key: " + ed + ", target: TARGET}", "error: Parameter type failed on Sshkey[h2]: Invalid value \"foo\". Valid values are ssh-dss, ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, sk-ecdsa-sha2-nistp256@openssh.com, sk-ssh-ed25519@openssh.com.", "", "", ""},
		// Puppet writes a key with a space as it is, read back the same.
		{"h2", "{type: ed25519, key: " + ed + " x, target: TARGET}", "changed", "", "", "h2 ssh-ed25519 " + ed + " x\n"},
		{"h2", "{type: ed25519, key: " + ed + " x, target: TARGET}", "unchanged", "", "", "h2 ssh-ed25519 " + ed + " x\n"},
		// Not in Puppet: a line break would write a line of the caller's choosing.
		{"h3", "{type: ed25519, key: \"" + ed + "\\nevil ssh-rsa x\", target: TARGET}", "error: Parameter key failed on Sshkey[h3]: Key must not contain a line break", "", "", "h2 ssh-ed25519 " + ed + " x\n"},
		{"h3", "{type: ed25519, key: " + ed + ", target: rel/kh}", "error: Parameter target failed on Sshkey[h3]: File paths must be fully qualified, not 'rel/kh'", "", "", "-"},
	})
}

// An existing file: comments, blank lines and other keys kept, records
// normalised when the file is written; a line Puppet can't write back
// (a name alone) fails every change to the file, as in Puppet.
func TestRecordedExistingFile(t *testing.T) {
	weird := "# my comment\n\n|1|abc=|def= ssh-rsa " + rsa + "\nh3,al ssh-ed25519 " + ed + " trailing comment\nweird\nh4  ssh-rsa   " + rsa + "\n\n\n"
	target := filepath.Join(t.TempDir(), "kh")
	require.NoError(t, os.WriteFile(target, []byte(weird), 0o640))
	e := typetest.New(t, []*applier.Type{sshkey.Type})
	for _, req := range [][2]string{
		{"h3", "{type: ed25519, key: " + ed + ", host_aliases: [al], target: " + target + "}"},
		{"h5", "{type: ed25519, key: " + ed + ", target: " + target + "}"},
		{"h4", "{type: rsa, ensure: absent, target: " + target + "}"},
	} {
		res := e.Apply("sshkey", req[0], req[1])
		assert.Equal(t, "failed: could not apply the changes: writing "+target+": Field 'type' is required", typetest.Summary(res))
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, weird, string(b), "untouched")

	run(t, strings.Replace(weird, "weird\n", "", 1), []step{
		{"h3", "{type: ed25519, key: " + ed + ", host_aliases: [al], target: TARGET}", "changed", "", "key: key changed '" + ed + " trailing comment' to '" + ed + "' (success)\n",
			"# my comment\n\n|1|abc=|def= ssh-rsa " + rsa + "\nh3,al ssh-ed25519 " + ed + "\nh4 ssh-rsa " + rsa + "\n"},
		{"h4@ssh-rsa", "{ensure: absent, target: TARGET}", "changed", "Sshkey[h4@ssh-rsa]", "",
			"# my comment\n\n|1|abc=|def= ssh-rsa " + rsa + "\nh3,al ssh-ed25519 " + ed + "\n"},
		// Hashed host names are names like any other.
		{"|1|abc=|def=@ssh-rsa", "{key: " + rsa + ", target: TARGET}", "unchanged", "Sshkey[|1|abc=|def=@ssh-rsa]", "", "-"},
	})
}

// The parsed file is kept while unchanged; an edit by another program is
// seen at once.
func TestEditedElsewhere(t *testing.T) {
	target := run(t, "", []step{
		{"h1", "{type: ed25519, key: " + ed + ", target: TARGET}", "changed", "", "", "h1 ssh-ed25519 " + ed + "\n"},
	})
	e := typetest.New(t, []*applier.Type{sshkey.Type})
	req := "{type: ed25519, key: " + ed + ", target: " + target + "}"
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("sshkey", "h1", req)))
	require.NoError(t, os.WriteFile(target, []byte("h1 ssh-ed25519 other\n"), 0o644))
	res := e.Apply("sshkey", "h1", req)
	assert.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "key: key changed 'other' to '"+ed+"' (success)\n", typetest.Events(res))
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("sshkey", "h1", req)))
}

// Recorded: a host with keys of two types is two resources; a missing
// directory fails the write; ensure alone keeps the key as it is; noop
// changes nothing.
func TestRecordedIdentityAndFailures(t *testing.T) {
	both := "h6 ssh-rsa " + rsa + "\nh6 ssh-ed25519 " + ed + "\n"
	run(t, both, []step{
		{"h6", "{type: ed25519, key: " + ed + ", target: TARGET}", "unchanged", "Sshkey[h6@ssh-ed25519]", "", "-"},
		{"h6@ssh-rsa", "{key: " + ed + ", target: TARGET}", "changed", "Sshkey[h6@ssh-rsa]",
			"key: key changed '" + rsa + "' to '" + ed + "' (success)\n", "h6 ssh-rsa " + ed + "\nh6 ssh-ed25519 " + ed + "\n"},
		{"h6@ssh-dss", "{ensure: absent, target: TARGET}", "unchanged", "Sshkey[h6@ssh-dss]", "", "h6 ssh-rsa " + ed + "\nh6 ssh-ed25519 " + ed + "\n"},
		{"h8", "{type: ed25519, ensure: present, target: TARGET}", "failed: change from 'absent' to 'present' failed: Field 'key' is required", "", "", "-"},
		{"h6", "{type: ed25519, key: " + rsa + ", target: TARGET, noop: true}", "unchanged", "",
			"key: current_value '" + ed + "', should be '" + rsa + "' (noop) (noop)\n", "h6 ssh-rsa " + ed + "\nh6 ssh-ed25519 " + ed + "\n"},
		{"h9", "{type: ed25519, key: " + ed + ", ensure: present, target: TARGET}", "changed", "", "", "-"},
		{"h9", "{type: ed25519, ensure: present, target: TARGET}", "unchanged", "", "", "-"},
		{"h10", "{type: ed25519, ensure: absent, target: TARGET}", "unchanged", "", "", "-"},
	})
	dir := t.TempDir()
	e := typetest.New(t, []*applier.Type{sshkey.Type})
	res := e.Apply("sshkey", "h7", "{type: ed25519, key: "+ed+", target: "+dir+"/x/kh}")
	assert.True(t, res.Failed, typetest.Summary(res))
	assert.Contains(t, res.Exception, dir+"/x")
	_, err := os.Stat(filepath.Join(dir, "x"))
	assert.True(t, os.IsNotExist(err))
}
