package integration

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/protocol"
)

// session is one receiver process driven a line at a time.
type session struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

func newSession(t *testing.T) *session {
	t.Helper()
	_, in, out, _ := startReceiver(t)
	s := &session{t: t, in: in, out: bufio.NewReader(out)}
	banner := s.readLine()
	require.Equal(t, protocol.Banner, banner)
	return s
}

func (s *session) readLine() string {
	s.t.Helper()
	type r struct {
		line string
		err  error
	}
	ch := make(chan r, 1)
	go func() { l, err := s.out.ReadString('\n'); ch <- r{l, err} }()
	select {
	case got := <-ch:
		require.NoError(s.t, got.err)
		return got.line
	case <-time.After(time.Minute):
		s.t.Fatal("no answer within a minute")
		return ""
	}
}

// send writes one request (a JSON object made of m) and reads its answer.
func (s *session) send(m map[string]any) (protocol.Result, string) {
	s.t.Helper()
	b, err := json.Marshal(m)
	require.NoError(s.t, err)
	return s.sendLine(string(b))
}

func (s *session) sendLine(line string) (protocol.Result, string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(s.t, err)
	raw := s.readLine()
	var res protocol.Result
	require.NoError(s.t, protocol.DecodeResult([]byte(raw), &res), raw)
	return res, raw
}

func (s *session) find(typ, title, params string) protocol.Result {
	s.t.Helper()
	m := map[string]any{"op": "find", "type": typ, "title": title}
	if params != "" {
		m["params"] = params
	}
	res, raw := s.send(m)
	require.False(s.t, res.Failed, raw)
	require.NotNil(s.t, res.State, raw)
	return res
}

func (s *session) search(typ, params string) protocol.Result {
	s.t.Helper()
	m := map[string]any{"op": "search", "type": typ}
	if params != "" {
		m["params"] = params
	}
	res, raw := s.send(m)
	require.False(s.t, res.Failed, raw)
	require.NotNil(s.t, res.Instances, raw)
	return res
}

func (s *session) apply(typ, title, params string) protocol.Result {
	s.t.Helper()
	res, _ := s.send(map[string]any{"type": typ, "title": title, "params": params})
	return res
}

// roundTrip: find, then apply the returned params: unchanged.
func (s *session) roundTrip(typ, title, scope string) protocol.Result {
	s.t.Helper()
	f := s.find(typ, title, scope)
	back := s.apply(typ, title, f.Params)
	assert.False(s.t, back.Failed, "%s[%s] %s: %s", typ, title, f.Params, back.Exception)
	assert.False(s.t, back.Changed, "%s[%s]: applying %s changed %+v", typ, title, f.Params, back.Events)
	return f
}

func titles(r protocol.Result) []string {
	var out []string
	for _, in := range r.Instances {
		out = append(out, in.Title)
	}
	return out
}

func ensureOf(st protocol.State) any { v, _ := st.Get("ensure"); return v }

