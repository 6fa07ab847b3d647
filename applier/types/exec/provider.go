package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/cmdline"
	"github.com/pippet/pippet/applier/command"
)

// provider runs one exec resource's checks and command.
type provider struct {
	r     *applier.Resource
	env   *applier.Env
	shell bool // the shell provider: every string through /bin/sh -c
	dirs  []string
	cred  *syscall.Credential
	// credErr: the user or group could not be resolved.
	credErr error
	// vars is the command's environment, made on first use (a resource
	// whose creates or checks say it is in sync never needs it).
	vars []string
}

var errNotRoot = errors.New("Only root can execute commands as other users")

func newProvider(shell bool) func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
	return func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		p := &provider{r: r, env: env, shell: shell}
		p.dirs = r.Strings("path")
		cred, err := credential(r.String("user"), r.String("group"), env)
		if errors.Is(err, errNotRoot) {
			// Bad input: Puppet refuses it when validating.
			return nil, &applier.ParamError{Param: "user", Err: err}
		}
		// An account that does not exist (yet) fails the resource when it
		// is evaluated, as in Puppet.
		p.cred, p.credErr = cred, err
		return p, nil
	}
}

// credential resolves user and group (names or ids) to the credential the
// command runs with. The user's supplementary groups come along; a group
// alone changes only the gid.
func credential(userName, groupName string, env *applier.Env) (*syscall.Credential, error) {
	if userName == "" && groupName == "" {
		return nil, nil
	}
	c := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), NoSetGroups: true}
	if userName != "" {
		u, err := lookupUser(userName)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		if uint32(uid) != uint32(os.Geteuid()) && !env.Features["root"] {
			return nil, errNotRoot
		}
		c.Uid, c.Gid = uint32(uid), uint32(gid)
		if ids, err := u.GroupIds(); err == nil {
			c.NoSetGroups = false
			for _, g := range ids {
				if n, err := strconv.ParseUint(g, 10, 32); err == nil {
					c.Groups = append(c.Groups, uint32(n))
				}
			}
		}
	}
	if groupName != "" {
		g, err := lookupGroup(groupName)
		if err != nil {
			return nil, err
		}
		gid, _ := strconv.ParseUint(g.Gid, 10, 32)
		c.Gid = uint32(gid)
	}
	return c, nil
}

func lookupUser(name string) (*user.User, error) {
	if _, err := strconv.ParseUint(name, 10, 32); err == nil {
		if u, err := user.LookupId(name); err == nil {
			return u, nil
		}
		// An id without a passwd entry is still an id.
		return &user.User{Uid: name, Gid: strconv.Itoa(os.Getgid()), Username: name}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("no such user '%s'", name)
	}
	return u, nil
}

func lookupGroup(name string) (*user.Group, error) {
	if _, err := strconv.ParseUint(name, 10, 32); err == nil {
		return &user.Group{Gid: name, Name: name}, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return nil, fmt.Errorf("no such group '%s'", name)
	}
	return g, nil
}

// environment returns environ's result, made once per resource.
func (p *provider) environment() []string {
	if p.vars == nil {
		p.vars = p.environ()
	}
	return p.vars
}

// environ is the receiver's environment minus HOME, USER and LOGNAME,
// plus PATH from `path`, plus the `environment` settings.
func (p *provider) environ() []string {
	base := os.Environ()
	vars := make([]string, 0, len(base)+4)
	set := map[string]int{}
	add := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := set[k]; ok {
			vars[i] = kv
			return
		}
		set[k] = len(vars)
		vars = append(vars, kv)
	}
	for _, kv := range base {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "USER", "LOGNAME":
			continue
		}
		add(kv)
	}
	if len(p.dirs) > 0 {
		add("PATH=" + strings.Join(p.dirs, ":"))
	}
	for _, kv := range p.r.Strings("environment") {
		add(kv)
	}
	return vars
}

