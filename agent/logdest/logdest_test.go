package logdest_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/logdest"
	"github.com/pippet/pippet/applier"
)

func TestFileLinesAreOneRecordEach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "agent.log")
	h, err := logdest.Open([]string{path}, logdest.Options{Level: applier.LevelNotice})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Dir(path)}, h.Created)
	log := slog.New(h)
	log.Log(context.Background(), applier.LevelNotice, "/Stage[main]/Main/Exec[x]/returns: line one\nError: forged\x1b[31m")
	log.Info("below the level")
	log.Error("plain")
	require.NoError(t, h.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 3, string(b))
	assert.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [-+]\d{4} /Stage\[main\]/Main/Exec\[x\]/returns \(notice\): line one$`, lines[0])
	assert.Regexp(t, ` /Stage\[main\]/Main/Exec\[x\]/returns \(notice\): Error: forged\\x1b\[31m$`, lines[1])
	assert.Regexp(t, ` Puppet \(err\): plain$`, lines[2])
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

func TestJSONFileContinuesPuppetsArray(t *testing.T) {
	dir := t.TempDir()
	// Puppet's file with its opening bracket only: no comma before the
	// first record; one with records: a comma.
	begun, full := filepath.Join(dir, "begun.json"), filepath.Join(dir, "full.json")
	require.NoError(t, os.WriteFile(begun, []byte("[\n"), 0o644))
	require.NoError(t, os.WriteFile(full, []byte("[\n{\"level\":\"err\"}\n"), 0o644))
	h, err := logdest.Open([]string{begun, full}, logdest.Options{Level: slog.LevelInfo})
	require.NoError(t, err)
	slog.New(h).Warn("a <b> & c")
	require.NoError(t, h.Close())
	b, _ := os.ReadFile(begun)
	assert.Regexp(t, `^\[\n\{"level":"warning","message":"a <b> & c","source":"Puppet","tags":\["warning"\],"time":"[^"]+"\}\n$`, string(b))
	b, _ = os.ReadFile(full)
	assert.Regexp(t, `^\[\n\{"level":"err"\}\n,\n\{"level":"warning",`, string(b))
}

func TestSyslogAbsentLosesLinesQuietly(t *testing.T) {
	h, err := logdest.Open([]string{"syslog"}, logdest.Options{SyslogNetwork: "unixgram", SyslogAddr: filepath.Join(t.TempDir(), "nothing")})
	require.NoError(t, err)
	assert.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelError, "lost", 0)))
	require.NoError(t, h.Close())
}

func TestSyslogReconnects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	h, err := logdest.Open([]string{"syslog"}, logdest.Options{SyslogNetwork: "unixgram", SyslogAddr: path, Facility: "AUTH", Level: slog.LevelDebug})
	require.NoError(t, err)
	defer h.Close()
	// syslog starts after the agent: the next line reaches it.
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	defer conn.Close()
	slog.New(h).Debug("two\nlines")
	buf := make([]byte, 4096)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	var got []string
	for range 2 {
		n, err := conn.Read(buf)
		require.NoError(t, err)
		got = append(got, string(buf[:n]))
	}
	assert.Regexp(t, `^<39>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d puppet-agent\[\d+\]: two$`, got[0], "auth (4) debug (7)")
	assert.Regexp(t, `\]: lines$`, got[1])
}

func TestOpenRefuses(t *testing.T) {
	for dest, want := range map[string]string{
		"eventlog": "Could not set logdest to eventlog: the Windows Event Log exists only on Windows",
		"rel.log":  "Could not set logdest to rel.log: not a destination",
		"/":        "Could not set logdest to /: open /: is a directory",
	} {
		_, err := logdest.Open([]string{"console", dest}, logdest.Options{})
		if assert.Error(t, err, dest) {
			assert.Contains(t, err.Error(), want)
		}
	}
}
