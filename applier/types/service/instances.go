package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/command"
)

// Listing services (the search verb), as Puppet's providers list them:
// systemd the service units `systemctl list-unit-files` names, debian the
// init scripts of its path. Each instance is then read exactly as a find
// of it reads it (its provider's Get, the boot setting included), so a
// listing costs what Puppet's costs: a status and an enable query per
// service. base has no listing: it knows a service only by the commands a
// request gives, and search answers that it cannot list.

// readOne reads the service called name through spec's provider, as
// bound to a resource of that name carrying extra params, into the
// state add returns for title name.
func readOne(ctx context.Context, env *applier.Env, spec *applier.ProviderSpec, name string, params map[string]any, add func(string) *applier.State) error {
	params["provider"] = spec.Name
	r, err := Type.NewResource(name, params, false)
	if err != nil {
		return fmt.Errorf("service %s: %w", name, err)
	}
	pv, err := spec.New(r, env)
	if err != nil {
		return fmt.Errorf("service %s: %w", name, err)
	}
	return pv.(*provider).read(ctx, add(name), true)
}

// unitFileRe is Puppet's reading of `systemctl list-unit-files`: a unit
// and a state it lists (generated, transient, alias and the runtime
// states are left out, as Puppet leaves them).
var unitFileRe = regexp.MustCompile(`(?im)^(\S+)\s+(disabled|enabled|masked|indirect|bad|static)\s*([^-]\S+)?\s*$`)

// systemdInstances lists the service units systemd has unit files for.
func systemdInstances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	timeout, _ := scope.Int("timeout")
	argv := []string{systemctl, "list-unit-files", "--type", "service", "--full", "--all", "--no-pager"}
	res, err := command.Run(ctx, &command.Cmd{Argv: argv, Timeout: time.Duration(timeout) * time.Second})
	if err != nil {
		return fmt.Errorf("listing the units: %w", err)
	}
	if res.Code != 0 {
		return &command.ExitError{Argv: argv, Code: res.Code, Output: command.LastLines(res.Output, 5)}
	}
	for _, m := range unitFileRe.FindAllStringSubmatch(string(res.Output), -1) {
		if strings.EqualFold(m[2], "bad") {
			env.Logger().Debug(fmt.Sprintf("%s marked as bad by `systemctl`. It is recommended to be further checked.", m[1]))
		}
		if err := readOne(ctx, env, Systemd, m[1], map[string]any{"timeout": timeout}, add); err != nil {
			return err
		}
	}
	return nil
}

// initExcludes are the scripts Puppet's init providers never list (not
// services, or unsafe to ask for a status: reboot.sh, halt).
var initExcludes = map[string]bool{}

func init() {
	// Here rather than in the specs, which the listings refer to.
	Systemd.Instances, Debian.Instances = systemdInstances, debianInstances
	for _, n := range strings.Fields(`functions.sh reboot.sh shutdown.sh functions halt killall single
		linuxconf reboot boot wait-for-state portmap-wait rcS module-init-tools plymouth-ready
		idmapd-mounting startpar-bridge cryptdisks-udev statd-mounting gssd-mounting`) {
		initExcludes[n] = true
	}
}

// debianInstances lists the init scripts of the search's path (default
// /etc/init.d), as Puppet's init provider lists them: executable files,
// not hidden, not excluded, not links to upstart-job; each read with
// its directory as path and hasstatus, as Puppet makes them.
func debianInstances(ctx context.Context, env *applier.Env, scope *applier.Resource, add func(string) *applier.State) error {
	timeout, _ := scope.Int("timeout")
	for _, dir := range paths(scope, []string{"/etc/init.d"}) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			env.Logger().Debug(fmt.Sprintf("Service path %s does not exist", dir))
			continue
		}
		for _, de := range entries {
			name := de.Name()
			if strings.HasPrefix(name, ".") || initExcludes[name] || !isInitScript(filepath.Join(dir, name)) {
				continue
			}
			params := map[string]any{"timeout": timeout, "path": []any{dir}, "hasstatus": "true"}
			if err := readOne(ctx, env, Debian, name, params, add); err != nil {
				return err
			}
		}
	}
	return nil
}

// isInitScript: an executable file (through links), not a link to
// upstart's job shim.
func isInitScript(path string) bool {
	if !executable(path) {
		return false
	}
	if target, err := os.Readlink(path); err == nil && target == "/lib/init/upstart-job" {
		return false
	}
	return true
}
