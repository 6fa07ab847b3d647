package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/delegate"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/runner"
)

// testModules holds the test modules: pippet_ini (ini_key, a classic
// custom type and provider) and pippet_note (a Resource API type).
func testModules(t *testing.T) string {
	dir, err := filepath.Abs("../delegate/testdata/modules")
	require.NoError(t, err)
	return dir
}

func needPuppet(t *testing.T) {
	t.Helper()
	if _, ok := delegate.FindPuppet(); !ok {
		t.Skip("no Puppet installation (Debian: puppet-agent); .ci/run installs it")
	}
}

// children lists the pids whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold blanks, so cut at the last ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, n)
		}
	}
	return out
}

// gone reports whether pid has exited and been reaped by its parent (a
// zombie is not gone: the receiver has not seen it die yet).
func gone(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err != nil
}

// TestDelegateCustomTypes drives the built receiver with --fallback puppet
// and a modulepath holding a custom type, a Resource API type and
// Debian's augeas_core (named by --delegate: pippet's own augeas is
// native): create, unchanged, change, error answers, a
// provider failure, many requests served by one Puppet process, that
// process killed and replaced, and stopped when the receiver exits.
func TestDelegateCustomTypes(t *testing.T) {
	needPuppet(t)
	dir := t.TempDir()
	ini := filepath.Join(dir, "app.ini")
	modulepath := testModules(t) + ":/usr/share/puppet/modules"
	// augeas is native: --delegate has Puppet's augeas_core apply it.
	cmd, stdin, stdout, stderr := startReceiver(t, "--fallback", "puppet", "--delegate", "augeas", "--modulepath", modulepath, "--debug", "--no-banner")
	answers := bufio.NewScanner(stdout)
	answers.Buffer(nil, 1<<20)
	n := 0
	ask := func(typ, title string, params map[string]any) protocol.Result {
		t.Helper()
		n++
		line, err := json.Marshal(map[string]any{"type": typ, "title": title, "params": params, "id": n})
		require.NoError(t, err)
		_, err = stdin.Write(append(line, '\n'))
		require.NoError(t, err)
		done := make(chan bool, 1)
		go func() { done <- answers.Scan() }()
		select {
		case ok := <-done:
			if !ok {
				// stderr is still being written: it is read after Wait.
				stdin.Close()
				_ = cmd.Wait()
				t.Fatalf("no answer to %s; stderr:\n%s", line, stderr.String())
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("no answer to %s within 3 minutes", line)
		}
		var r protocol.Result
		require.NoError(t, protocol.DecodeResult(answers.Bytes(), &r), answers.Text())
		assert.Equal(t, strconv.Itoa(n), string(r.ID), "our id echoed")
		return r
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(b)
	}

	// Native types and a type nobody knows start no Ruby.
	r := ask("notify", "native", map[string]any{})
	assert.False(t, r.Failed)
	r = ask("starship", "enterprise", map[string]any{})
	assert.True(t, r.Error)
	assert.Equal(t, "unknown resource type 'starship'", r.Exception)
	assert.Empty(t, children(t, cmd.Process.Pid), "no Puppet process before the first delegated request")

	// create, unchanged, change
	r = ask("ini_key", "main/color", map[string]any{"path": ini, "value": "blue"})
	assert.Equal(t, "Ini_key[main/color]", r.Resource)
	assert.True(t, r.Changed, r.Exception)
	assert.False(t, r.Failed, r.Exception)
	require.Len(t, r.Events, 1)
	assert.Equal(t, "created", r.Events[0].Message)
	assert.Equal(t, "[main]\ncolor = blue\n", read(ini))
	kids := children(t, cmd.Process.Pid)
	require.Len(t, kids, 1, "one Puppet process")
	bridge := kids[0]

	r = ask("ini_key", "main/color", map[string]any{"path": ini, "value": "blue"})
	assert.False(t, r.Changed)
	assert.False(t, r.Failed)
	assert.Empty(t, r.Events)

	r = ask("ini_key", "main/color", map[string]any{"path": ini, "value": "red"})
	assert.True(t, r.Changed)
	require.Len(t, r.Events, 1)
	assert.Equal(t, "value changed 'blue' to 'red'", r.Events[0].Message)
	assert.Equal(t, "[main]\ncolor = red\n", read(ini))

	// noop: Puppet's own noop, reported
	r = ask("ini_key", "main/color", map[string]any{"path": ini, "value": "green", "noop": true})
	assert.True(t, r.Noop)
	assert.False(t, r.Changed)
	require.Len(t, r.Events, 1)
	assert.Equal(t, "noop", r.Events[0].Status)
	assert.Equal(t, "[main]\ncolor = red\n", read(ini))

	// a bad value: an error answer from the type's validation
	r = ask("ini_key", "main/color", map[string]any{"path": ini, "value": "two\nlines"})
	assert.True(t, r.Error)
	assert.True(t, r.Failed)
	assert.Contains(t, r.Exception, "value must not contain a line break")
	// an unknown parameter
	r = ask("ini_key", "main/color", map[string]any{"path": ini, "colour": "red"})
	assert.True(t, r.Error)
	assert.Contains(t, r.Exception, "no parameter named 'colour'")
	// a provider failure: failed, not error, with Puppet's message
	r = ask("ini_key", "main/color", map[string]any{"path": filepath.Join(dir, "missing", "x.ini"), "value": "x"})
	assert.True(t, r.Failed)
	assert.False(t, r.Error)
	assert.False(t, r.Changed)
	assert.Contains(t, r.Exception, "change from 'absent' to 'present' failed: cannot write")
	assert.Contains(t, r.Exception, "does not exist")

	// many requests, one process
	for i := range 30 {
		key := fmt.Sprintf("key%d", i%10)
		r = ask("ini_key", "many/"+key, map[string]any{"path": ini, "value": strconv.Itoa(i)})
		require.False(t, r.Failed, r.Exception)
		assert.True(t, r.Changed)
	}
	assert.Contains(t, read(ini), "key9 = 29\n")
	assert.Equal(t, []int{bridge}, children(t, cmd.Process.Pid), "the same Puppet process served every request")

	// a Resource API type
	note := filepath.Join(dir, "note")
	r = ask("pippet_note", note, map[string]any{"text": "hello"})
	assert.True(t, r.Changed, r.Exception)
	assert.Equal(t, "hello", read(note))
	r = ask("pippet_note", note, map[string]any{"text": "hello"})
	assert.False(t, r.Changed)
	assert.False(t, r.Failed, r.Exception)
	r = ask("pippet_note", note, map[string]any{"text": 5})
	assert.True(t, r.Error)
	assert.Contains(t, r.Exception, "expects a String value, got Integer")
	r = ask("pippet_note", filepath.Join(dir, "missing", "note"), map[string]any{"text": "x"})
	assert.True(t, r.Failed)
	assert.Contains(t, r.Exception, "No such file or directory")

	// augeas, from Debian's puppet-module-puppetlabs-augeas-core
	if _, err := os.Stat("/usr/share/puppet/modules/augeas_core/lib/puppet/type/augeas.rb"); err == nil {
		conf := filepath.Join(dir, "aug.conf")
		require.NoError(t, os.WriteFile(conf, []byte("[main]\nk = old\n"), 0o644))
		params := map[string]any{"incl": conf, "lens": "Puppet.lns", "changes": []any{"set main/k new"}}
		r = ask("augeas", "set k", params)
		assert.True(t, r.Changed, r.Exception)
		assert.False(t, r.Failed, r.Exception)
		assert.Contains(t, read(conf), "k = new")
		r = ask("augeas", "set k", params)
		assert.False(t, r.Changed, "augeas applies no change that is already made")
	} else {
		t.Log("augeas_core not installed (puppet-module-puppetlabs-augeas-core): augeas not tried")
	}

	// the Puppet process killed between requests (and reaped, so the
	// receiver knows): the next one is answered by a new one
	require.NoError(t, syscall.Kill(bridge, syscall.SIGKILL))
	require.Eventually(t, func() bool { return gone(bridge) }, 10*time.Second, 10*time.Millisecond)
	r = ask("ini_key", "main/color", map[string]any{"path": ini, "value": "after"})
	assert.False(t, r.Failed, r.Exception)
	assert.True(t, r.Changed)
	assert.Contains(t, read(ini), "color = after\n")
	kids = children(t, cmd.Process.Pid)
	require.Len(t, kids, 1)
	assert.NotEqual(t, bridge, kids[0])
	bridge = kids[0]

	// end of input: the receiver stops Puppet and exits
	require.NoError(t, stdin.Close())
	werr := cmd.Wait()
	require.NoError(t, werr, stderr.String())
	assert.True(t, gone(bridge), "Puppet process stopped with the receiver")
	log := stderr.String()
	assert.Equal(t, 2, strings.Count(log, "Debug: receiver started"), "Puppet started once, and once more after the kill:\n%s", log)
	assert.Contains(t, log, "Notice: /Ini_key[main/color]/value: value changed 'blue' to 'red'\n", "Puppet's log relayed")
	assert.Contains(t, log, "Warning: replacing receiver")
}

// TestDelegateNone: with --fallback none a type pippet does not implement
// is an error answer, as without Puppet.
func TestDelegateNone(t *testing.T) {
	ini := filepath.Join(t.TempDir(), "a.ini")
	in := fmt.Sprintf(`{"type":"ini_key","title":"main/k","params":{"path":%q,"value":"v"}}`+"\n", ini)
	out, errOut, code := run(t, t.TempDir(), strings.NewReader(in), "--fallback", "none", "--modulepath", testModules(t), "--no-banner", "--debug")
	assert.Equal(t, 0, code)
	var r protocol.Result
	require.NoError(t, protocol.DecodeResult([]byte(out), &r), out)
	assert.True(t, r.Error)
	assert.Equal(t, "unknown resource type 'ini_key'", r.Exception)
	assert.NotContains(t, errOut, "receiver started")
	assert.NoFileExists(t, ini)
}

// TestDelegateDescribe: describe --list names the delegated types.
func TestDelegateDescribe(t *testing.T) {
	needPuppet(t)
	describe := func(args ...string) string {
		b, err := exec.Command(receiverBin, append([]string{"describe"}, args...)...).Output()
		require.NoError(t, err)
		return string(b)
	}
	out := describe("--list", "--modulepath", testModules(t))
	assert.Regexp(t, `(?m)^ini_key +- \(delegated\) module .*/pippet_ini$`, out)
	assert.Regexp(t, `(?m)^pippet_note +- \(delegated\) module .*/pippet_note$`, out)
	assert.Regexp(t, `(?m)^schedule +- \(delegated\) Puppet's own type$`, out)
	assert.NotRegexp(t, `(?m)^file +- \(delegated\)`, out, "types pippet implements are not delegated")
	assert.NotContains(t, describe("--list", "--fallback", "none"), "delegated")
	out = describe("--modulepath", testModules(t), "ini_key")
	assert.Contains(t, out, "Delegated to Puppet")
}

// TestDelegatePipelined: a stream written at once, delegated requests sent
// ahead to Puppet without waiting for each answer: every answer comes
// back in the order of the lines, each with its own id; a native request
// in the middle sees every delegated change before it (it is applied
// only after their answers), and so does a delegated one after it; bad
// lines in the middle are answered in their place.
func TestDelegatePipelined(t *testing.T) {
	needPuppet(t)
	dir := t.TempDir()
	ini := filepath.Join(dir, "app.ini")
	var in strings.Builder
	var want []string // per answer: the id
	id := 0
	line := func(typ, title string, params map[string]any) {
		id++
		b, err := json.Marshal(map[string]any{"type": typ, "title": title, "params": params, "id": id})
		require.NoError(t, err)
		in.Write(append(b, '\n'))
		want = append(want, strconv.Itoa(id))
	}
	for i := range 40 {
		line("ini_key", fmt.Sprintf("a/k%d", i), map[string]any{"path": ini, "value": strconv.Itoa(i)})
	}
	// Not JSON: answered in its place, with no id.
	in.WriteString("{\"type\":\"ini_key\",\"title\":\n\n")
	want = append(want, "")
	// Native, after the 40: it fails unless all of them are in the file.
	line("exec", "check", map[string]any{"command": "/bin/grep -q 'k39 = 39' " + ini})
	line("ini_key", "b/after", map[string]any{"path": ini, "value": "x", "colour": "red"}) // unknown parameter
	for i := range 40 {
		line("ini_key", fmt.Sprintf("b/k%d", i), map[string]any{"path": ini, "value": strconv.Itoa(i)})
	}
	// Native again: the second 40 are there.
	line("exec", "check2", map[string]any{"command": "/bin/grep -q 'k39 = 39' " + ini + " && test $(/bin/grep -c ' = ' " + ini + ") -eq 80"})

	out, errOut, code := run(t, dir, strings.NewReader(in.String()), "--fallback", "puppet", "--modulepath", testModules(t), "--no-banner", "--debug")
	require.Equal(t, 0, code, errOut)
	answers := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, answers, len(want), out)
	for i, a := range answers {
		var r protocol.Result
		require.NoError(t, protocol.DecodeResult([]byte(a), &r), a)
		require.Equal(t, want[i], string(r.ID), "answer %d: %s", i, a)
		switch {
		case i == 40:
			assert.True(t, r.Error, a)
		case i == 41:
			assert.Equal(t, "Exec[check]", r.Resource)
			assert.False(t, r.Failed, "the native request ran before every delegated change was made: %s", a)
		case i == 42:
			assert.True(t, r.Error, a)
			assert.Contains(t, r.Exception, "no parameter named 'colour'")
		case i == len(answers)-1:
			assert.Equal(t, "Exec[check2]", r.Resource)
			assert.False(t, r.Failed, a)
		default:
			assert.True(t, r.Changed && !r.Failed && !r.Error, a)
			assert.Contains(t, r.Resource, "Ini_key[")
		}
	}
	b, err := os.ReadFile(ini)
	require.NoError(t, err)
	assert.Equal(t, 80, strings.Count(string(b), " = "))
	assert.Equal(t, 1, strings.Count(errOut, "receiver started"), "one Puppet process:\n%s", errOut)
}