// argv turns a command into the program and arguments to execute.
func (p *provider) argv(c any) ([]string, error) {
	var args []string
	switch x := c.(type) {
	case []any:
		for _, e := range x {
			args = append(args, e.(string))
		}
		if p.shell {
			args = []string{"/bin/sh", "-c", strings.Join(args, " ")}
		}
	case string:
		switch {
		case p.shell || cmdline.NeedsShell(x):
			if !p.shell {
				// Puppet checks the string's first word even when a shell runs it.
				if _, err := checkExe(extractExe(x), p.dirs); err != nil {
					return nil, err
				}
			}
			args = []string{"/bin/sh", "-c", x}
		default:
			args = cmdline.Fields(x)
		}
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	exe, err := checkExe(args[0], p.dirs)
	if err != nil {
		return nil, err
	}
	args[0] = exe
	if m, ok := p.r.Int("umask"); ok {
		args = append([]string{"/bin/sh", "-c", fmt.Sprintf("umask %04o && exec \"$@\"", m), "sh"}, args...)
	}
	return args, nil
}

// exec runs one command with the resource's settings.
func (p *provider) exec(ctx context.Context, c any) (command.Result, error) {
	if p.credErr != nil {
		return command.Result{}, p.credErr
	}
	args, err := p.argv(c)
	if err != nil {
		return command.Result{}, err
	}
	dir := p.r.String("cwd")
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return command.Result{}, fmt.Errorf("Working directory %s does not exist!", dir)
		}
	}
	timeout, _ := p.r.Value("timeout").(float64)
	p.env.Logger().Debug(p.r.Ref() + ": executing " + p.shown(c))
	return run(ctx, &command.Cmd{
		Argv:    args,
		Env:     p.environment(),
		Dir:     dir,
		Cred:    p.cred,
		Timeout: time.Duration(timeout * float64(time.Second)),
	})
}

// secret: the command (and so unless and onlyif, see Type.SensitiveWith)
// is Sensitive: neither it nor its output is shown, as in Puppet.
func (p *provider) secret() bool { return p.r.IsSensitive("command") }

// shown is a command as messages show it: quoted, or '[redacted]'.
func (p *provider) shown(c any) string {
	if p.secret() {
		return "'[redacted]'"
	}
	return "'" + commandString(c) + "'"
}

func commandString(c any) string {
	if l, ok := c.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i], _ = e.(string)
		}
		return strings.Join(parts, " ")
	}
	s, _ := c.(string)
	return s
}

// Get runs the checks: "notrun" when the command should run, else the
// desired exit codes (in sync). A read (find) runs nothing, checks
// included, and answers "notrun", as `puppet resource exec TITLE` does
// (Puppet's find takes no params, so it has no check to run).
func (p *provider) Get(ctx context.Context, cur *applier.State) error {
	if p.r.ReadAll() {
		cur.Set("returns", "notrun")
		return nil
	}
	run, err := p.checks(ctx, false)
	if err != nil {
		return err
	}
	if run {
		cur.Set("returns", "notrun")
	} else {
		cur.Set("returns", p.r.Value("returns"))
	}
	return nil
}

// checks reports whether every check allows the command to run;
// refreshing: for a refresh, which a refreshonly command waits for.
func (p *provider) checks(ctx context.Context, refreshing bool) (bool, error) {
	ref := p.r.Ref()
	log := p.env.Logger()
	if !refreshing && p.r.String("refreshonly") == "true" {
		log.Debug(ref + ": refreshonly: runs only on a refresh")
		return false, nil
	}
	for _, path := range p.r.Strings("creates") {
		if _, err := os.Stat(path); err == nil {
			log.Debug(ref + ": '" + path + "' exists (creates): not running")
			return false, nil
		}
	}
	for _, chk := range []struct {
		name   string
		wantOK bool
	}{{"unless", false}, {"onlyif", true}} {
		list, _ := p.r.Value(chk.name).([]any)
		for _, c := range list {
			o, err := p.exec(ctx, c)
			if p.secret() {
				if len(o.Output) > 0 {
					log.Debug(ref + "/" + chk.name + ": [output redacted]")
				}
			} else {
				for _, line := range strings.Split(strings.TrimRight(string(o.Output), "\n"), "\n") {
					if line != "" {
						log.Debug(ref + "/" + chk.name + ": " + line)
					}
				}
			}
			if errors.Is(err, command.ErrTimeout) {
				log.Error(ref + ": check " + p.shown(c) + " exceeded timeout")
				return false, nil
			}
			if err != nil {
				return false, fmt.Errorf("check %s %s: %w", chk.name, p.shown(c), err)
			}
			if (o.Code == 0) != chk.wantOK {
				log.Debug(ref + ": not running because of failed check '" + chk.name + "'")
				return false, nil
			}
		}
	}
	return true, nil
}

