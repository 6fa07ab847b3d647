package service_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/types/service"
	"github.com/pippet/pippet/applier/typetest"
)

func engine(t *testing.T) *typetest.Engine {
	return typetest.New(t, []*applier.Type{service.Type})
}

// scripts writes start, stop, status and restart commands that keep a pid
// file and a log, as the oracle's cases do.
func scripts(t *testing.T) (dir string) {
	dir = t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	write("start", "echo start >> "+dir+"/log\ntouch "+dir+"/pid\n")
	write("stop", "echo stop >> "+dir+"/log\nrm -f "+dir+"/pid\n")
	write("restart", "echo restart >> "+dir+"/log\ntouch "+dir+"/pid\n")
	write("status", "test -e "+dir+"/pid\n")
	return dir
}

func logOf(t *testing.T, dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "log"))
	return string(b)
}

func TestBaseCommands(t *testing.T) {
	dir := scripts(t)
	e := engine(t)
	cmds := fmt.Sprintf("provider: base, start: %[1]s/start, stop: %[1]s/stop, status: %[1]s/status", dir)
	steps := []struct {
		params, want, log string
	}{
		{"{ensure: running, " + cmds + "}", "changed", "start\n"},
		{"{ensure: running, " + cmds + "}", "unchanged", "start\n"},
		{"{ensure: true, " + cmds + "}", "unchanged", "start\n"},
		{"{ensure: stopped, " + cmds + "}", "changed", "start\nstop\n"},
		{"{ensure: false, " + cmds + "}", "unchanged", "start\nstop\n"},
		{"{" + cmds + "}", "unchanged", "start\nstop\n"},
		// A refresh of a stopped service does nothing.
		{"{" + cmds + ", restart: " + dir + "/restart}", "unchanged", "start\nstop\n"},
	}
	for i, s := range steps {
		res := e.Apply("service", "pipsvc", s.params)
		assert.Equal(t, s.want, typetest.Summary(res), "step %d: %s", i, typetest.Events(res))
		assert.Equal(t, s.log, logOf(t, dir), "step %d", i)
	}
}

func TestBaseFailures(t *testing.T) {
	dir := scripts(t)
	e := engine(t)
	res := e.Apply("service", "pipsvc", "{ensure: running, provider: base, start: /bin/false, status: "+dir+"/status}")
	assert.Equal(t, "failed: change from 'stopped' to 'running' failed: Could not start Service[pipsvc]: Execution of '/bin/false' returned 1", typetest.Summary(res))
	res = e.Apply("service", "pipsvc", "{ensure: running, provider: base, status: "+dir+"/status}")
	assert.Equal(t, "failed: change from 'stopped' to 'running' failed: Services must specify a start command or a binary", typetest.Summary(res))
	res = e.Apply("service", "pipsvc", "{ensure: running, provider: base, pattern: '(unclosed'}")
	assert.True(t, res.Error)
	assert.Contains(t, res.Exception, "Parameter pattern failed on Service[pipsvc]: invalid regular expression")
	res = e.Apply("service", "pipsvc", "{ensure: sideways}")
	assert.Equal(t, `error: Parameter ensure failed on Service[pipsvc]: Invalid value "sideways". Valid values are stopped, running.`, typetest.Summary(res))
	// A name is a name, never a path or an option (Puppet would run
	// /etc/init.d/../../tmp/x).
	for _, name := range []string{"../../bin/true", "x/../../tmp/evil", "..", "--root=/tmp"} {
		for _, prov := range []string{"debian", "systemd", "base"} {
			res = e.Apply("service", name, "{ensure: running, provider: "+prov+"}")
			assert.Equal(t, `error: Parameter name failed on Service[`+name+`]: Invalid service name "`+name+`": it must not contain '/' or start with '-'`, typetest.Summary(res), prov)
		}
	}
	res = e.Apply("service", "pipsvc", "{timeout: 0}")
	assert.True(t, res.Error)
	// base cannot enable: the attribute is left alone, as Puppet leaves it.
	res = e.Apply("service", "pipsvc", "{enable: true, provider: base, status: "+dir+"/status}")
	assert.Equal(t, "unchanged", typetest.Summary(res))
	assert.Contains(t, e.Log(), "Provider base does not support features enableable; not managing attribute enable")
}