// iniStream is n ini_key requests (ids 0 to n-1) setting keys a/k0 ...
// of one new file, as one stream, and that file's path.
func iniStream(t *testing.T, n int) (ini string, stream []byte) {
	ini = filepath.Join(t.TempDir(), "app.ini")
	var in bytes.Buffer
	for i := range n {
		b, err := json.Marshal(map[string]any{"type": "ini_key", "title": fmt.Sprintf("a/k%d", i), "params": map[string]any{"path": ini, "value": strconv.Itoa(i)}, "id": i})
		require.NoError(t, err)
		in.Write(append(b, '\n'))
	}
	return ini, in.Bytes()
}

// TestDelegatePipelinedKill: the Puppet process killed in the middle of a
// stream sent ahead: every line is still answered, in order; the requests
// in flight are answered failed (receiver died: the one Puppet was
// applying may be applied, the others were never read), no more than a
// window's worth, and every request after them goes to a new process and
// succeeds; the receiver goes on and exits 0.
func TestDelegatePipelinedKill(t *testing.T) {
	needPuppet(t)
	const n = 300
	ini, in := iniStream(t, n)
	cmd, stdin, stdout, stderr := startReceiver(t, "--fallback", "puppet", "--modulepath", testModules(t), "--no-banner", "--debug")
	go func() {
		_, _ = stdin.Write(in)
		stdin.Close()
	}()
	answers := bufio.NewScanner(stdout)
	var failed []int
	for i := 0; i < n; i++ {
		require.True(t, answers.Scan(), "answer %d missing", i)
		var r protocol.Result
		require.NoError(t, protocol.DecodeResult(answers.Bytes(), &r), answers.Text())
		require.Equal(t, strconv.Itoa(i), string(r.ID), "answers out of order")
		if i == 50 {
			kids := children(t, cmd.Process.Pid)
			require.Len(t, kids, 1)
			require.NoError(t, syscall.Kill(kids[0], syscall.SIGKILL))
		}
		if r.Failed {
			assert.Contains(t, r.Exception, "receiver died", answers.Text())
			failed = append(failed, i)
		} else {
			assert.True(t, r.Changed, answers.Text())
		}
	}
	require.NoError(t, cmd.Wait(), stderr.String())
	require.NotEmpty(t, failed, "the kill cut no request in flight")
	assert.Less(t, len(failed), runner.PipelineWindow/64, "more failed than a window holds: %v", failed)
	assert.Equal(t, len(failed)-1, failed[len(failed)-1]-failed[0], "the failed requests are one run: %v", failed)
	assert.Less(t, failed[len(failed)-1], n-1, "requests after the failed ones went to a new process")
	b, err := os.ReadFile(ini)
	require.NoError(t, err)
	// Every request answered changed is in the file; one answered failed
	// may be too (applied, then killed before it answered).
	keys := strings.Count(string(b), " = ")
	assert.GreaterOrEqual(t, keys, n-len(failed))
	assert.LessOrEqual(t, keys, n-len(failed)+1)
	assert.Equal(t, 2, strings.Count(stderr.String(), "receiver started"), stderr.String())
}

