// Package puppetlog is a log/slog handler that prints records the way
// Puppet prints its log (Notice: /File[/tmp/x]/ensure: created), with
// Puppet's level names, and with every control character escaped so that
// no title or command output can forge a log line. The receiver logs
// through it, and relays the delegated Puppet's log into it.
package puppetlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// LevelNotice is Puppet's notice level, between info and warning: the
// one definition, which applier (as applier.LevelNotice, for type
// authors) and every logger of pippet use.
const LevelNotice = slog.Level(2)

// Levels are the log levels by the names Puppet uses for --log-level.
var Levels = map[string]slog.Level{
	"debug":   slog.LevelDebug,
	"info":    slog.LevelInfo,
	"notice":  LevelNotice,
	"warning": slog.LevelWarn,
	"err":     slog.LevelError,
	// Puppet's levels above err: nothing pippet logs is that severe, so
	// they silence the log.
	"alert": slog.LevelError + 4,
	"emerg": slog.LevelError + 4,
	"crit":  slog.LevelError + 4,
}

// Handler writes records the way Puppet prints its log:
//
//	Notice: /File[/tmp/x]/ensure: created
//	Error: (Applying File[/tmp/x]) could not write: permission denied
//	Warning: something
//
// A record's "resource" attribute (and "property", when given) become the
// Puppet-style prefix: a path for debug to notice, "(Applying REF)" for
// warnings and errors. Other attributes follow as key=value.
type Handler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	attrs []slog.Attr
}

// New returns a Handler writing to w the records at level and above.
func New(w io.Writer, level slog.Leveler) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

// levels are Puppet's log levels, most severe first: the name Puppet's
// settings and reports use, and the label its log lines start with.
var levels = [...]struct{ name, label string }{
	{"err", "Error"}, {"warning", "Warning"}, {"notice", "Notice"}, {"info", "Info"}, {"debug", "Debug"},
}

// rank is the index in levels of the level a record at l is logged at.
func rank(l slog.Level) int {
	switch {
	case l >= slog.LevelError:
		return 0
	case l >= slog.LevelWarn:
		return 1
	case l >= LevelNotice:
		return 2
	case l >= slog.LevelInfo:
		return 3
	}
	return 4
}

// Name is Puppet's name of the level a record at l is logged at (err,
// warning, notice, info, debug): a report's log level, or the log_level
// setting for a threshold of l.
func Name(l slog.Level) string { return levels[rank(l)].name }

func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var resource, property string
	var extra []string
	add := func(a slog.Attr) bool {
		switch a.Key {
		case "resource":
			resource = a.Value.String()
		case "property":
			property = a.Value.String()
		default:
			if a.Key != "" {
				extra = append(extra, a.Key+"="+a.Value.String())
			}
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	var p strings.Builder
	p.WriteString(levels[rank(r.Level)].label)
	p.WriteString(": ")
	if resource != "" {
		resource, property = EscapeControls(resource), EscapeControls(property)
		if r.Level >= slog.LevelWarn {
			p.WriteString("(Applying " + resource)
			if property != "" {
				p.WriteString("/" + property)
			}
			p.WriteString(") ")
		} else {
			p.WriteString("/" + resource)
			if property != "" {
				p.WriteString("/" + property)
			}
			p.WriteString(": ")
		}
	}
	prefix := p.String()
	msg := r.Message
	if len(extra) > 0 {
		msg += " (" + strings.Join(extra, ", ") + ")"
	}
	// Every line of a message (a diff, a command's output) is printed as a
	// record of its own with the same prefix, and control characters in it
	// are escaped: whatever a title, message or output holds, each line
	// on stderr is one record of the level it says, never a forged one.
	var b strings.Builder
	if head, diff, ok := diffMessage(msg); ok {
		// A diff is one record as Puppet prints it: its first line with
		// the prefix, then diff -u's lines as they are. Each of those
		// starts with a diff mark (---, +++, @@, +, -, a space, \), so
		// none can pass for a record.
		b.WriteString(prefix)
		b.WriteString(EscapeControls(head))
		b.WriteByte('\n')
		for line := range strings.Lines(diff) {
			b.WriteString(EscapeControls(strings.TrimSuffix(line, "\n")))
			b.WriteByte('\n')
		}
	} else {
		for {
			line, rest, more := strings.Cut(msg, "\n")
			b.WriteString(prefix)
			b.WriteString(EscapeControls(line))
			b.WriteByte('\n')
			if !more {
				break
			}
			msg = rest
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	if err != nil {
		return fmt.Errorf("writing log: %w", err)
	}
	return nil
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &n
}

// WithGroup is accepted and ignored: the Puppet format has no groups.
func (h *Handler) WithGroup(string) slog.Handler { return h }

// diffMessage splits a message that carries a unified diff, as the file
// type logs one ("SOURCE: " or "", a newline, then "--- OLD" and "+++
// NEW" lines and hunks), into its first line and the diff; ok is false
// for any other message.
func diffMessage(msg string) (head, diff string, ok bool) {
	head, diff, found := strings.Cut(msg, "\n")
	if !found || !strings.HasPrefix(diff, "--- ") {
		return "", "", false
	}
	_, rest, _ := strings.Cut(diff, "\n")
	if !strings.HasPrefix(rest, "+++ ") {
		return "", "", false
	}
	for _, line := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if line == "" || !strings.ContainsRune("-+ @\\", rune(line[0])) && line != "... (diff truncated)" {
			return "", "", false
		}
	}
	return head, diff, true
}
