package puppetlog

import (
	"os"
	"syscall"
)

// SignalName is a signal as Puppet names it in its log lines ("Caught
// TERM; exiting"): the name without SIG for the signals a daemon or a
// stream handles, Go's description for any other.
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGUSR1:
		return "USR1"
	case syscall.SIGUSR2:
		return "USR2"
	case syscall.SIGQUIT:
		return "QUIT"
	}
	return sig.String()
}