// TestDelegatePipelinedTerm: SIGTERM in the middle of a stream sent
// ahead: the requests already sent to Puppet are finished and answered,
// in order, each one applied, nothing after them is applied, the
// receiver exits 0 and Puppet with it.
func TestDelegatePipelinedTerm(t *testing.T) {
	needPuppet(t)
	const n = 300
	ini, in := iniStream(t, n)
	cmd, stdin, stdout, stderr := startReceiver(t, "--fallback", "puppet", "--modulepath", testModules(t), "--no-banner")
	go func() {
		_, _ = stdin.Write(in)
		stdin.Close()
	}()
	answers := bufio.NewScanner(stdout)
	var bridge int
	got := 0
	for answers.Scan() {
		var r protocol.Result
		require.NoError(t, protocol.DecodeResult(answers.Bytes(), &r), answers.Text())
		require.Equal(t, strconv.Itoa(got), string(r.ID), "answers out of order")
		assert.True(t, r.Changed && !r.Failed, answers.Text())
		got++
		if got == 50 {
			kids := children(t, cmd.Process.Pid)
			require.Len(t, kids, 1)
			bridge = kids[0]
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		}
	}
	require.NoError(t, cmd.Wait(), stderr.String())
	assert.Greater(t, got, 50, "the requests sent ahead were answered")
	assert.Less(t, got, n, "the receiver stopped")
	b, err := os.ReadFile(ini)
	require.NoError(t, err)
	assert.Equal(t, got, strings.Count(string(b), " = "), "applied exactly what was answered")
	assert.Eventually(t, func() bool { return gone(bridge) }, 10*time.Second, 10*time.Millisecond, "Puppet stopped with the receiver")
}

