package logdest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/internal/puppetlog"
)

// Facilities are syslog's facilities by the names syslogfacility takes
// (Ruby's Syslog::LOG_* on Linux).
var Facilities = map[string]int{
	"kern": 0, "user": 1, "mail": 2, "daemon": 3, "auth": 4, "syslog": 5, "lpr": 6, "news": 7,
	"uucp": 8, "cron": 9, "authpriv": 10, "ftp": 11,
	"local0": 16, "local1": 17, "local2": 18, "local3": 19, "local4": 20, "local5": 21, "local6": 22, "local7": 23,
}

// DefaultTag is the syslog program name of Puppet's agent.
const DefaultTag = "puppet-agent"

// maxDatagram bounds one syslog message: a longer line is cut (a diff of
// a huge file must not fail the write).
const maxDatagram = 60 << 10

// syslogHandler is the syslog destination: one message a line, sent as
// glibc's syslog(3) sends them on the local socket. The socket is opened
// at once and again after a failure; while syslog cannot be reached,
// lines are lost, as with syslog(3).
type syslogHandler struct {
	st    *syslogConn
	level slog.Leveler
	attrs []slog.Attr
}

type syslogConn struct {
	mu            sync.Mutex
	network, addr string
	conn          net.Conn
	facility      int
	tag           string
	pid           int
}

func openSyslog(o Options) (*syslogHandler, error) {
	name := strings.ToLower(o.Facility)
	if name == "" {
		name = "daemon"
	}
	fac, ok := Facilities[name]
	if !ok {
		names := make([]string, 0, len(Facilities))
		for n := range Facilities {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("invalid syslog facility %q (syslogfacility: one of %s)", o.Facility, strings.Join(names, ", "))
	}
	tag := o.Tag
	if tag == "" {
		tag = DefaultTag
	}
	c := &syslogConn{network: o.SyslogNetwork, addr: o.SyslogAddr, facility: fac, tag: tag, pid: os.Getpid()}
	c.mu.Lock()
	_ = c.dial()
	c.mu.Unlock()
	return &syslogHandler{st: c, level: o.Level}, nil
}

// dial connects to the syslog socket (c.mu held).
func (c *syslogConn) dial() error {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	if c.addr != "" {
		conn, err := net.Dial(c.network, c.addr)
		if err != nil {
			return err
		}
		c.conn = conn
		return nil
	}
	var err error
	for _, network := range []string{"unixgram", "unix"} {
		var conn net.Conn
		if conn, err = net.Dial(network, "/dev/log"); err == nil {
			c.network, c.conn = network, conn
			return nil
		}
	}
	return err
}

// send sends one line at severity sev.
func (c *syslogConn) send(sev int, t time.Time, line string) error {
	msg := fmt.Sprintf("<%d>%s %s[%d]: %s", c.facility*8+sev, t.Format(time.Stamp), c.tag, c.pid, line)
	if len(msg) > maxDatagram {
		msg = msg[:maxDatagram]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	write := func() error {
		if c.conn == nil {
			return net.ErrClosed
		}
		b := []byte(msg)
		if c.network == "unix" {
			// A stream socket: records end with a NUL, as syslog(3)'s.
			b = append(b, 0)
		}
		_, err := c.conn.Write(b)
		return err
	}
	if err := write(); err == nil {
		return nil
	}
	if err := c.dial(); err != nil {
		// syslog is not there: the line is lost, as syslog(3) loses it.
		return nil
	}
	if err := write(); err != nil {
		c.conn.Close()
		c.conn = nil
	}
	return nil
}

func (c *syslogConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

func (s *syslogHandler) Close() error { return s.st.Close() }

func (s *syslogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= s.level.Level() }

// severity is syslog's severity of a Puppet level.
func severity(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 3 // err
	case l >= slog.LevelWarn:
		return 4 // warning
	case l >= applier.LevelNotice:
		return 5 // notice
	case l >= slog.LevelInfo:
		return 6 // info
	}
	return 7 // debug
}

func (s *syslogHandler) Handle(ctx context.Context, r slog.Record) error {
	e := entryOf(ctx, r, s.attrs)
	prefix := ""
	if e.source != "Puppet" {
		prefix = "(" + puppetlog.EscapeControls(e.source) + ") "
	}
	sev := severity(e.level)
	for _, line := range strings.Split(e.message, "\n") {
		if err := s.st.send(sev, e.time, prefix+puppetlog.EscapeControls(line)); err != nil {
			return err
		}
	}
	return nil
}

func (s *syslogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *s
	n.attrs = append(append([]slog.Attr(nil), s.attrs...), as...)
	return &n
}

func (s *syslogHandler) WithGroup(string) slog.Handler { return s }