// A daemon found by its pattern in the process table, started from its
// binary, stopped by killing the process found.
func TestBasePatternAndBinary(t *testing.T) {
	marker := fmt.Sprintf("pipsvc-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := t.TempDir()
	daemon := filepath.Join(dir, "daemon")
	require.NoError(t, os.WriteFile(daemon, []byte("#!/bin/sh\nnohup sh -c 'while :; do sleep 1; done' "+marker+" >/dev/null 2>&1 &\n"), 0o755))
	t.Cleanup(func() { _ = exec.Command("pkill", "-f", marker).Run() })
	e := engine(t)
	params := fmt.Sprintf("{ensure: running, provider: base, binary: %s, pattern: %s}", daemon, marker)
	res := e.Apply("service", "pipsvc", params)
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	require.Eventually(t, func() bool { return exec.Command("pgrep", "-f", marker).Run() == nil }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("service", "pipsvc", params)))

	res = e.Apply("service", "pipsvc", strings.Replace(params, "running", "stopped", 1))
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Eventually(t, func() bool { return exec.Command("pgrep", "-f", marker).Run() != nil }, 10*time.Second, 20*time.Millisecond)
}

// initScript installs a real LSB init script into /etc/init.d that runs a
// daemon under start-stop-daemon, and removes it (and its rc links) after.
func initScript(t *testing.T) (name, pidfile, log string) {
	t.Helper()
	return initScriptStop(t, "", "start-stop-daemon --stop --quiet --oknodo --remove-pidfile --pidfile $PID --retry 5")
}

// initScriptStop is initScript with a name suffix and the stop action's
// command of one's own.
func initScriptStop(t *testing.T, suffix, stop string) (name, pidfile, log string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("installs an init script into /etc/init.d: needs root")
	}
	for _, c := range []string{"start-stop-daemon", "update-rc.d", "invoke-rc.d", "service"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s is missing (Debian's init-system-helpers and dpkg provide it)", c)
		}
	}
	name = fmt.Sprintf("pipsvc%d%s", os.Getpid()%100000, suffix)
	dir := t.TempDir()
	pidfile = filepath.Join(dir, "pid")
	log = filepath.Join(dir, "log")
	body := `#!/bin/sh
### BEGIN INIT INFO
# Provides:          ` + name + `
# Required-Start:
# Required-Stop:
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: pippet test daemon
### END INIT INFO
PID=` + pidfile + `
case "$1" in
start) echo start >> ` + log + `; start-stop-daemon --start --quiet --background --make-pidfile --pidfile $PID --exec /bin/sleep -- 600 ;;
stop) echo stop >> ` + log + `; ` + stop + ` ;;
restart) echo restart >> ` + log + `; $0 stop; $0 start ;;
status) start-stop-daemon --status --pidfile $PID ;;
*) exit 3 ;;
esac
`
	script := filepath.Join("/etc/init.d", name)
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	t.Cleanup(func() {
		_ = exec.Command("start-stop-daemon", "--stop", "--quiet", "--oknodo", "--remove-pidfile", "--pidfile", pidfile, "--retry", "5").Run()
		_ = exec.Command("update-rc.d", "-f", name, "remove").Run()
		_ = os.Remove(script)
	})
	return name, pidfile, log
}

