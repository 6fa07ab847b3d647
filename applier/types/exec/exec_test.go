package exec

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/engine"
	"github.com/pippet/pippet/applier/typetest"
	"github.com/pippet/pippet/internal/testutil"
	"github.com/pippet/pippet/protocol"
)

func newEngine(t *testing.T) (*engine.Engine, *testutil.SyncBuffer) {
	t.Helper()
	reg := applier.NewRegistry()
	reg.Add(Type)
	logs := &testutil.SyncBuffer{}
	env := &applier.Env{Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	return engine.New(reg, env), logs
}

func apply(t *testing.T, e *engine.Engine, title string, params map[string]any) protocol.Result {
	t.Helper()
	return e.Apply(context.Background(), &protocol.Request{Type: "exec", Title: title, Params: params})
}

func TestExtractExe(t *testing.T) {
	cases := []struct {
		cmd  any
		want string
	}{
		{"/bin/echo hi", "/bin/echo"},
		{`"/opt/my app/run" --x`, "/opt/my app/run"},
		{`'/opt/q/run' x`, "/opt/q/run"},
		{"true", "true"},
		{[]any{"/bin/echo", "a b"}, "/bin/echo"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, extractExe(tc.cmd), "%v", tc.cmd)
	}
}

func TestExecValidation(t *testing.T) {
	cases := []struct {
		name    string
		title   string
		params  map[string]any
		check   func(t *testing.T, r *applier.Resource)
		wantErr string
	}{
		{name: "defaults", title: "/bin/true", check: func(t *testing.T, r *applier.Resource) {
			assert.Equal(t, "/bin/true", r.Value("command"))
			assert.Equal(t, []any{int64(0)}, r.Value("returns"))
			assert.Equal(t, 300.0, r.Value("timeout"))
			assert.Equal(t, int64(1), r.Value("tries"))
			assert.Equal(t, 0.0, r.Value("try_sleep"))
			assert.Equal(t, "on_failure", r.Value("logoutput"))
			assert.Equal(t, "false", r.Value("refreshonly"))
		}},
		{name: "array command", title: "x", params: map[string]any{"command": []any{"/bin/echo", "a b", 3}},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, []any{"/bin/echo", "a b", "3"}, r.Value("command"))
			}},
		{name: "returns scalar and list", title: "/bin/true", params: map[string]any{"returns": []any{0, "3"}},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, []any{int64(0), int64(3)}, r.Value("returns"))
			}},
		{name: "path string split", title: "true", params: map[string]any{"path": "/usr/bin:/bin"},
			check: func(t *testing.T, r *applier.Resource) { assert.Equal(t, []any{"/usr/bin", "/bin"}, r.Value("path")) }},
		{name: "path array split", title: "true", params: map[string]any{"path": []any{"/usr/bin:/sbin", "/bin"}},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, []any{"/usr/bin", "/sbin", "/bin"}, r.Value("path"))
			}},
		{name: "timeout float", title: "/bin/true", params: map[string]any{"timeout": 1.5},
			check: func(t *testing.T, r *applier.Resource) { assert.Equal(t, 1.5, r.Value("timeout")) }},
		{name: "umask", title: "/bin/true", params: map[string]any{"umask": "0077"},
			check: func(t *testing.T, r *applier.Resource) { assert.Equal(t, int64(0o77), r.Value("umask")) }},
		{name: "onlyif list", title: "/bin/true", params: map[string]any{"onlyif": []any{"/bin/true", []any{"/bin/test", "-d", "/"}}},
			check: func(t *testing.T, r *applier.Resource) {
				assert.Equal(t, []any{"/bin/true", []any{"/bin/test", "-d", "/"}}, r.Value("onlyif"))
			}},
		{name: "unless string", title: "/bin/true", params: map[string]any{"unless": "/bin/false"},
			check: func(t *testing.T, r *applier.Resource) { assert.Equal(t, []any{"/bin/false"}, r.Value("unless")) }},
		{name: "shell provider needs no qualification", title: "echo hi", params: map[string]any{"provider": "shell"},
			check: func(t *testing.T, r *applier.Resource) { assert.Equal(t, "shell", r.Value("provider")) }},
		{name: "relative without path", title: "true",
			wantErr: "Validation of Exec[true] failed: 'true' is not qualified and no path was specified. Please qualify the command or specify a path."},
		{name: "relative onlyif without path", title: "/bin/true", params: map[string]any{"onlyif": "test -d /"},
			wantErr: "Parameter onlyif failed on Exec[/bin/true]: 'test' is not qualified"},
		{name: "bad returns", title: "/bin/true", params: map[string]any{"returns": "ok"},
			wantErr: "Parameter returns failed on Exec[/bin/true]: expected an integer, got 'ok'"},
		{name: "returns out of range", title: "/bin/true", params: map[string]any{"returns": 300},
			wantErr: "Parameter returns failed on Exec[/bin/true]: exit codes are between 0 and 255"},
		{name: "bad timeout", title: "/bin/true", params: map[string]any{"timeout": "abc"},
			wantErr: "Parameter timeout failed on Exec[/bin/true]: The timeout must be a number."},
		{name: "bad tries", title: "/bin/true", params: map[string]any{"tries": 0},
			wantErr: "Parameter tries failed on Exec[/bin/true]: Tries must be an integer >= 1"},
		{name: "negative try_sleep", title: "/bin/true", params: map[string]any{"try_sleep": -1},
			wantErr: "Parameter try_sleep failed on Exec[/bin/true]: try_sleep cannot be a negative number"},
		{name: "bad umask", title: "/bin/true", params: map[string]any{"umask": "0999"},
			wantErr: `Parameter umask failed on Exec[/bin/true]: The umask specification is invalid: "0999"`},
		{name: "umask as YAML integer", title: "/bin/true", params: map[string]any{"umask": int64(18)},
			wantErr: "Parameter umask failed on Exec[/bin/true]: The umask specification must be a string such as '0022', not 18"},
		{name: "bad environment", title: "/bin/true", params: map[string]any{"environment": []any{"A=1", "oops"}},
			wantErr: "Parameter environment failed on Exec[/bin/true]: Invalid environment setting 'oops'"},
		{name: "bad logoutput", title: "/bin/true", params: map[string]any{"logoutput": "sometimes"},
			wantErr: `Parameter logoutput failed on Exec[/bin/true]: Invalid value "sometimes". Valid values are true, false, on_failure.`},
		{name: "relative cwd", title: "/bin/true", params: map[string]any{"cwd": "tmp"},
			wantErr: "Parameter cwd failed on Exec[/bin/true]: File paths must be fully qualified, not 'tmp'"},
		{name: "relative creates", title: "/bin/true", params: map[string]any{"creates": []any{"/ok", "rel"}},
			wantErr: "Parameter creates failed on Exec[/bin/true]: File paths must be fully qualified, not 'rel'"},
		{name: "bad provider", title: "/bin/true", params: map[string]any{"provider": "windows"},
			wantErr: `Parameter provider failed on Exec[/bin/true]: Invalid value "windows". Valid values are posix, shell.`},
		{name: "hash command", title: "x", params: map[string]any{"command": map[string]any{"a": 1}},
			wantErr: "Parameter command failed on Exec[x]: Command must be a String or Array<String>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Type.NewResource(tc.title, tc.params, false)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, r)
		})
	}
}