// TestDelegateLongYAMLLine: a line within --max-line whose params, given
// as YAML, are longer once re-encoded as JSON for Puppet is still
// delegated and applied (Puppet's bridge reads lines of any length).
func TestDelegateLongYAMLLine(t *testing.T) {
	needPuppet(t)
	ini := filepath.Join(t.TempDir(), "app.ini")
	// The value fills the line to 190 bytes whatever the temp dir's
	// length: within --max-line 200 as YAML, over it as JSON.
	head, tail := "ini_key a/f {path: "+ini+", value: ", ", ensure: present}"
	pad := 190 - len(head) - len(tail)
	require.Greater(t, pad, 40, "the temp dir's path leaves room for the value")
	line := head + strings.Repeat("x", pad) + tail
	require.Less(t, len(line), 200)
	out, errOut, code := run(t, t.TempDir(), strings.NewReader(line+"\n"), "--fallback", "puppet", "--modulepath", testModules(t), "--no-banner", "--max-line", "200")
	require.Equal(t, 0, code, errOut)
	var r protocol.Result
	require.NoError(t, protocol.DecodeResult([]byte(out), &r), out)
	assert.True(t, r.Changed && !r.Error, out)
	b, err := os.ReadFile(ini)
	require.NoError(t, err)
	assert.Contains(t, string(b), "f = "+strings.Repeat("x", pad)+"\n")
}
