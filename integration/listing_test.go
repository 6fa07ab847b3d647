package integration

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/types/cron"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol"
)

// The read verbs through the built binary for the types whose listing is
// issue 13's second half (package, service, sshkey, ssh_authorized_key,
// cron): find, then apply of the params it answers, is unchanged (the
// round trip); search lists what the test made; find of a resource that
// is not there answers it absent and changes nothing.

// listConv is one receiver process asked one line at a time.
type listConv struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

func startListConv(t *testing.T) *listConv {
	_, in, out, _ := startReceiver(t, "--no-banner")
	return &listConv{t: t, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (c *listConv) ask(req map[string]string) protocol.Result {
	c.t.Helper()
	line, err := json.Marshal(req)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(line, '\n'))
	require.NoError(c.t, err)
	ans, err := c.out.ReadBytes('\n')
	require.NoError(c.t, err, "no answer to %s", line)
	var r protocol.Result
	require.NoError(c.t, protocol.DecodeResult(ans, &r), "%s", ans)
	return r
}

func (c *listConv) apply(typ, title, params string) protocol.Result {
	return c.ask(map[string]string{"type": typ, "title": title, "params": params})
}

func (c *listConv) find(typ, title, params string) protocol.Result {
	c.t.Helper()
	req := map[string]string{"op": "find", "type": typ, "title": title}
	if params != "" {
		req["params"] = params
	}
	r := c.ask(req)
	require.False(c.t, r.Error || r.Failed, "find %s[%s]: %s", typ, title, r.Exception)
	return r
}

func (c *listConv) search(typ, params string) protocol.Result {
	c.t.Helper()
	req := map[string]string{"op": "search", "type": typ}
	if params != "" {
		req["params"] = params
	}
	r := c.ask(req)
	require.False(c.t, r.Error || r.Failed, "search %s: %s", typ, r.Exception)
	return r
}

// roundTrip finds a resource and applies the params found: unchanged.
func (c *listConv) roundTrip(typ, title, scope string) protocol.Result {
	c.t.Helper()
	f := c.find(typ, title, scope)
	a := c.apply(typ, title, f.Params)
	assert.Equal(c.t, "unchanged", listSummary(a), "apply of find's params %s to %s[%s]", f.Params, typ, title)
	return f
}

func listSummary(r protocol.Result) string {
	switch {
	case r.Error:
		return "error: " + r.Exception
	case r.Failed:
		return "failed: " + r.Exception
	case r.Changed:
		return "changed"
	}
	return "unchanged"
}

func stateValue(st protocol.State, name string) any {
	v, _ := st.Get(name)
	return v
}

func listedState(r protocol.Result, title string) protocol.State {
	for _, in := range r.Instances {
		if in.Title == title {
			return in.State
		}
	}
	return nil
}

func TestListingSSHKey(t *testing.T) {
	target := filepath.Join(t.TempDir(), "known_hosts")
	scope := "{target: '" + target + "'}"
	c := startListConv(t)
	const key = "AAAAC3NzaC1lZDI1NTE5AAAAIBg4Ibu0wzfMGPGKSbJ1y7ItLm0uX4bGQm1k2JHbmVYk"
	require.Equal(t, "changed", listSummary(c.apply("sshkey", "h1@ed25519", "{key: "+key+", host_aliases: [a1, a2], target: '"+target+"'}")))
	require.Equal(t, "changed", listSummary(c.apply("sshkey", "h2@ssh-rsa", "{key: AAAArsa, target: '"+target+"'}")))
	before, err := os.ReadFile(target)
	require.NoError(t, err)

	f := c.roundTrip("sshkey", "h1@ssh-ed25519", scope)
	assert.Equal(t, "Sshkey[h1@ssh-ed25519]", f.Resource)
	assert.Equal(t, key, stateValue(f.State, "key"))
	assert.Equal(t, []any{"a1", "a2"}, stateValue(f.State, "host_aliases"))

	s := c.search("sshkey", scope)
	require.Len(t, s.Instances, 2)
	assert.Equal(t, key, stateValue(listedState(s, "h1@ssh-ed25519"), "key"))
	assert.Equal(t, "AAAArsa", stateValue(listedState(s, "h2@ssh-rsa"), "key"))
	for _, in := range s.Instances {
		assert.Equal(t, target, stateValue(in.State, "target"))
	}

	f = c.roundTrip("sshkey", "h9@ssh-rsa", scope)
	assert.Equal(t, "absent", stateValue(f.State, "ensure"))
	after, _ := os.ReadFile(target)
	assert.Equal(t, string(before), string(after), "nothing changed")
}

func TestListingSSHAuthorizedKey(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("writes a key file as root")
	}
	target := filepath.Join(t.TempDir(), "authorized_keys")
	scope := "{user: root, target: '" + target + "'}"
	c := startListConv(t)
	const key = "AAAAC3NzaC1lZDI1NTE5AAAAIBg4Ibu0wzfMGPGKSbJ1y7ItLm0uX4bGQm1k2JHbmVYk"
	require.Equal(t, "changed", listSummary(c.apply("ssh_authorized_key", "k1@h", `{user: root, target: '`+target+`', type: ed25519, key: `+key+`, options: [no-pty, 'command="/bin/x y"']}`)))
	require.Equal(t, "changed", listSummary(c.apply("ssh_authorized_key", "k2@h", "{user: root, target: '"+target+"', type: ssh-rsa, key: AAAArsa}")))
	before, err := os.ReadFile(target)
	require.NoError(t, err)

	f := c.roundTrip("ssh_authorized_key", "k1@h", scope)
	assert.Equal(t, "ssh-ed25519", stateValue(f.State, "type"))
	assert.Equal(t, []any{"no-pty", `command="/bin/x y"`}, stateValue(f.State, "options"))

	s := c.search("ssh_authorized_key", scope)
	require.Len(t, s.Instances, 2)
	assert.Equal(t, "k1@h", s.Instances[0].Title)
	assert.Equal(t, "AAAArsa", stateValue(listedState(s, "k2@h"), "key"))
	r := c.ask(map[string]string{"op": "search", "type": "ssh_authorized_key"})
	assert.True(t, r.Error, "a search without user or target: %s", r.Exception)

	// A key that is not there: absent. Its state is ensure alone (as for
	// every absent resource); its params keep the user and target it was
	// looked for in, which apply needs: the round trip changes nothing.
	f = c.roundTrip("ssh_authorized_key", "k9@h", scope)
	assert.Equal(t, "absent", stateValue(f.State, "ensure"))
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "absent"}, {Name: "provider", Value: "parsed"}}, f.State)
	after, _ := os.ReadFile(target)
	assert.Equal(t, string(before), string(after), "nothing changed")
}