func TestExecRuns(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	existing := filepath.Join(dir, "existing")
	require.NoError(t, os.WriteFile(existing, nil, 0o644))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))

	cases := []struct {
		name      string
		title     string
		params    map[string]any
		changed   bool
		failed    bool
		exception string // substring
		logged    string // substring of the logs
		notLogged string
		file      string // expected content of log afterwards ("" : no file)
	}{
		{name: "basic", title: "/bin/sh -c 'echo ran >> " + log + "'", changed: true, file: "ran\n",
			logged: "/returns: executed successfully"},
		{name: "creates existing", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"creates": existing}},
		{name: "creates missing", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"creates": []any{log + ".x", log + ".y"}},
			changed: true, file: "ran\n"},
		{name: "onlyif false", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"onlyif": "/bin/false"}},
		{name: "onlyif all must pass", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"onlyif": []any{"/bin/true", "/bin/false"}}},
		{name: "onlyif true", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"onlyif": []any{"/bin/true", []any{"/bin/test", "-d", dir}}},
			changed: true, file: "ran\n"},
		{name: "unless true", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"unless": "/bin/true"}},
		{name: "unless false", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"unless": "/bin/false"},
			changed: true, file: "ran\n"},
		{name: "refreshonly waits for a refresh", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"refreshonly": true}},
		{name: "returns accepted", title: "/bin/sh -c 'exit 3'", params: map[string]any{"returns": []any{0, 3}}, changed: true},
		{name: "returns refused", title: "/bin/sh -c 'echo first; echo oops; exit 3'", failed: true,
			exception: "change from 'notrun' to ['0'] failed: '/bin/sh -c 'echo first; echo oops; exit 3'' returned 3 instead of one of [0]; last output:\nfirst\noops",
			logged:    "/returns: oops"},
		{name: "false fails", title: "/bin/false", failed: true, exception: "returned 1 instead of one of [0]"},
		{name: "missing binary", title: "/nonexistent/bin", failed: true, exception: "Could not find command '/nonexistent/bin'"},
		{name: "directory is not a command", title: dir, failed: true, exception: "is a directory, not a file"},
		{name: "missing binary in shell string", title: "/nonexistent/bin > /dev/null", failed: true, exception: "Could not find command '/nonexistent/bin'"},
		{name: "relative with path", title: "touch " + log, params: map[string]any{"path": "/nonexistent:/usr/bin:/bin"}, changed: true, file: ""},
		{name: "relative not found in path", title: "no-such-tool-xyz", params: map[string]any{"path": "/usr/bin:/bin"}, failed: true,
			exception: "Could not find command 'no-such-tool-xyz'"},
		{name: "posix splits without a shell", title: "/bin/echo a  b", params: map[string]any{"logoutput": true}, changed: true,
			logged: "/returns: a b"},
		{name: "posix uses a shell for metacharacters", title: "/bin/echo $((1+2))", params: map[string]any{"logoutput": true}, changed: true,
			logged: "/returns: 3"},
		{name: "array command has no shell", title: "x", params: map[string]any{"command": []any{"/bin/echo", "$HOME;", "a  b"}, "logoutput": true},
			changed: true, logged: "/returns: $HOME; a  b"},
		{name: "shell provider", title: "echo shell >> " + log, params: map[string]any{"provider": "shell"}, changed: true, file: "shell\n"},
		{name: "cwd", title: "/bin/sh -c 'pwd >> " + log + "'", params: map[string]any{"cwd": sub}, changed: true, file: sub + "\n"},
		{name: "missing cwd", title: "/bin/true", params: map[string]any{"cwd": filepath.Join(dir, "nope")}, failed: true,
			exception: "Working directory " + filepath.Join(dir, "nope") + " does not exist!"},
		{name: "environment", title: "/bin/sh -c 'echo \"$FOO|$BAR|${HOME:-nohome}\" >> " + log + "'",
			params: map[string]any{"environment": []any{"FOO=1", "BAR=x=y"}}, changed: true, file: "1|x=y|nohome\n"},
		{name: "environment single string", title: "/bin/sh -c 'echo $FOO >> " + log + "'",
			params: map[string]any{"environment": "FOO=one"}, changed: true, file: "one\n"},
		{name: "environment PATH overrides path", title: "/bin/sh -c 'echo $PATH >> " + log + "'",
			params: map[string]any{"path": "/bin", "environment": "PATH=/custom"}, changed: true, file: "/custom\n"},
		{name: "logoutput false", title: "/bin/sh -c 'echo hidden; exit 1'", params: map[string]any{"logoutput": false}, failed: true,
			notLogged: "/returns: hidden"},
		{name: "logoutput on_failure, success", title: "/bin/sh -c 'echo quiet'", changed: true, notLogged: "/returns: quiet"},
		{name: "stderr is captured", title: "/bin/sh -c 'echo to-stderr >&2; exit 2'", failed: true, exception: "to-stderr"},
		{name: "tries", title: "/bin/sh -c 'echo x >> " + log + "; test $(wc -l < " + log + ") -ge 3'",
			params: map[string]any{"tries": 4, "try_sleep": 0.01}, changed: true, file: "x\nx\nx\n"},
		{name: "tries exhausted", title: "/bin/sh -c 'echo x >> " + log + "; exit 1'",
			params: map[string]any{"tries": 2}, failed: true, file: "x\nx\n"},
		{name: "check exceeding the timeout means not run", title: "/bin/sh -c 'echo ran >> " + log + "'",
			params: map[string]any{"onlyif": "/bin/sleep 5", "timeout": 0.3}, logged: "check '/bin/sleep 5' exceeded timeout"},
		{name: "missing check command fails the evaluation", title: "/bin/sh -c 'echo ran >> " + log + "'",
			params: map[string]any{"unless": "/nonexistent/check"}, failed: true,
			exception: "Could not evaluate Exec[/bin/sh -c 'echo ran >> " + log + "']: check unless '/nonexistent/check': Could not find command '/nonexistent/check'"},
		{name: "checks use path", title: "/bin/sh -c 'echo ran >> " + log + "'",
			params: map[string]any{"onlyif": "test -d /", "path": []any{"/usr/bin", "/bin"}}, changed: true, file: "ran\n"},
		{name: "a timeout ends the tries", title: "/bin/sh -c 'echo x >> " + log + "; sleep 5'",
			params: map[string]any{"tries": 3, "timeout": 0.3}, failed: true, exception: "Command exceeded timeout", file: "x\n"},
		{name: "noop runs checks only", title: "/bin/sh -c 'echo ran >> " + log + "'", params: map[string]any{"noop": true, "onlyif": "/bin/true"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(log))
			e, logs := newEngine(t)
			res := apply(t, e, tc.title, tc.params)
			assert.False(t, res.Error, res.Exception)
			assert.Equal(t, tc.changed, res.Changed, "changed")
			assert.Equal(t, tc.failed, res.Failed, "failed: %s", res.Exception)
			if tc.exception != "" {
				assert.Contains(t, res.Exception, tc.exception)
			}
			if tc.logged != "" {
				assert.Contains(t, logs.String(), tc.logged)
			}
			if tc.notLogged != "" {
				assert.NotContains(t, logs.String(), tc.notLogged)
			}
			got, err := os.ReadFile(log)
			if tc.file == "" && !strings.HasPrefix(tc.title, "touch") {
				assert.True(t, os.IsNotExist(err), "no file expected, got %q", got)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.file, string(got))
			}
		})
	}
}

