package puppetlog_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/internal/puppetlog"
)

// The names Puppet's daemon logs ("Caught #{signal}; exiting", the
// symbol it trapped), for every signal pippet's agent and stream handle.
func TestSignalName(t *testing.T) {
	for _, c := range []struct {
		sig  os.Signal
		want string
	}{
		{syscall.SIGTERM, "TERM"},
		{syscall.SIGINT, "INT"},
		{os.Interrupt, "INT"},
		{syscall.SIGHUP, "HUP"},
		{syscall.SIGUSR1, "USR1"},
		{syscall.SIGUSR2, "USR2"},
		{syscall.SIGQUIT, "QUIT"},
		{syscall.SIGPIPE, "broken pipe"},
	} {
		assert.Equal(t, c.want, puppetlog.SignalName(c.sig), "%v", c.sig)
	}
}
