package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"syscall"
	"time"
)

// runToEnd is Run for a Finish command (see Cmd.Finish).
func runToEnd(ctx context.Context, c *Cmd, path string) (Result, error) {
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	out, err := unlinkedFile()
	if err != nil {
		return Result{}, fmt.Errorf("creating the output file: %w", err)
	}
	var stdout *os.File
	if c.Stdout != nil {
		if stdout, err = unlinkedFile(); err != nil {
			out.Close()
			return Result{}, fmt.Errorf("creating the output file: %w", err)
		}
	}
	var stdin *os.File
	if c.Stdin != nil {
		if stdin, err = unlinkedFile(); err == nil {
			if _, err = stdin.Write(c.Stdin); err == nil {
				_, err = stdin.Seek(0, io.SeekStart)
			}
		}
		if err != nil {
			closeFiles(out, stdout, stdin)
			return Result{}, fmt.Errorf("writing the input file: %w", err)
		}
	}
	cmd := &osexec.Cmd{
		Path:   path,
		Args:   c.Argv,
		Env:    c.Env,
		Dir:    c.Dir,
		Stdout: out,
		Stderr: out,
		SysProcAttr: &syscall.SysProcAttr{
			// Its own session: a controller stopping the receiver's
			// process group does not take it along; no parent-death
			// signal.
			Setsid:     true,
			Credential: c.Cred,
		},
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	live.Lock()
	closed := live.closed
	live.Unlock()
	if closed {
		closeFiles(out, stdout, stdin)
		return Result{}, errors.New("command: the receiver is exiting; not starting '" + c.Argv[0] + "'")
	}
	if err := cmd.Start(); err != nil {
		closeFiles(out, stdout, stdin)
		return Result{}, fmt.Errorf("could not execute '%s': %w", c.Argv[0], err)
	}
	pid := cmd.Process.Pid
	waitDone := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		closeFiles(stdin) // the command's copy is its own
		waitDone <- err
	}()
	var timer <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timer = t.C
	}
	var waitErr, why error
	select {
	case waitErr = <-waitDone:
	case <-timer:
		why = ErrTimeout
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case waitErr = <-waitDone:
		case <-time.After(KillGrace):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			waitErr = <-waitDone
		}
	case <-ctx.Done():
		// Not killed: the goroutine above reaps it when it ends; its
		// output goes to files nobody reads.
		go func() {
			<-waitDone
			closeFiles(out, stdout)
		}()
		return Result{Code: -1}, fmt.Errorf("cancelled: %w: '%s' (pid %d) %w, so as not to leave what it changes half done; its outcome is not known",
			ctx.Err(), String(c.Argv), pid, ErrLeftRunning)
	}
	res := Result{Code: cmd.ProcessState.ExitCode()}
	res.Output, res.Truncated = tailOf(out, max)
	if stdout != nil {
		if _, err := stdout.Seek(0, io.SeekStart); err == nil {
			_, _ = io.Copy(c.Stdout, stdout)
		}
	}
	closeFiles(out, stdout)
	if err := exitOf(&res, c, waitErr); err != nil {
		return res, err
	}
	return res, why
}

// unlinkedFile is a temporary file already removed from its directory:
// it goes when the last descriptor on it closes.
func unlinkedFile() (*os.File, error) {
	f, err := os.CreateTemp("", ".pippet-command-")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tailOf reads the last max bytes of f.
func tailOf(f *os.File, max int) ([]byte, bool) {
	st, err := f.Stat()
	if err != nil {
		return nil, false
	}
	off := st.Size() - int64(max)
	truncated := off > 0
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(buf, off)
	return buf[:n], truncated
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