func TestExecNoopEvent(t *testing.T) {
	e, _ := newEngine(t)
	res := apply(t, e, "/bin/true", map[string]any{"noop": true})
	assert.Equal(t, protocol.Result{Resource: "Exec[/bin/true]", Noop: true, Events: []protocol.Event{{
		Property: "returns", Previous: "notrun", Desired: []any{int64(0)},
		Message: "current_value 'notrun', should be ['0'] (noop)", Status: "noop"}}}, res)
	res = apply(t, e, "/bin/true", nil)
	assert.Equal(t, []protocol.Event{{Property: "returns", Previous: "notrun", Desired: []any{int64(0)},
		Message: "executed successfully", Status: "success"}}, res.Events)
}

func TestExecUmask(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		umask string
		mode  os.FileMode
	}{{"0077", 0o600}, {"022", 0o644}, {"0", 0o666}} {
		f := filepath.Join(dir, "f"+tc.umask)
		e, _ := newEngine(t)
		res := apply(t, e, "/usr/bin/touch "+f, map[string]any{"umask": tc.umask})
		require.True(t, res.Changed, res.Exception)
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, tc.mode, fi.Mode().Perm(), tc.umask)
	}
	// The receiver's own umask is untouched.
	old := syscall.Umask(0o022)
	syscall.Umask(old)
	assert.NotEqual(t, 0o077, old)
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	// A grandchild that ignores SIGTERM: only the SIGKILL to the group gets it.
	cmd := "/bin/sh -c '/bin/sh -c \"trap \\\"\\\" TERM; echo \\$\\$ > " + pidfile + "; exec /bin/sleep 30\" & wait'"
	e, _ := newEngine(t)
	start := time.Now()
	res := apply(t, e, cmd, map[string]any{"timeout": 0.5})
	elapsed := time.Since(start)
	assert.True(t, res.Failed)
	assert.False(t, res.Error)
	assert.Contains(t, res.Exception, "Command exceeded timeout")
	assert.Less(t, elapsed, 5*time.Second)
	b, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return !alive(pid) }, 3*time.Second, 20*time.Millisecond, "grandchild %d survived", pid)
}