func TestDebianInitScript(t *testing.T) {
	name, pidfile, log := initScript(t)
	e := engine(t)
	res := e.Apply("service", name, "{ensure: running, enable: true}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "ensure: started (success)\nenable: enable changed 'false' to 'true' (success)\n", typetest.Events(res),
		"ensure brings enable along, as in Puppet")
	assert.FileExists(t, pidfile)
	links, _ := filepath.Glob("/etc/rc*.d/S??" + name)
	assert.GreaterOrEqual(t, len(links), 4, "update-rc.d made the start links")
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("service", name, "{ensure: running, enable: true}")))

	// A refresh restarts a running service.
	pid1, _ := os.ReadFile(pidfile)
	res = e.ApplyLine(`{"type":"service","title":"` + name + `","params":"{ensure: running}","refresh":true}`)
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "refresh: Triggered 'refresh' from 1 event (restarted) (success)\n", typetest.Events(res))
	pid2, _ := os.ReadFile(pidfile)
	assert.NotEqual(t, string(pid1), string(pid2), "a new process")
	b, _ := os.ReadFile(log)
	assert.Equal(t, "start\nstop\nstart\n", string(b), "without hasrestart: stop, then start")

	res = e.ApplyLine(`{"type":"service","title":"` + name + `","params":"{hasrestart: true}","refresh":true}`)
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	b, _ = os.ReadFile(log)
	assert.True(t, strings.HasPrefix(string(b), "start\nstop\nstart\nrestart\n"), "%s", b)

	res = e.Apply("service", name, "{ensure: stopped, enable: false}")
	require.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.NoFileExists(t, pidfile)
	assert.Equal(t, "unchanged", typetest.Summary(e.Apply("service", name, "{ensure: stopped, enable: false}")))
	res = e.ApplyLine(`{"type":"service","title":"` + name + `","params":"{}","refresh":true}`)
	// Not restarted, but the refresh is Puppet's event all the same.
	assert.Equal(t, "changed", typetest.Summary(res), "a stopped service is not restarted")
	assert.Equal(t, "refresh: Triggered 'refresh' from 1 event (restart skipped: not running) (success)\n", typetest.Events(res))
	assert.NoFileExists(t, pidfile, "a stopped service is not restarted")
	res = e.ApplyLine(`{"type":"service","title":"` + name + `","params":"{ensure: stopped}","refresh":true}`)
	assert.Equal(t, "refresh: Triggered 'refresh' from 1 event (restart skipped: not running) (success)\n", typetest.Events(res))
	assert.NoFileExists(t, pidfile, "a service to be stopped is not restarted")

	// A refresh that also starts the service does not restart it after.
	res = e.ApplyLine(`{"type":"service","title":"` + name + `","params":"{ensure: running}","refresh":true}`)
	assert.Equal(t, "ensure: started (success)\n", typetest.Events(res))

	res = e.Apply("service", name, "{enable: mask}")
	assert.Equal(t, "failed: change from 'false' to 'mask' failed: Provider debian must have features 'maskable' to set 'enable' to 'mask'",
		strings.Replace(typetest.Summary(res), "'true'", "'false'", 1))
}

// An init script whose stop exits 0 but leaves the daemon running: the
// status is checked after the stop and the answer is the truth, a failure
// saying so (Puppet answers "stopped", changed, and the daemon runs on). A
// stop that works but whose daemon takes a moment to go is no failure.
func TestDebianStopThatDoesNotStop(t *testing.T) {
	name, pidfile, _ := initScriptStop(t, "x", "exit 0")
	e := engine(t)
	require.Equal(t, "changed", typetest.Summary(e.Apply("service", name, "{ensure: running}")), e.Log())
	pid, err := os.ReadFile(pidfile)
	require.NoError(t, err)

	res := e.Apply("service", name, "{ensure: stopped}")
	assert.Equal(t, "failed: change from 'running' to 'stopped' failed: Could not stop Service["+name+"]: '/etc/init.d/"+name+
		" stop' exited 0 but the service is still running ('/usr/sbin/service "+name+" status' exits 0 after 5s)", typetest.Summary(res), e.Log())
	assert.NoError(t, exec.Command("kill", "-0", strings.TrimSpace(string(pid))).Run(), "the daemon runs on")

	// A stop that signals and returns at once, the daemon going a moment
	// later: stopped.
	slow, slowPid, _ := initScriptStop(t, "y", "start-stop-daemon --stop --quiet --oknodo --pidfile $PID --signal CONT; (sleep 1; start-stop-daemon --stop --quiet --oknodo --remove-pidfile --pidfile $PID) >/dev/null 2>&1 &")
	require.Equal(t, "changed", typetest.Summary(e.Apply("service", slow, "{ensure: running}")), e.Log())
	require.FileExists(t, slowPid)
	res = e.Apply("service", slow, "{ensure: stopped}")
	assert.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Equal(t, "ensure: stopped (success)\n", typetest.Events(res))
	assert.NoFileExists(t, slowPid)
}

