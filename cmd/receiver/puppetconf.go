package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pippet/pippet/agent/config"
	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
)

// puppetFlags are the agent's settings that puppet:// sources use, as
// the flags give them (addPuppetFlags); those left empty come from
// puppet.conf.
type puppetFlags struct {
	Server, Environment, Certname, SSLDir string
	Port                                  int
}

// puppetSettings reads puppet.conf (confFile; "" is this user's, as
// Puppet finds it) as Puppet's run mode mode reads it (receiver apply:
// "user", puppet apply's; the pipe receiver: "agent") with the puppet://
// flags given (pf) as command-line settings above it: agent/config's
// reader, the agent's. A puppet.conf Puppet would refuse is not fatal to
// a receiver that may never see a puppet:// source: warn says why, and
// the settings are the defaults and the flags. err is a flag's fault. The
// options' TLS reads the agent's SSL files of s (agent/ssl) when a
// puppet:// source first needs them.
func puppetSettings(mode, confFile string, pf puppetFlags) (opts *source.PuppetOptions, s *config.Settings, warn, err error) {
	if pf.Port != 0 && (pf.Port < 1 || pf.Port > 65535) {
		return nil, nil, nil, fmt.Errorf("--serverport %d is not a port", pf.Port)
	}
	over := map[string]string{}
	set := func(name, v string) {
		if v != "" {
			over[name] = v
		}
	}
	set("server", pf.Server)
	if pf.Port != 0 {
		set("serverport", strconv.Itoa(pf.Port))
	}
	set("environment", pf.Environment)
	set("certname", strings.ToLower(pf.Certname))
	set("ssldir", pf.SSLDir)
	s, warn = config.LoadMode(mode, confFile, over)
	if warn != nil {
		warn = fmt.Errorf("puppet.conf: %w; puppet:// sources use the defaults", warn)
		if s, err = config.LoadMode(mode, os.DevNull, over); err != nil {
			return nil, nil, warn, err
		}
	}
	o := source.PuppetOptions{Server: s.Server, Port: s.ServerPort, Environment: s.Environment}
	// server_list, when server is not set: its first server (Puppet's
	// agent tries them in order; a file source has one to ask).
	if pf.Server == "" && !s.SetByConfig("server") && len(s.ServerList) > 0 {
		o.Server = s.ServerList[0].Host
		if pf.Port == 0 {
			o.Port = s.ServerList[0].Port
		}
	}
	o.TLS = ssl.Files{Dir: s.SSLDir, Certname: s.Certname, Revocation: s.CertificateRevocation}
	return &o, s, warn, nil
}

// resolvePuppet completes the Puppet Server settings of puppet://
// sources from puppet.conf as Puppet's run mode mode reads it; a
// doubtful puppet.conf is warned about on stderr, a bad flag refused (ok
// false).
func resolvePuppet(cmd, mode string, pf puppetFlags, stderr io.Writer) (opts *source.PuppetOptions, s *config.Settings, ok bool) {
	opts, s, warn, err := puppetSettings(mode, "", pf)
	if warn != nil {
		fmt.Fprintf(stderr, "%s: warning: %v\n", cmd, warn)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, nil, false
	}
	return opts, s, true
}