func TestExecTimeoutSimple(t *testing.T) {
	e, _ := newEngine(t)
	start := time.Now()
	res := apply(t, e, "/bin/sleep 5", map[string]any{"timeout": 1})
	assert.True(t, res.Failed)
	assert.Contains(t, res.Exception, "change from 'notrun' to ['0'] failed: Command exceeded timeout")
	assert.Less(t, time.Since(start), 3*time.Second)
}

func TestExecContextCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	e, _ := newEngine(t)
	// Cancel once the grandchild exists (a fixed deadline could fire before
	// a loaded machine has even started the shell).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if b, err := os.ReadFile(pidfile); err == nil && strings.HasSuffix(string(b), "\n") {
				cancel()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res := e.Apply(ctx, &protocol.Request{Type: "exec", Title: "/bin/sh -c '/bin/sleep 30 & echo $! > " + pidfile + "; wait'"})
	assert.True(t, res.Failed)
	assert.Contains(t, res.Exception, "cancelled")
	assert.Less(t, time.Since(start), 10*time.Second, "the sleep was not waited for")
	b, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	assert.Eventually(t, func() bool { return !alive(pid) }, 3*time.Second, 20*time.Millisecond)
}

func TestExecBackgroundChildDoesNotBlock(t *testing.T) {
	e, _ := newEngine(t)
	start := time.Now()
	res := apply(t, e, "/bin/sh -c '/bin/sleep 3 & echo started'", map[string]any{"logoutput": true})
	assert.True(t, res.Changed, res.Exception)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestExecOutputBounded(t *testing.T) {
	e, logs := newEngine(t)
	// 200 KiB of output, then a marker: only the tail is kept.
	res := apply(t, e, "/bin/sh -c 'head -c 204800 /dev/zero | tr \"\\\\0\" a; echo; echo END; exit 1'", nil)
	require.True(t, res.Failed)
	assert.Contains(t, res.Exception, "END")
	assert.Less(t, len(logs.String()), 80<<10, "logged output is bounded")
}

func TestExecUserGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create an account and run as it")
	}
	if _, err := osexec.LookPath("useradd"); err != nil {
		t.Skip("useradd not available")
	}
	name := fmt.Sprintf("pippet%d", os.Getpid()%100000)
	out, err := osexec.Command("useradd", "--no-create-home", "--user-group", name).CombinedOutput()
	require.NoError(t, err, string(out))
	t.Cleanup(func() { _ = osexec.Command("userdel", name).Run() })
	uidOut, err := osexec.Command("id", "-u", name).Output()
	require.NoError(t, err)
	uid := strings.TrimSpace(string(uidOut))

	cases := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"by name", map[string]any{"user": name}, uid + ":" + uid},
		{"by id", map[string]any{"user": uid}, uid + ":" + uid},
		{"group only", map[string]any{"group": name}, "0:" + uid},
		{"user and group", map[string]any{"user": name, "group": "root"}, uid + ":0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, logs := newEngine(t)
			tc.params["logoutput"] = true
			tc.params["cwd"] = "/"
			res := apply(t, e, "/bin/sh -c 'echo id=$(id -u):$(id -g)'", tc.params)
			require.True(t, res.Changed, res.Exception)
			assert.Contains(t, logs.String(), "/returns: id="+tc.want)
		})
	}
	e, _ := newEngine(t)
	for _, params := range []map[string]any{{"user": "no-such-user-xyz"}, {"group": "no-such-user-xyz"}} {
		res := apply(t, e, "/bin/true", params)
		assert.False(t, res.Error)
		assert.True(t, res.Failed)
		assert.Contains(t, res.Exception, "no such ")
		assert.Contains(t, res.Exception, " 'no-such-user-xyz'")
	}
}