func TestListingCron(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("makes an account and installs its crontab")
	}
	if _, err := exec.LookPath("crontab"); err != nil {
		t.Fatalf("crontab(1) is required (Debian package cron): %v", err)
	}
	const u = "pipcronv1"
	_ = exec.Command("userdel", u).Run()
	out, err := exec.Command("useradd", "-M", "-d", "/nonexistent", u).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() {
		_ = exec.Command("crontab", "-r", "-u", u).Run()
		_ = exec.Command("userdel", u).Run()
	})
	cmd := exec.Command("crontab", "-u", u, "-")
	cmd.Stdin = strings.NewReader("MAILTO=root\n7 3 * * * /usr/bin/unmanaged\n")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	c := startListConv(t)
	require.Equal(t, "changed", listSummary(c.apply("cron", "pipj1", "{user: "+u+", command: /bin/true, minute: [5, 35], environment: [FOO=bar]}")))
	require.Equal(t, "changed", listSummary(c.apply("cron", "pipj2", "{user: "+u+", command: /bin/false, special: daily}")))
	crontab := func() string { b, _ := exec.Command("crontab", "-l", "-u", u).Output(); return string(b) }
	before := crontab()

	f := c.roundTrip("cron", "pipj1", "{user: "+u+"}")
	assert.Equal(t, []any{"5", "35"}, stateValue(f.State, "minute"))
	assert.Equal(t, []any{"FOO=bar"}, stateValue(f.State, "environment"))

	s := c.search("cron", "{user: "+u+"}")
	var titles []string
	for _, in := range s.Instances {
		titles = append(titles, in.Title)
	}
	assert.ElementsMatch(t, []string{"unmanaged:/usr/bin/unmanaged-1", "pipj1", "pipj2"}, titles)
	assert.Equal(t, "daily", stateValue(listedState(s, "pipj2"), "special"))
	// Every crontab, as Puppet lists them: this user's among them.
	all := c.search("cron", "")
	assert.Equal(t, u, stateValue(listedState(all, "pipj2"), "user"))
	// An unmanaged job's listed params find it by command and schedule.
	p := engine.ParamsYAML(cron.Type, listedState(s, "unmanaged:/usr/bin/unmanaged-1"))
	assert.Equal(t, "unchanged", listSummary(c.apply("cron", "unmanaged:/usr/bin/unmanaged-1", p)))

	f = c.roundTrip("cron", "pipj9", "{user: "+u+"}")
	assert.Equal(t, "absent", stateValue(f.State, "ensure"))
	assert.Equal(t, before, crontab(), "nothing changed")
}

