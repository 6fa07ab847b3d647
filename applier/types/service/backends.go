package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/cmdline"
	"github.com/pippet/pippet/applier/command"
)

// Base is the simplest provider: the commands the request gives, else a
// binary to start and a pattern in the process table.
var Base = &applier.ProviderSpec{
	Name: "base",
	Doc: "The simplest form of Unix service support: `start` (or `binary`), `stop` (or killing the " +
		"process `pattern` finds), `status` (or `pattern` in `ps -ef`), `restart` (or stop and start).",
	Confine:  applier.Confine{Commands: []string{"ps", "kill"}},
	Features: []string{"refreshable"},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return &provider{r: r, env: env, b: &base{r: r}}, nil
	},
}

type base struct{ r *applier.Resource }

func (b *base) cmd(action string) []string {
	if s := b.r.String(action); s != "" {
		return cmdline.Argv(s)
	}
	return nil
}

func (b *base) startCmd() ([]string, error) {
	if c := b.cmd("start"); c != nil {
		return c, nil
	}
	if c := b.cmd("binary"); c != nil {
		return c, nil
	}
	return nil, errors.New("Services must specify a start command or a binary")
}
func (b *base) stopCmd() ([]string, error)                         { return b.cmd("stop"), nil }
func (b *base) statusCmd() ([]string, error)                       { return b.cmd("status"), nil }
func (b *base) restartCmd() ([]string, error)                      { return b.cmd("restart"), nil }
func (b *base) beforeStart(context.Context, *provider) error       { return nil }
func (b *base) enabled(context.Context, *provider) (string, error) { return "", nil }
func (b *base) setEnable(context.Context, *provider, string) error {
	return errors.New("the base provider cannot enable services")
}

// Debian manages init scripts: the script found in path (default
// /etc/init.d), `service NAME status` with hasstatus, update-rc.d and
// invoke-rc.d for enable. It is the provider where PID 1 is not systemd.
var Debian = &applier.ProviderSpec{
	Name: "debian",
	Doc: "Debian's init scripts: the script NAME (or NAME.sh) in `path` (default /etc/init.d) runs " +
		"start, stop and (with hasrestart) restart; `service NAME status` tells the status (with " +
		"hasstatus); update-rc.d enables and disables, invoke-rc.d and the rc?.d links tell.",
	Confine: applier.Confine{
		Commands: []string{"/usr/sbin/update-rc.d", "/usr/sbin/invoke-rc.d", "/usr/sbin/service"},
		Func:     func(*applier.Env) string { return notSystemd() },
	},
	Defaults: map[string][]string{"os.family": {"Debian"}},
	Features: []string{"refreshable", "enableable"},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return &provider{r: r, env: env, b: &debian{base: base{r: r}}}, nil
	},
}

type debian struct {
	base
	script string
}

// initscript finds NAME, then NAME.sh, in the search path.
func (d *debian) initscript() (string, error) {
	if d.script != "" {
		return d.script, nil
	}
	dirs := paths(d.r, []string{"/etc/init.d"})
	name := d.r.Name()
	for _, suffix := range []string{"", ".sh"} {
		for _, dir := range dirs {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			p := filepath.Join(dir, name+suffix)
			if _, err := os.Stat(p); err == nil {
				d.script = p
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("Could not find init script for '%s'", name)
}

func (d *debian) scriptCmd(action string) ([]string, error) {
	if c := d.cmd(action); c != nil {
		return c, nil
	}
	s, err := d.initscript()
	if err != nil {
		return nil, err
	}
	return []string{s, action}, nil
}

func (d *debian) startCmd() ([]string, error) { return d.scriptCmd("start") }
func (d *debian) stopCmd() ([]string, error)  { return d.scriptCmd("stop") }
func (d *debian) statusCmd() ([]string, error) {
	if c := d.cmd("status"); c != nil {
		return c, nil
	}
	if d.r.String("hasstatus") == "true" {
		return []string{"/usr/sbin/service", d.r.Name(), "status"}, nil
	}
	return nil, nil
}
func (d *debian) restartCmd() ([]string, error) {
	if c := d.cmd("restart"); c != nil {
		return c, nil
	}
	if d.r.String("hasrestart") == "true" {
		return d.scriptCmd("restart")
	}
	return nil, nil
}

// enabled asks invoke-rc.d, and counts the start links where it cannot
// say, as Puppet's debian provider does.
func (d *debian) enabled(ctx context.Context, p *provider) (string, error) {
	res, err := command.Run(ctx, &command.Cmd{Argv: []string{"/usr/sbin/invoke-rc.d", "--quiet", "--query", d.r.Name(), "start"}, Timeout: p.timeout()})
	if err != nil {
		return "", fmt.Errorf("asking invoke-rc.d: %w", err)
	}
	switch res.Code {
	case 104, 106:
		return "true", nil
	case 101, 105:
		links, _ := filepath.Glob("/etc/rc*.d/S??" + globQuote(d.r.Name()))
		if len(links) >= 4 {
			return "true", nil
		}
	}
	return "false", nil
}

func (d *debian) setEnable(ctx context.Context, p *provider, v string) error {
	name := d.r.Name()
	var steps [][]string
	switch v {
	case "true":
		steps = [][]string{{"/usr/sbin/update-rc.d", "-f", name, "remove"}, {"/usr/sbin/update-rc.d", name, "defaults"}}
	case "false":
		steps = [][]string{{"/usr/sbin/update-rc.d", name, "disable"}}
	default:
		return fmt.Errorf("Provider debian must have features '%s' to set 'enable' to '%s'", featureFor(v), v)
	}
	for _, s := range steps {
		if _, err := command.Check(ctx, &command.Cmd{Argv: s, Timeout: p.timeout(), Finish: true}); err != nil {
			return err
		}
	}
	return nil
}

func featureFor(v string) string {
	switch v {
	case "mask":
		return "maskable"
	case "manual":
		return "manual_startable"
	case "delayed":
		return "delayed_startable"
	}
	return "enableable"
}

// globQuote escapes glob metacharacters in a name.
func globQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// pid1 is where the init system's name is read ("systemd" when it runs).
var pid1 = "/proc/1/comm"

func isSystemd() bool {
	b, err := os.ReadFile(pid1)
	return err == nil && strings.Contains(string(b), "systemd")
}

func notSystemd() string {
	if isSystemd() {
		return "PID 1 is systemd"
	}
	return ""
}
