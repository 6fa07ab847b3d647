package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
)

// backend is what differs between the providers: the commands for each
// action (nil: the provider has none, and the generic fallback applies),
// and enabling.
type backend interface {
	startCmd() ([]string, error)
	stopCmd() ([]string, error)
	statusCmd() ([]string, error)
	restartCmd() ([]string, error)
	// beforeStart runs before the start command (systemd: unmask, reload).
	beforeStart(ctx context.Context, p *provider) error
	// enabled reads the boot setting ("true", "false", "mask", "static",
	// "indirect"); setEnable changes it. Only enableable backends.
	enabled(ctx context.Context, p *provider) (string, error)
	setEnable(ctx context.Context, p *provider, v string) error
}

// provider is one service bound to its backend.
type provider struct {
	r   *applier.Resource
	env *applier.Env
	b   backend
	// What Get read and Set did, for the refresh.
	running bool
	started bool
	enable  string // current enable, as Get read it ("" unread)
}

func (p *provider) name() string { return p.r.Name() }

func (p *provider) timeout() time.Duration {
	n, _ := p.r.Int("timeout")
	return time.Duration(n) * time.Second
}

// run runs one service command; check: a non-zero exit is an error,
// worded as Puppet words it (Could not start Service[x]: Execution of ...).
func (p *provider) run(ctx context.Context, action string, argv []string, check bool) (int, error) {
	p.env.Logger().Debug(p.r.Ref() + ": executing '" + command.String(argv) + "'")
	// Starting, stopping and restarting run to their end whatever becomes
	// of the receiver (command.Cmd.Finish); the service's timeout still
	// ends them.
	res, err := command.Run(ctx, &command.Cmd{Argv: argv, Timeout: p.timeout(), Finish: check})
	if err != nil {
		return res.Code, fmt.Errorf("Could not %s %s: Execution of '%s' failed: %w", action, p.r.Ref(), command.String(argv), err)
	}
	if check && res.Code != 0 {
		ee := &command.ExitError{Argv: argv, Code: res.Code, Output: command.LastLines(res.Output, 10)}
		return res.Code, fmt.Errorf("Could not %s %s: %w", action, p.r.Ref(), ee)
	}
	return res.Code, nil
}

// status is the status command's verdict, or the process table's.
func (p *provider) status(ctx context.Context) (bool, error) {
	cmd, err := p.b.statusCmd()
	if err != nil {
		return false, err
	}
	if cmd != nil {
		code, err := p.run(ctx, "get the status of", cmd, false)
		if err != nil {
			return false, err
		}
		return code == 0, nil
	}
	pid, err := p.getpid(ctx)
	return pid != "", err
}

// getpid finds the first `ps -ef` line matching pattern and returns its
// PID, as Puppet's base provider does.
func (p *provider) getpid(ctx context.Context) (string, error) {
	pat := p.r.String("pattern")
	if pat == "" {
		return "", errors.New("Either stop/status commands or a pattern must be specified")
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return "", fmt.Errorf("pattern: %w", err)
	}
	var out bytes.Buffer
	res, err := command.Run(ctx, &command.Cmd{Argv: []string{"ps", "-ef"}, Stdout: &limited{w: &out, n: 16 << 20}, Timeout: p.timeout()})
	if err != nil {
		return "", fmt.Errorf("reading the process table: %w", err)
	}
	if res.Code != 0 {
		return "", &command.ExitError{Argv: []string{"ps", "-ef"}, Code: res.Code, Output: command.LastLines(res.Output, 5)}
	}
	for _, line := range strings.Split(strings.ToValidUTF8(out.String(), "\uFFFD"), "\n") {
		if re.MatchString(line) {
			p.env.Logger().Debug(p.r.Ref() + ": process matched: " + line)
			if f := strings.Fields(line); len(f) > 1 {
				return f[1], nil
			}
		}
	}
	return "", nil
}

// limited writes at most n bytes to w, dropping the rest.
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(b []byte) (int, error) {
	if rest := l.n - l.w.Len(); rest > 0 {
		if len(b) > rest {
			l.w.Write(b[:rest])
		} else {
			l.w.Write(b)
		}
	}
	return len(b), nil
}

// Get reads whether the service runs and, when enable is managed by an
// enableable backend or the service is read for find, its boot setting.
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	return p.read(ctx, cur, p.r.Given("enable") || p.r.ReadAll())
}

// read is Get, reporting the boot setting when withEnable (and the
// backend is enableable): what a search lists for each instance.
func (p *provider) read(ctx context.Context, cur *applier.State, withEnable bool) error {
	running, err := p.status(ctx)
	if err != nil {
		return err
	}
	p.running = running
	if running {
		cur.Set("ensure", "running")
	} else {
		cur.Set("ensure", "stopped")
	}
	if withEnable && hasFeature(p.r, "enableable") {
		en, err := p.b.enabled(ctx, p)
		if err != nil {
			return err
		}
		p.enable = en
		cur.Set("enable", en)
	}
	return nil
}