// Refresh runs the command again when its checks allow, as Puppet's exec
// does on a refresh event: a refreshonly command runs only then (and a
// command that is not refreshonly may run twice, once for its own change
// and once for the refresh, as in Puppet). A refresh its checks hold back
// (creates satisfied, unless passing, onlyif failing) still happened, as
// Puppet reports it: Triggered 'refresh' from 1 event, the command not run.
func (p *provider) Refresh(ctx context.Context) (string, error) {
	run, err := p.checks(ctx, true)
	if err != nil {
		return "", err
	}
	if !run {
		return "not run: its checks hold", nil
	}
	if err := p.runCommand(ctx); err != nil {
		return "", err
	}
	return "executed successfully", nil
}

// Set runs the command up to `tries` times until its exit code is accepted.
func (p *provider) Set(ctx context.Context, c *applier.Change) error {
	if c.Property != "returns" {
		return fmt.Errorf("exec has no property %s", c.Property)
	}
	if err := p.runCommand(ctx); err != nil {
		return err
	}
	c.Message = "executed successfully"
	return nil
}

// runCommand runs the command up to `tries` times until its exit code is
// accepted.
func (p *provider) runCommand(ctx context.Context) error {
	if p.env != nil && p.env.Cache != nil {
		// The command may change anything other resources cached (a
		// useradd changes what a file's owner name means).
		defer p.env.Cache.Clear()
	}
	codes, _ := p.r.Value("returns").([]any)
	accepted := func(code int) bool {
		for _, a := range codes {
			if a.(int64) == int64(code) {
				return true
			}
		}
		return false
	}
	cmd := p.r.Value("command")
	tries, _ := p.r.Int("tries")
	if tries < 1 {
		tries = 1
	}
	sleep, _ := p.r.Value("try_sleep").(float64)
	var o command.Result
	var err error
	for try := int64(1); try <= tries; try++ {
		if tries > 1 {
			p.env.Logger().Debug(fmt.Sprintf("%s: try %d/%d", p.r.Ref(), try, tries))
		}
		o, err = p.exec(ctx, cmd)
		if err != nil && !errors.Is(err, command.ErrTimeout) {
			return err
		}
		// A timeout ends the tries, as in Puppet.
		if err != nil || accepted(o.Code) {
			break
		}
		if try < tries && sleep > 0 {
			select {
			case <-time.After(time.Duration(sleep * float64(time.Second))):
			case <-ctx.Done():
				return fmt.Errorf("cancelled between tries: %w", ctx.Err())
			}
		}
	}
	ok := err == nil && accepted(o.Code)
	switch lo := p.r.String("logoutput"); {
	case lo == "true", lo == "on_failure" && !ok:
		p.logOutput(ctx, o.Output)
	}
	if err != nil {
		if out := lastLines(o.Output, 10); out != "" && !p.secret() {
			return fmt.Errorf("%w; last output:\n%s", err, out)
		}
		return err
	}
	if !ok {
		if p.secret() {
			// Puppet's words for a Sensitive command, without its output.
			return fmt.Errorf("[command redacted] returned %d instead of one of [%s]", o.Code, formatCodes(codes))
		}
		msg := fmt.Sprintf("'%s' returned %d instead of one of [%s]", commandString(cmd), o.Code, formatCodes(codes))
		if out := lastLines(o.Output, 10); out != "" {
			msg += "; last output:\n" + out
		}
		return errors.New(msg)
	}
	return nil
}

func (p *provider) logOutput(ctx context.Context, out []byte) {
	log := p.env.Logger()
	prefix := "/" + p.r.Ref() + "/returns: "
	lvl := p.r.LogLevel
	if lvl < slog.LevelDebug {
		lvl = slog.LevelDebug
	}
	if p.secret() {
		log.Log(ctx, lvl, prefix+"[output redacted]")
		return
	}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line != "" {
			log.Log(ctx, lvl, prefix+line)
		}
	}
}
