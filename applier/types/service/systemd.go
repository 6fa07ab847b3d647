package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
)

// systemctl is the command the systemd provider runs (a variable so that
// tests on machines without systemd can point it at a replay of real
// systemctl output).
var systemctl = "systemctl"

// Systemd manages units through systemctl; it is the provider wherever
// PID 1 is systemd.
var Systemd = &applier.ProviderSpec{
	Name: "systemd",
	Doc: "systemd units through systemctl: start (after unmask and, when the unit changed, " +
		"daemon-reload), stop, restart, is-active for the status, enable, disable, mask and is-enabled. " +
		"The `.service` suffix may be left out.",
	Confine: applier.Confine{
		Commands: []string{"systemctl"},
		Func: func(*applier.Env) string {
			if !isSystemd() {
				return "PID 1 is not systemd"
			}
			return ""
		},
	},
	Defaults: map[string][]string{"os.family": {"Debian", "RedHat", "Suse", "Archlinux"}},
	Features: []string{"refreshable", "enableable", "maskable"},
	New: func(r *applier.Resource, env *applier.Env) (applier.Provider, error) {
		return &provider{r: r, env: env, b: &sysd{base: base{r: r}}}, nil
	},
}

type sysd struct {
	base
	isEnabled *enabledState // systemctl is-enabled, read once per request
}

type enabledState struct {
	out  string
	code int
}

func (s *sysd) unit(action string) []string { return []string{systemctl, action, "--", s.r.Name()} }

func (s *sysd) startCmd() ([]string, error) {
	if c := s.cmd("start"); c != nil {
		return c, nil
	}
	return s.unit("start"), nil
}
func (s *sysd) stopCmd() ([]string, error) {
	if c := s.cmd("stop"); c != nil {
		return c, nil
	}
	return s.unit("stop"), nil
}
func (s *sysd) statusCmd() ([]string, error) {
	if c := s.cmd("status"); c != nil {
		return c, nil
	}
	return s.unit("is-active"), nil
}
func (s *sysd) restartCmd() ([]string, error) {
	if c := s.cmd("restart"); c != nil {
		return c, nil
	}
	return s.unit("restart"), nil
}

// beforeStart unmasks the unit (when systemctl's own start is used) and
// reloads systemd when the unit's files changed, as Puppet does.
func (s *sysd) beforeStart(ctx context.Context, p *provider) error {
	if s.r.String("start") == "" {
		if _, err := command.Check(ctx, &command.Cmd{Argv: s.unit("unmask"), Timeout: p.timeout(), Finish: true}); err != nil {
			return fmt.Errorf("Could not unmask %s: %w", s.r.Name(), err)
		}
		s.isEnabled = nil
	}
	res, err := command.Run(ctx, &command.Cmd{Argv: []string{systemctl, "show", "--property=NeedDaemonReload", "--", s.r.Name()}, Timeout: p.timeout()})
	if err != nil {
		return err
	}
	if _, v, _ := strings.Cut(strings.TrimSpace(string(res.Output)), "="); v == "yes" {
		_, _ = command.Run(ctx, &command.Cmd{Argv: []string{systemctl, "daemon-reload"}, Timeout: p.timeout(), Finish: true})
	}
	return nil
}

func (s *sysd) readEnabled(ctx context.Context, p *provider) (*enabledState, error) {
	if s.isEnabled != nil {
		return s.isEnabled, nil
	}
	res, err := command.Run(ctx, &command.Cmd{Argv: s.unit("is-enabled"), Timeout: p.timeout()})
	if err != nil {
		return nil, fmt.Errorf("asking systemctl is-enabled: %w", err)
	}
	s.isEnabled = &enabledState{out: strings.TrimSpace(string(res.Output)), code: res.Code}
	return s.isEnabled, nil
}

// enabled is Puppet's reading of `systemctl is-enabled`: masked is mask
// (when mask is wanted), static and indirect are reported as such (in sync
// with anything but mask, see enableInSync), exit 0 is true.
func (s *sysd) enabled(ctx context.Context, p *provider) (string, error) {
	st, err := s.readEnabled(ctx, p)
	if err != nil {
		return "", err
	}
	switch {
	case st.out == "masked" && s.r.String("enable") == "mask":
		return "mask", nil
	case st.out == "static" || st.out == "indirect":
		return st.out, nil
	case st.code == 0:
		return "true", nil
	}
	return "false", nil
}

func (s *sysd) setEnable(ctx context.Context, p *provider, v string) error {
	change := func(action string) error {
		s.isEnabled = nil
		if _, err := command.Check(ctx, &command.Cmd{Argv: s.unit(action), Timeout: p.timeout(), Finish: true}); err != nil {
			return fmt.Errorf("Could not %s %s: %w", action, s.r.Name(), err)
		}
		return nil
	}
	switch v {
	case "true":
		if err := change("unmask"); err != nil {
			return err
		}
		return change("enable")
	case "false":
		return change("disable")
	case "mask":
		res, err := command.Run(ctx, &command.Cmd{Argv: s.unit("cat"), Timeout: p.timeout()})
		if err == nil && res.Code == 0 {
			if err := change("disable"); err != nil {
				return err
			}
		}
		return change("mask")
	}
	return fmt.Errorf("Provider systemd must have features '%s' to set 'enable' to '%s'", featureFor(v), v)
}