func TestVerbsHostMountFile(t *testing.T) {
	s := newSession(t)
	dir := t.TempDir()

	// host: a private target file.
	hosts := filepath.Join(dir, "hosts")
	tgt := "{target: '" + hosts + "'}"
	require.NoError(t, os.WriteFile(hosts, nil, 0o644))
	res := s.apply("host", "pipv.example", "{ip: 10.9.9.9, host_aliases: [pv], target: '"+hosts+"'}")
	require.True(t, res.Changed, res.Exception)
	f := s.roundTrip("host", "pipv.example", tgt)
	assert.Equal(t, "10.9.9.9", f.State[2].Value, f.State)
	before, _ := os.ReadFile(hosts)
	assert.Equal(t, "absent", ensureOf(s.roundTrip("host", "pipv-missing.example", tgt).State))
	after, _ := os.ReadFile(hosts)
	assert.Equal(t, string(before), string(after))
	assert.Equal(t, []string{"pipv.example"}, titles(s.search("host", tgt)))

	// mount: a private table; the line is unmounted.
	fstab := filepath.Join(dir, "fstab")
	tgt = "{target: '" + fstab + "'}"
	res = s.apply("mount", "/mnt/pipv", "{ensure: defined, device: /dev/pipv, fstype: ext4, options: noatime, target: '"+fstab+"'}")
	require.True(t, res.Changed, res.Exception)
	f = s.roundTrip("mount", "/mnt/pipv", tgt)
	assert.Equal(t, "unmounted", ensureOf(f.State))
	before, _ = os.ReadFile(fstab)
	assert.Equal(t, "absent", ensureOf(s.roundTrip("mount", "/mnt/pipv-missing", tgt).State))
	after, _ = os.ReadFile(fstab)
	assert.Equal(t, string(before), string(after))
	assert.Contains(t, titles(s.search("mount", tgt)), "/mnt/pipv")
	assert.Equal(t, []string{"/mnt/pipv"}, titles(s.search("mount", "{target: '"+fstab+"', device: /dev/pipv}")))

	// file: a directory's entries.
	files := filepath.Join(dir, "files")
	res = s.apply("file", files, "{ensure: directory, mode: '0750'}")
	require.True(t, res.Changed, res.Exception)
	res = s.apply("file", files+"/a", "{ensure: file, content: hello, mode: '0600'}")
	require.True(t, res.Changed, res.Exception)
	res = s.apply("file", files+"/l", "{ensure: link, target: a}")
	require.True(t, res.Changed, res.Exception)
	for _, p := range []string{files, files + "/a", files + "/l"} {
		s.roundTrip("file", p, "")
	}
	f = s.find("file", files+"/a", "")
	v, _ := f.State.Get("content")
	assert.Equal(t, "{sha256}2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", v)
	assert.Equal(t, "absent", ensureOf(s.roundTrip("file", files+"/missing", "").State))
	_, err := os.Lstat(files + "/missing")
	assert.True(t, os.IsNotExist(err), "find or its round trip created the file")
	assert.Equal(t, []string{files + "/a", files + "/l"}, titles(s.search("file", "{path: '"+files+"'}")))
}

func TestVerbsUserGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: creates real accounts")
	}
	rm := func() {
		exec.Command("userdel", "pipvi700").Run()
		exec.Command("groupdel", "pipvi700").Run()
		exec.Command("groupdel", "pipvig701").Run()
	}
	rm()
	t.Cleanup(rm)
	s := newSession(t)
	res := s.apply("group", "pipvig701", "{gid: 47701}")
	require.True(t, res.Changed, res.Exception)
	res = s.apply("user", "pipvi700", "{uid: 47700, groups: [pipvig701], shell: /bin/sh, password: '!', comment: 'Pip V'}")
	require.True(t, res.Changed, res.Exception)

	f := s.roundTrip("user", "pipvi700", "")
	uid, _ := f.State.Get("uid")
	assert.Equal(t, int64(47700), uid)
	g, _ := f.State.Get("groups")
	assert.Equal(t, []any{"pipvig701"}, g)
	s.roundTrip("group", "pipvig701", "")
	s.roundTrip("user", "root", "")
	s.roundTrip("group", "root", "")

	assert.Equal(t, "absent", ensureOf(s.roundTrip("user", "pipvi702", "").State))
	assert.Error(t, exec.Command("getent", "passwd", "pipvi702").Run(), "find created a user")
	assert.Equal(t, "absent", ensureOf(s.roundTrip("group", "pipvig703", "").State))
	assert.Error(t, exec.Command("getent", "group", "pipvig703").Run(), "find created a group")

	assert.Equal(t, []string{"pipvi700"}, titles(s.search("user", "{uid: 47700}")))
	assert.Contains(t, titles(s.search("user", "")), "pipvi700")
	assert.Equal(t, []string{"pipvig701"}, titles(s.search("group", "{gid: 47701}")))
	assert.Contains(t, titles(s.search("group", "")), "pipvig701")
}