func TestExecNotRootCannotSwitchUser(t *testing.T) {
	reg := applier.NewRegistry()
	reg.Add(Type)
	e := engine.New(reg, &applier.Env{Features: map[string]bool{"posix": true}})
	res := e.Apply(context.Background(), &protocol.Request{Type: "exec", Title: "/bin/true", Params: map[string]any{"user": "nobody"}})
	if os.Geteuid() == 65534 {
		t.Skip("running as nobody")
	}
	assert.Equal(t, protocol.ErrorResult("Exec[/bin/true]", "Parameter user failed on Exec[/bin/true]: Only root can execute commands as other users"), res)
}

// A command that runs may have changed anything cached (a useradd moves
// what an owner name means): the process cache is cleared; an exec that
// does not run (creates exists) leaves it.
func TestExecRunClearsCache(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "m")
	require.NoError(t, os.WriteFile(marker, nil, 0o644))
	e, _ := newEngine(t)
	cache := e.Env().Cache

	cache.Put("file:uid:alice", 1001)
	res := apply(t, e, "/bin/true", map[string]any{"creates": marker})
	require.False(t, res.Changed)
	_, ok := cache.Get("file:uid:alice")
	assert.True(t, ok, "an exec that did not run keeps the cache")

	res = apply(t, e, "/bin/true", nil)
	require.True(t, res.Changed, res.Exception)
	_, ok = cache.Get("file:uid:alice")
	assert.False(t, ok, "an exec that ran clears the cache")
}

