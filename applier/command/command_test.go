package command_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/command"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		cmd   command.Cmd
		code  int
		out   string
		trunc bool
	}{
		{name: "exit status", cmd: command.Cmd{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}}, code: 3, out: "out\nerr\n"},
		{name: "stdin", cmd: command.Cmd{Argv: []string{"cat"}, Stdin: []byte("fed\n")}, out: "fed\n"},
		{name: "no stdin is /dev/null", cmd: command.Cmd{Argv: []string{"cat"}}, out: ""},
		{name: "env replaces", cmd: command.Cmd{Argv: []string{"/bin/sh", "-c", "echo $A:$HOME"}, Env: []string{"A=1"}}, out: "1:\n"},
		{name: "dir", cmd: command.Cmd{Argv: []string{"pwd"}, Dir: "/"}, out: "/\n"},
		{name: "output bounded to its tail", cmd: command.Cmd{Argv: []string{"sh", "-c", "yes x | head -c 100000; echo END"}, MaxOutput: 10}, out: "\nx\nx\nx\nEND\n"[1:], trunc: true},
		{name: "killed by signal", cmd: command.Cmd{Argv: []string{"sh", "-c", "kill -9 $$"}}, code: 128 + 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := command.Run(ctx, &c.cmd)
			require.NoError(t, err)
			assert.Equal(t, c.code, res.Code)
			assert.Equal(t, c.out, string(res.Output))
			assert.Equal(t, c.trunc, res.Truncated)
		})
	}
}

func TestRunStdoutApart(t *testing.T) {
	var stdout bytes.Buffer
	res, err := command.Run(context.Background(), &command.Cmd{Argv: []string{"sh", "-c", "echo listing; echo warning >&2"}, Stdout: &stdout})
	require.NoError(t, err)
	assert.Equal(t, "listing\n", stdout.String())
	assert.Equal(t, "warning\n", string(res.Output))
}

func TestCheckWording(t *testing.T) {
	_, err := command.Exec(context.Background(), "sh", "-c", "echo one; echo 'two lines' >&2; exit 9")
	var ee *command.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 9, ee.Code)
	assert.Equal(t, "Execution of 'sh -c echo one; echo 'two lines' >&2; exit 9' returned 9: one\ntwo lines", err.Error())

	_, err = command.Exec(context.Background(), "no-such-command-pippet")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "could not find command 'no-such-command-pippet'")

	out, err := command.Exec(context.Background(), "echo", "ok")
	require.NoError(t, err)
	assert.Equal(t, "ok\n", out)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// startGroup runs a command whose grandchild writes its pid and ignores
// SIGTERM, and returns once the grandchild's pid is known.
func grandchildScript(t *testing.T) (script, pidFile string) {
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "pid")
	return `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; sleep 60' & wait`, pidFile
}

func waitPid(t *testing.T, pidFile string) int {
	t.Helper()
	for i := 0; i < 500; i++ {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the grandchild never wrote its pid")
	return 0
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	script, pidFile := grandchildScript(t)
	done := make(chan struct{})
	var res command.Result
	var err error
	go func() {
		defer close(done)
		res, err = command.Run(context.Background(), &command.Cmd{Argv: []string{"sh", "-c", script}, Timeout: 300 * time.Millisecond})
	}()
	pid := waitPid(t, pidFile)
	<-done
	require.ErrorIs(t, err, command.ErrTimeout)
	assert.NotZero(t, res.Code)
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	assert.False(t, alive(pid), "the grandchild that ignored SIGTERM was killed with its group")
	assert.Zero(t, command.Running())
}

func TestContextCancelKillsTheGroup(t *testing.T) {
	script, pidFile := grandchildScript(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := command.Run(ctx, &command.Cmd{Argv: []string{"sh", "-c", script}})
		done <- err
	}()
	pid := waitPid(t, pidFile)
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	assert.False(t, alive(pid))
}

// A background grandchild that keeps the output pipe open does not keep
// Run waiting once the command itself has exited.
func TestBackgroundChildDoesNotBlock(t *testing.T) {
	start := time.Now()
	res, err := command.Run(context.Background(), &command.Cmd{Argv: []string{"sh", "-c", "sleep 5 & echo started"}})
	require.NoError(t, err)
	assert.Equal(t, "started\n", string(res.Output))
	assert.Less(t, time.Since(start), 4*time.Second, "returned long before the background sleep ends")
}

// KillAll ends every command still running and refuses new ones: the
// receiver calls it on exit. Run in a child process, since it closes the
// package for good.
func TestKillAll(t *testing.T) {
	if pidFile := os.Getenv("PIPPET_KILLALL_HELPER"); pidFile != "" {
		done := make(chan error, 1)
		go func() {
			_, err := command.Run(context.Background(), &command.Cmd{Argv: []string{"sh", "-c", "echo $$ > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; exec sleep 60"}})
			done <- err
		}()
		for i := 0; i < 500; i++ {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		command.KillAll()
		<-done
		_, err := command.Run(context.Background(), &command.Cmd{Argv: []string{"true"}})
		if err == nil {
			os.Exit(3) // started a command after KillAll
		}
		os.Exit(0)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKillAll$")
	cmd.Env = append(os.Environ(), "PIPPET_KILLALL_HELPER="+pidFile)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	assert.False(t, alive(pid), "the command outlived KillAll")
}

func TestTail(t *testing.T) {
	tl := &command.Tail{Max: 4}
	tl.Write([]byte("ab"))
	assert.False(t, tl.Truncated)
	tl.Write([]byte("cd"))
	assert.False(t, tl.Truncated)
	tl.Write([]byte("e"))
	assert.True(t, tl.Truncated)
	assert.Equal(t, "bcde", string(tl.Bytes()))
	tl2 := &command.Tail{Max: 2}
	tl2.Write([]byte("xy"))
	assert.False(t, tl2.Truncated, "exactly Max bytes is not a truncation")
	tl2.Write([]byte("abc"))
	assert.Equal(t, "bc", string(tl2.Bytes()))
	assert.True(t, tl2.Truncated)
	assert.True(t, errors.Is(command.ErrTimeout, command.ErrTimeout))
}