func TestListingService(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("installs an init script into /etc/init.d")
	}
	dir := t.TempDir()
	name := fmt.Sprintf("pipsvcv%d", os.Getpid()%100000)
	script := filepath.Join("/etc/init.d", name)
	body := "#!/bin/sh\ncase \"$1\" in\nstart) touch " + dir + "/run ;;\nstop) rm -f " + dir + "/run ;;\nstatus) test -e " + dir + "/run ;;\n*) exit 3 ;;\nesac\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	t.Cleanup(func() { _ = os.Remove(script) })
	c := startListConv(t)
	require.Equal(t, "changed", listSummary(c.apply("service", name, "{ensure: running}")))

	f := c.roundTrip("service", name, "")
	assert.Equal(t, "running", stateValue(f.State, "ensure"))
	assert.Equal(t, "false", stateValue(f.State, "enable"))
	assert.Equal(t, "debian", stateValue(f.State, "provider"))

	s := c.search("service", "")
	st := listedState(s, name)
	require.NotNil(t, st, "%v", s.Instances)
	assert.Equal(t, "running", stateValue(st, "ensure"))
	r := c.ask(map[string]string{"op": "search", "type": "service", "params": "{provider: base}"})
	assert.True(t, r.Error)
	assert.Contains(t, r.Exception, "cannot list")

	// A service that is not there is stopped and not enabled (service
	// has no absent); applying that changes nothing.
	f = c.roundTrip("service", name+"-none", "")
	assert.Equal(t, "stopped", stateValue(f.State, "ensure"))
	assert.FileExists(t, filepath.Join(dir, "run"))
}

func TestListingPackage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("installs a package with dpkg")
	}
	testutil.MachineLock(t, "dpkg")
	const name = "pippkgv"
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte("Package: "+name+"\nVersion: 1.2-3\nArchitecture: all\nMaintainer: pippet <pip@example.invalid>\nDescription: pippet test package\n"), 0o644))
	deb := filepath.Join(dir, name+".deb")
	out, err := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, deb).CombinedOutput()
	require.NoError(t, err, "%s", out)
	purge := func() { _ = exec.Command("dpkg", "--purge", name).Run() }
	purge()
	t.Cleanup(purge)
	c := startListConv(t)
	require.Equal(t, "changed", listSummary(c.apply("package", name, "{provider: dpkg, source: '"+deb+"'}")))

	f := c.roundTrip("package", name, "")
	assert.Equal(t, protocol.State{{Name: "ensure", Value: "1.2-3"}, {Name: "mark", Value: "none"}, {Name: "provider", Value: "apt"}}, f.State)

	s := c.search("package", "")
	assert.Equal(t, "1.2-3", stateValue(listedState(s, name), "ensure"))
	q, err := exec.Command("dpkg-query", "-W", "-f", "${Package}\n").Output()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, n := range strings.Fields(string(q)) {
		names[n] = true
	}
	assert.Len(t, s.Instances, len(names), "what dpkg-query -W lists, once a name")

	// A package dpkg does not know is purged, as Puppet says.
	f = c.roundTrip("package", name+"-none", "")
	assert.Equal(t, "purged", stateValue(f.State, "ensure"))
	q, _ = exec.Command("dpkg-query", "-W", "-f", "${Version}", name).Output()
	assert.Equal(t, "1.2-3", string(q), "nothing changed")
}