// Bad verbs get error answers, and the next line is still answered.
func TestVerbsErrors(t *testing.T) {
	s := newSession(t)
	cases := []struct{ line, ref, msg string }{
		{`{"op":"destroy","type":"user","title":"root","id":1}`, "User[root]", `unknown op "destroy" (expected apply, find, search, describe or declare)`},
		{`{"op":"find","type":"user","id":2}`, "User", "find of User needs a title"},
		{`{"op":"find","type":"nosuch","title":"x"}`, "Nosuch[x]", "unknown resource type 'nosuch'"},
		{`{"op":"search","type":"exec"}`, "Exec", "cannot search Exec: type exec cannot list instances"},
		{`{"op":"search","type":"notify"}`, "Notify", "cannot search Notify: type notify cannot list instances"},
		{`{"op":"search","type":"user","params":"{bogus: 1}"}`, "User", "no parameter named 'bogus'"},
		{`{"op":"search","type":"user","title":"root"}`, "User", "search of User takes no title"},
		{`{"op":"describe","type":"nosuch"}`, "Nosuch", "unknown resource type 'nosuch'"},
		{`{"op":7,"type":"user","title":"x"}`, "", `"op" must be a string`},
	}
	for _, c := range cases {
		res, raw := s.sendLine(c.line)
		assert.True(t, res.Error, raw)
		assert.Equal(t, c.ref, res.Resource, raw)
		assert.Contains(t, res.Exception, c.msg, raw)
	}
	res, raw := s.sendLine(`{"op":"describe","type":"file","id":"d"}`)
	require.False(t, res.Failed, raw)
	assert.True(t, strings.HasPrefix(raw, `{"resource":"File","failed":false,"changed":false,"noop":false,"error":false,"exception":null,"id":"d","declaration":{"name":"file",`), raw)
	res, raw = s.sendLine(`{"type":"notify","title":"still here","params":"{}"}`)
	assert.True(t, res.Changed, raw)
}

// TestResourceMatchesPuppet compares `receiver resource` with `puppet
// resource` on this machine, byte for byte, for the five examples of
// issue 13.
func TestResourceMatchesPuppet(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs Puppet")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: puppet resource user reads /etc/shadow")
	}
	for _, args := range []string{"user root", "group root", "host localhost", "file /etc/hostname", "package coreutils"} {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			// Puppet runs with Debian's PATH for root: on a PATH that
			// holds a pyenv shim for pip (as these machines' does), its
			// pip provider's listing fails and takes every package query
			// with it ("Could not run: [nil, nil, ...]").
			puppet := exec.Command("puppet", append([]string{"resource"}, strings.Fields(args)...)...)
			puppet.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
			want, err := puppet.Output()
			require.NoError(t, err, "puppet resource %s", args)
			got, err := exec.Command(receiverBin, append([]string{"resource"}, strings.Fields(args)...)...).Output()
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// TestDelegatedReadsMatchPuppet: find, search and `receiver resource` on a
// type pippet delegates (alternatives, from Debian's
// puppet-module-puppetlabs-alternatives) go to Puppet, as `puppet resource
// TYPE` reads them, and print what it prints; they said `unknown resource
// type` before.
func TestDelegatedReadsMatchPuppet(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs Puppet")
	}
	needPuppet(t)
	if registered("alternatives") {
		t.Skip("alternatives is native now: pick another delegated type")
	}
	if _, err := os.Stat("/usr/share/puppet/modules/alternatives"); err != nil {
		t.Skip("Debian's puppet-module-puppetlabs-alternatives is not installed")
	}
	puppetEnv := append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	for _, args := range []string{"alternatives editor", "alternatives"} {
		t.Run(args, func(t *testing.T) {
			puppet := exec.Command("puppet", append([]string{"resource"}, strings.Fields(args)...)...)
			puppet.Env = puppetEnv
			want, err := puppet.Output()
			require.NoError(t, err, "puppet resource %s", args)
			cmd := exec.Command(receiverBin, append([]string{"resource"}, strings.Fields(args)...)...)
			cmd.Env = puppetEnv
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			assert.Equal(t, string(want), string(got))
		})
	}

	// The pipe's verbs: the same state, in the receiver's answer.
	s := newSession(t)
	res := s.find("alternatives", "editor", "")
	assert.Equal(t, "Alternatives[editor]", res.Resource)
	mode, _ := res.State.Get("mode")
	assert.Contains(t, []any{"auto", "manual"}, mode)
	path, _ := res.State.Get("path")
	assert.NotEmpty(t, path)
	assert.Contains(t, res.Params, `"path":`)
	res = s.search("alternatives", "")
	assert.Equal(t, "Alternatives", res.Resource)
	assert.Contains(t, titles(res), "editor")
	res, raw := s.send(map[string]any{"op": "find", "type": "alternatives", "title": "nosuchalt-pippet"})
	assert.True(t, res.Failed, raw)
	assert.Contains(t, res.Exception, "no alternatives for nosuchalt-pippet", "Puppet's own error")
}