func hasFeature(r *applier.Resource, f string) bool {
	spec := r.Provider()
	if spec == nil {
		return true
	}
	for _, h := range spec.Features {
		if h == f {
			return true
		}
	}
	return false
}

// Set starts or stops the service, or changes its boot setting. Syncing
// ensure brings enable along, as Puppet's ensure does.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	switch c.Property {
	case "ensure":
		var err error
		if c.Should == "running" {
			err = p.start(ctx)
			p.started = err == nil
			c.Message = "started"
		} else {
			err = p.stop(ctx)
			if err == nil {
				err = p.confirmStopped(ctx)
			}
			c.Message = "stopped"
		}
		if err != nil {
			return err
		}
		if want := p.r.String("enable"); p.r.Given("enable") && hasFeature(p.r, "enableable") && !enableInSync(p.enable, want) {
			c.Parts = append(c.Parts, applier.Part{Previous: c.Is, Desired: c.Should, Message: c.Message})
			part := applier.Part{Property: "enable", Previous: p.enable, Desired: want,
				Message: "enable changed '" + p.enable + "' to '" + want + "'"}
			part.Err = p.b.setEnable(ctx, p, want)
			c.Parts = append(c.Parts, part)
		}
		return nil
	case "enable":
		return p.b.setEnable(ctx, p, c.Should.(string))
	}
	return fmt.Errorf("service has no property %s to change", c.Property)
}

func (p *provider) start(ctx context.Context) error {
	cmd, err := p.b.startCmd()
	if err != nil {
		return err
	}
	if err := p.b.beforeStart(ctx, p); err != nil {
		return err
	}
	_, err = p.run(ctx, "start", cmd, true)
	return err
}

func (p *provider) stop(ctx context.Context) error {
	cmd, err := p.b.stopCmd()
	if err != nil {
		return err
	}
	if cmd != nil {
		_, err = p.run(ctx, "stop", cmd, true)
		return err
	}
	pid, err := p.getpid(ctx)
	if err != nil {
		return err
	}
	if pid == "" {
		p.env.Logger().Info(p.r.Ref() + ": " + p.name() + " is not running")
		return nil
	}
	if _, err := command.Check(ctx, &command.Cmd{Argv: []string{"kill", pid}, Timeout: p.timeout()}); err != nil {
		return fmt.Errorf("Could not kill %s, PID %s: %w", p.name(), pid, err)
	}
	return nil
}

// stopGrace is how long a service may take to be gone after its stop
// command returned (a script that signals the daemon and returns at once).
const stopGrace = 5 * time.Second

// confirmStopped checks the status after a stop that said it worked, for
// up to stopGrace (or the service's timeout when shorter): a stop command
// that exits 0 and leaves the daemon running is a failure saying so,
// where Puppet reports the service stopped.
func (p *provider) confirmStopped(ctx context.Context) error {
	grace := min(stopGrace, p.timeout())
	deadline := time.Now().Add(grace)
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		running, err := p.status(ctx)
		if err != nil {
			return fmt.Errorf("Could not stop %s: checking the status after the stop: %w", p.r.Ref(), err)
		}
		if !running {
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("Could not stop %s: checking the status after the stop: %w", p.r.Ref(), ctx.Err())
		case <-t.C:
		}
	}
	stop, _ := p.b.stopCmd()
	how := "the process table matches pattern '" + p.r.String("pattern") + "'"
	if st, _ := p.b.statusCmd(); st != nil {
		how = "'" + command.String(st) + "' exits 0"
	}
	did := "the kill"
	if stop != nil {
		did = "'" + command.String(stop) + "'"
	}
	return fmt.Errorf("Could not stop %s: %s exited 0 but the service is still running (%s after %s)", p.r.Ref(), did, how, grace)
}

// Refresh restarts a service that was running before this request and was
// not started by it. A start invalidates a pending restart, as in Puppet:
// no refresh then (""). A service not running, or to be stopped, is not
// restarted, but the refresh happened: Puppet's transaction logs
// Triggered 'refresh' from 1 event whatever its service's refresh did.
func (p *provider) Refresh(ctx context.Context) (string, error) {
	if p.started {
		return "", nil
	}
	if !p.running {
		p.env.Logger().Debug(p.r.Ref() + ": Skipping restart; service is not running")
		return "restart skipped: not running", nil
	}
	if p.r.Given("ensure") && p.r.String("ensure") == "stopped" {
		return "restart skipped: stopped", nil
	}
	cmd, err := p.b.restartCmd()
	if err != nil {
		return "", err
	}
	if cmd != nil {
		if err := p.b.beforeStart(ctx, p); err != nil {
			return "", err
		}
		if _, err := p.run(ctx, "restart", cmd, true); err != nil {
			return "", err
		}
	} else {
		if err := p.stop(ctx); err != nil {
			return "", err
		}
		if err := p.start(ctx); err != nil {
			return "", err
		}
	}
	return "restarted", nil
}

// exists reports whether path is an executable regular file.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
