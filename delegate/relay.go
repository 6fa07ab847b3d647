package delegate

import (
	"context"
	"log/slog"
	"strings"

	"github.com/pippet/pippet/applier"

	json "github.com/goccy/go-json"
)

// RelayHandler makes the handler for Options.Logger from the receiver's
// own: each line the bridge logs ("Notice: /Ini_key[a/b]/value: ...") is
// passed to next at the level its prefix names (notice is the receiver's
// notice level), without the prefix, so next prints it as one of its own
// records; lines without a Puppet prefix (Ruby's own warnings) are
// warnings, which no report keeps (applier.Unreported). Every other
// record (the process' starts and exits) goes to next as it is.
func RelayHandler(next slog.Handler, notice slog.Level) slog.Handler {
	return &relay{next: next, notice: notice}
}

type relay struct {
	next   slog.Handler
	notice slog.Level
	attrs  []slog.Attr
}

// multiLinePrefix starts the bridge's line for a log message of several
// lines: JSON of its prefix ("Error: /Type[title]/property: ") and its
// message, relayed as one record, as Puppet logs it.
const multiLinePrefix = "Pippet-Log: "

// stderrMessage is runner's message for a line of the child's stderr,
// given in the attribute "line".
const stderrMessage = "receiver stderr"

var prefixes = []struct {
	prefix string
	level  func(notice slog.Level) slog.Level
}{
	{"Debug: ", func(slog.Level) slog.Level { return slog.LevelDebug }},
	{"Info: ", func(slog.Level) slog.Level { return slog.LevelInfo }},
	{"Notice: ", func(n slog.Level) slog.Level { return n }},
	{"Warning: ", func(slog.Level) slog.Level { return slog.LevelWarn }},
	{"Error: ", func(slog.Level) slog.Level { return slog.LevelError }},
	{"Critical: ", func(slog.Level) slog.Level { return slog.LevelError }},
	{"Alert: ", func(slog.Level) slog.Level { return slog.LevelError }},
	{"Emergency: ", func(slog.Level) slog.Level { return slog.LevelError }},
}

// Enabled is true for every level: runner's level for a stderr line is
// not the one it is relayed at, so the decision is made in Handle.
func (h *relay) Enabled(context.Context, slog.Level) bool { return true }

func (h *relay) Handle(ctx context.Context, r slog.Record) error {
	if r.Message != stderrMessage {
		if !h.next.Enabled(ctx, r.Level) {
			return nil
		}
		next := h.next
		if len(h.attrs) > 0 {
			next = next.WithAttrs(h.attrs)
		}
		return next.Handle(ctx, r)
	}
	var line string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			line = a.Value.String()
			return false
		}
		return true
	})
	if rest, ok := strings.CutPrefix(line, multiLinePrefix); ok {
		// One record of several lines (the bridge's pippet_stderr).
		var m struct {
			Prefix  string `json:"prefix"`
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(rest), &m) == nil {
			line = m.Prefix + m.Message
		}
	}
	level, msg, puppets := slog.LevelWarn, line, false
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(line, p.prefix); ok {
			level, msg, puppets = p.level(h.notice), rest, true
			break
		}
	}
	if !puppets {
		// Ruby's own (Kernel#warn, a deprecation): printed as a
		// warning, but no record of the run, as in Puppet's report.
		ctx = applier.Unreported(ctx)
	}
	if !h.next.Enabled(ctx, level) {
		return nil
	}
	return h.next.Handle(ctx, slog.NewRecord(r.Time, level, msg, 0))
}

func (h *relay) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &n
}

func (h *relay) WithGroup(string) slog.Handler { return h }
