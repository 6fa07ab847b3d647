// Package logdest sends `receiver agent`'s log where Puppet's --logdest
// says: the console, syslog, a file (plain lines, or JSON records when
// its name ends in .json or .jsonl), as Puppet's log destinations do
// (util/log/destinations.rb). Several destinations may be given; each
// gets every record at or above the run's level.
//
// The formats are Puppet's:
//
//   - a file: "2026-11-26 22:38:09 +0000 SOURCE (LEVEL): MESSAGE", SOURCE
//     being "Puppet" or the resource's path; each line of a message is a
//     record of its own, control characters escaped (Puppet writes a
//     message's later lines bare);
//   - a .json file: a JSON array of Puppet's structured log records
//     (level, message, source, tags, time, and file and line for a
//     resource's line), one a line, separated by "," lines, the
//     closing "]" never written (as Puppet: append one to parse it); a
//     .jsonl file: one record a line;
//   - syslog: the local syslog socket, program name puppet-agent, the
//     syslogfacility setting's facility, one datagram a line
//     ("<29>Nov 26 22:37:14 puppet-agent[PID]: MESSAGE", "(SOURCE)
//     MESSAGE" for a resource's line), as glibc's syslog(3) writes it for
//     Puppet's Ruby.
//
// A file is created 0640 (Puppet: 0666 less the umask), appended to, and
// written one record a write, so that several agents may share it.
package logdest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/catalog"
	"github.com/pippet/pippet/internal/puppetlog"
)

// Options say how the destinations are opened.
type Options struct {
	// Console prints the console destination (stdout and stderr).
	Console slog.Handler
	// Level is the least severe level every destination gets.
	Level slog.Leveler
	// Facility is the syslogfacility setting ("" is daemon).
	Facility string
	// Tag is the syslog program name ("" is puppet-agent, Puppet's
	// "puppet-" and its run mode).
	Tag string
	// SyslogNetwork and SyslogAddr are the syslog socket; "" is the
	// system's (/dev/log, a datagram socket, else a stream one). Tests
	// give a socket of their own.
	SyslogNetwork, SyslogAddr string
}

// Handler writes every record to each destination.
type Handler struct {
	dests []slog.Handler
	close []io.Closer
	// Created lists the log directories Open made (Puppet logs "Creating
	// log directory DIR" at info).
	Created []string
}

// Known says whether dest names a destination: console, syslog,
// eventlog (any case) or an absolute path.
func Known(dest string) bool {
	switch strings.ToLower(dest) {
	case "console", "syslog", "eventlog":
		return true
	}
	return filepath.IsAbs(dest)
}

// Open opens the destinations. Its errors are Puppet's "Could not set
// logdest to DEST: REASON"; nothing is left open then.
func Open(dests []string, o Options) (*Handler, error) {
	h := &Handler{}
	if o.Level == nil {
		o.Level = slog.LevelInfo
	}
	seen := map[string]bool{}
	for _, d := range dests {
		d = strings.TrimSpace(d)
		if d == "" || seen[strings.ToLower(d)] {
			continue
		}
		seen[strings.ToLower(d)] = true
		var dh slog.Handler
		var err error
		switch {
		case strings.EqualFold(d, "console"):
			if o.Console != nil {
				dh = o.Console
			}
		case strings.EqualFold(d, "syslog"):
			var s *syslogHandler
			s, err = openSyslog(o)
			if err == nil {
				dh = s
				h.close = append(h.close, s)
			}
		case strings.EqualFold(d, "eventlog"):
			err = errors.New("the Windows Event Log exists only on Windows; use syslog, console or a file")
		case filepath.IsAbs(d):
			var f *fileHandler
			f, err = openFile(d, o.Level, h)
			if err == nil {
				dh = f
				h.close = append(h.close, f)
			}
		default:
			err = errors.New("not a destination (console, syslog, or the absolute path of a file)")
		}
		if err != nil {
			h.Close()
			return nil, fmt.Errorf("Could not set logdest to %s: %w", d, err)
		}
		if dh != nil {
			h.dests = append(h.dests, dh)
		}
	}
	return h, nil
}