// A refresh (the request's "refresh": true) runs a refreshonly command,
// subject to its other checks (held back by them, it is still a refresh
// event, as Puppet reports it); without one it never runs. A command that
// is not refreshonly runs for its own change and again for the refresh,
// as in Puppet.
func TestExecRefresh(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	e := typetest.New(t, []*applier.Type{Type})
	line := func(params string, refresh bool) string {
		return fmt.Sprintf(`{"type":"exec","title":"/bin/sh -c 'echo ran >> %s'","params":%q,"refresh":%t}`, log, params, refresh)
	}
	ran := func() string { b, _ := os.ReadFile(log); return string(b) }

	assert.Equal(t, "unchanged", typetest.Summary(e.ApplyLine(line("{refreshonly: true}", false))))
	assert.Equal(t, "", ran())
	res := e.ApplyLine(line("{refreshonly: true}", true))
	assert.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "refresh: Triggered 'refresh' from 1 event (executed successfully) (success)\n", typetest.Events(res))
	assert.Equal(t, "ran\n", ran())
	// The other checks still hold the command back; the refresh happened
	// all the same, as Puppet reports it (Triggered 'refresh' from 1 event).
	for _, checks := range []string{"unless: /bin/true", "onlyif: /bin/false", "creates: " + dir} {
		res = e.ApplyLine(line("{refreshonly: true, "+checks+"}", true))
		assert.Equal(t, "changed", typetest.Summary(res), checks)
		assert.Equal(t, "refresh: Triggered 'refresh' from 1 event (not run: its checks hold) (success)\n", typetest.Events(res), checks)
		res = e.ApplyLine(line("{"+checks+"}", true))
		assert.Equal(t, "changed", typetest.Summary(res), checks)
		assert.Equal(t, "refresh: Triggered 'refresh' from 1 event (not run: its checks hold) (success)\n", typetest.Events(res), checks)
	}
	assert.Equal(t, "ran\n", ran(), "held back by its checks")
	res = e.ApplyLine(line("{refreshonly: true, noop: true}", true))
	assert.Equal(t, "refresh: Would have triggered 'refresh' from 1 event (noop)\n", typetest.Events(res))
	assert.Equal(t, "ran\n", ran())
	res = e.ApplyLine(line("{}", true))
	assert.Equal(t, "changed", typetest.Summary(res))
	assert.Equal(t, "ran\nran\nran\n", ran(), "its own run, then the refresh's")
	res = e.ApplyLine(`{"type":"exec","title":"/bin/false","params":"{refreshonly: true}","refresh":true}`)
	assert.Equal(t, "failed: '/bin/false' returned 1 instead of one of [0]", typetest.Summary(res))
}