func TestDebianMissingScript(t *testing.T) {
	e := engine(t)
	res := e.Apply("service", "pipsvc-none", "{ensure: running, provider: debian, path: "+t.TempDir()+", hasstatus: false}")
	assert.Equal(t, "failed: change from 'stopped' to 'running' failed: Could not find init script for 'pipsvc-none'", typetest.Summary(res))
}

// The systemd provider against a stand-in for systemctl (testdata/
// systemctl): PID 1 is not systemd on the machines these tests run on, so
// no real systemctl can answer. The stand-in keeps unit state in files and
// answers with systemctl's own output and exit codes.
func TestSystemd(t *testing.T) {
	dir := t.TempDir()
	comm := filepath.Join(dir, "comm")
	require.NoError(t, os.WriteFile(comm, []byte("systemd\n"), 0o644))
	ctl, err := filepath.Abs("testdata/systemctl")
	require.NoError(t, err)
	service.FakeSystemd(t, comm, ctl)
	t.Setenv("SYSTEMCTL_STATE", dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pipd.service.exists"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "static.service.exists"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "static.service.enabled"), []byte("static\n"), 0o644))

	e := engine(t)
	calls := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "calls"))
		os.Remove(filepath.Join(dir, "calls"))
		return string(b)
	}
	steps := []struct {
		title, params, want, events, calls string
	}{
		{"pipd", "{ensure: running, enable: true}", "changed",
			"ensure: started (success)\nenable: enable changed 'false' to 'true' (success)\n",
			"is-active -- pipd\nis-enabled -- pipd\nunmask -- pipd\nshow --property=NeedDaemonReload -- pipd\nstart -- pipd\nunmask -- pipd\nenable -- pipd\n"},
		{"pipd", "{ensure: running, enable: true}", "unchanged", "", "is-active -- pipd\nis-enabled -- pipd\n"},
		{"pipd", "{ensure: running, enable: mask}", "changed", "enable: enable changed 'true' to 'mask' (success)\n",
			"is-active -- pipd\nis-enabled -- pipd\ncat -- pipd\ndisable -- pipd\nmask -- pipd\n"},
		{"pipd", "{ensure: running, enable: mask}", "unchanged", "", "is-active -- pipd\nis-enabled -- pipd\n"},
		{"pipd", "{ensure: stopped}", "changed", "ensure: stopped (success)\n",
			"is-active -- pipd\nstop -- pipd\nis-active -- pipd\n"}, // the status checked after the stop
		{"static", "{enable: false}", "unchanged", "", "is-active -- static\nis-enabled -- static\n"},
	}
	for i, s := range steps {
		res := e.Apply("service", s.title, s.params)
		assert.Equal(t, s.want, typetest.Summary(res), "step %d: %s", i, e.Log())
		assert.Equal(t, s.events, typetest.Events(res), "step %d", i)
		assert.Equal(t, s.calls, calls(), "step %d", i)
	}
	// A refresh of a running unit is systemctl restart.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pipd.service.active"), nil, 0o644))
	res := e.ApplyLine(`{"type":"service","title":"pipd","params":"{}","refresh":true}`)
	assert.Equal(t, "changed", typetest.Summary(res), e.Log())
	assert.Contains(t, calls(), "restart -- pipd\n")
}