// Close closes the files and the syslog connection.
func (h *Handler) Close() error {
	var errs []error
	for _, c := range h.close {
		errs = append(errs, c.Close())
	}
	h.close = nil
	return errors.Join(errs...)
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	for _, d := range h.dests {
		if d.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, d := range h.dests {
		if d.Enabled(ctx, r.Level) {
			errs = append(errs, d.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.dests = make([]slog.Handler, len(h.dests))
	for i, d := range h.dests {
		n.dests[i] = d.WithAttrs(as)
	}
	return &n
}

func (h *Handler) WithGroup(name string) slog.Handler {
	n := *h
	n.dests = make([]slog.Handler, len(h.dests))
	for i, d := range h.dests {
		n.dests[i] = d.WithGroup(name)
	}
	return &n
}

// entry is a record as Puppet's log destinations see it.
type entry struct {
	level   slog.Level
	source  string
	message string
	tags    []string
	file    string
	line    int
	time    time.Time
}

// entryOf takes the record apart: the source is the resource's path
// when the line is a resource's (catalog.Log says, else the message's
// leading "/PATH: "), else Puppet.
func entryOf(ctx context.Context, r slog.Record, attrs []slog.Attr) entry {
	e := entry{level: r.Level, source: "Puppet", message: r.Message, time: r.Time}
	if e.time.IsZero() {
		e.time = time.Now()
	}
	if ce, ok := catalog.EntryOf(ctx); ok && ce.Source != "" && ce.Source != "Puppet" {
		e.source, e.tags, e.file, e.line = ce.Source, ce.Tags, ce.File, ce.Line
	}
	if strings.HasPrefix(e.message, "/") {
		if i := strings.Index(e.message, ": "); i > 0 && (e.source == "Puppet" || e.message[:i] == e.source) {
			e.source, e.message = e.message[:i], e.message[i+2:]
		}
	}
	var extra []string
	add := func(a slog.Attr) bool {
		if a.Key != "" {
			extra = append(extra, a.Key+"="+a.Value.String())
		}
		return true
	}
	for _, a := range attrs {
		add(a)
	}
	r.Attrs(add)
	if len(extra) > 0 {
		e.message += " (" + strings.Join(extra, ", ") + ")"
	}
	return e
}

// fileHandler is a file destination.
type fileHandler struct {
	mu    *sync.Mutex
	f     *os.File
	level slog.Leveler
	attrs []slog.Attr
	// json: 0 plain, 1 a JSON array not begun, 2 an array with records;
	// jsonl: one record a line.
	json  *int
	jsonl bool
}

func openFile(path string, level slog.Leveler, h *Handler) (*fileHandler, error) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		h.Created = append(h.Created, dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() && fi.Mode()&os.ModeCharDevice == 0 && fi.Mode()&os.ModeNamedPipe == 0 {
		f.Close()
		return nil, fmt.Errorf("%s is not a file", path)
	}
	fh := &fileHandler{mu: &sync.Mutex{}, f: f, level: level, json: new(int), jsonl: strings.HasSuffix(path, ".jsonl")}
	if strings.HasSuffix(path, ".json") {
		*fh.json = 1
		switch {
		case fi.Size() == 0:
			if _, err := f.WriteString("[\n"); err != nil {
				f.Close()
				return nil, err
			}
		case fi.Size() > 2:
			// Records were written: the next one follows a comma.
			*fh.json = 2
		}
	}
	return fh, nil
}

func (f *fileHandler) Close() error { return f.f.Close() }

func (f *fileHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= f.level.Level() }

// structured is Puppet's Log#to_structured_hash, in its key order.
type structured struct {
	Level   string   `json:"level"`
	Message string   `json:"message"`
	Source  string   `json:"source"`
	Tags    []string `json:"tags"`
	Time    string   `json:"time"`
	File    string   `json:"file,omitempty"`
	Line    int      `json:"line,omitempty"`
}

func (f *fileHandler) Handle(ctx context.Context, r slog.Record) error {
	e := entryOf(ctx, r, f.attrs)
	level := puppetlog.Name(e.level)
	var b bytes.Buffer
	if *f.json > 0 || f.jsonl {
		tags := []string{level}
		for _, t := range e.tags {
			if t != level {
				tags = append(tags, t)
			}
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(structured{Level: level, Message: e.message, Source: e.source, Tags: tags,
			Time: e.time.Format("2006-01-02T15:04:05.000000000-07:00"), File: e.file, Line: e.line}); err != nil {
			return err
		}
	} else {
		prefix := e.time.Format("2006-01-02 15:04:05 -0700") + " " + puppetlog.EscapeControls(e.source) + " (" + level + "): "
		for _, line := range strings.Split(e.message, "\n") {
			b.WriteString(prefix)
			b.WriteString(puppetlog.EscapeControls(line))
			b.WriteByte('\n')
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := b.Bytes()
	if *f.json == 2 {
		out = append([]byte(",\n"), out...)
	} else if *f.json == 1 {
		*f.json = 2
	}
	// One write a record: appends of several processes do not interleave.
	if _, err := f.f.Write(out); err != nil {
		return fmt.Errorf("writing log %s: %w", f.f.Name(), err)
	}
	return nil
}

func (f *fileHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *f
	n.attrs = append(append([]slog.Attr(nil), f.attrs...), as...)
	return &n
}

func (f *fileHandler) WithGroup(string) slog.Handler { return f }
