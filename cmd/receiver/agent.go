package main

import (
	"context"
	"io"

	"github.com/pippet/pippet/agent"
)

// syslogNetwork and syslogAddr are the agent's syslog socket ("": the
// system's, /dev/log); tests set them to a socket of their own.
var syslogNetwork, syslogAddr string

// agentMain is `receiver agent`: Puppet's agent against a Puppet Server,
// the catalog applied natively (package agent).
func agentMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return agent.Main(ctx, args, stdout, stderr, agent.MainOptions{
		Version: versionLine(), SyslogNetwork: syslogNetwork, SyslogAddr: syslogAddr,
	})
}
