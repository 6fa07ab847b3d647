package catalog

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/report"
)

// Log is the slog.Handler a catalog's engine and fallback log through,
// in front of the one that prints: a line about the resource being
// applied (/File[/x]/mode: ...) is written with its containment path
// (/Stage[main]/Main/File[/x]/mode: ...), the resource's Sensitive values
// are replaced by [redacted], and the line is kept for the report.
type Log struct {
	next  slog.Handler
	attrs []slog.Attr
	st    *logState
}

type logState struct {
	mu      sync.Mutex
	ref     string // "/File[/x]"
	path    string // "/Stage[main]/Main/File[/x]"
	parent  string // "/Stage[main]/Main"
	as      string // the path its lines are given to (applier.Type.ReportAs), or ""
	res     *Resource
	secrets []string
	paths   map[string]string    // ref → containment path, for the run's resources
	byPath  map[string]*Resource // containment path → resource, for the lines about one not being applied
	heard   int                  // events the resource heard (its refresh names them)
	keep    bool
	level   *slog.Level // the lowest level kept (nil: notice)
	entries []report.LogEntry
	// hold: the run tells changes corrective (it has a transaction
	// store), so the lines of the resource being applied from its first
	// change line on are held until the walk has told its changes
	// corrective (release), and printed then with Puppet's suffix.
	hold bool
	held []heldLine
}

// heldLine is a line held for the handler after the Log.
type heldLine struct {
	ctx   context.Context
	rec   slog.Record
	entry report.LogEntry
}

// isPath: msg starts with the containment path of the resource being
// applied already (a line of the walk's own).
func (st *logState) isPath(msg string) bool {
	return st.path != "" && strings.HasPrefix(msg, st.path) &&
		(len(msg) == len(st.path) || msg[len(st.path)] == ':' || msg[len(st.path)] == '/')
}

func (st *logState) keepLevel() slog.Level {
	if st.level != nil {
		return *st.level
	}
	return applier.LevelNotice
}

// Keep sets the lowest level of the lines kept for the report: notice
// unless told (an agent run with --test or --verbose keeps info lines
// too, as Puppet's report does).
func (h *Log) Keep(level slog.Level) {
	h.st.mu.Lock()
	h.st.level = &level
	h.st.mu.Unlock()
}

// NewLog returns a Log writing to next (nil: only kept).
func NewLog(next slog.Handler) *Log {
	return &Log{next: next, st: &logState{keep: true}}
}

// Enabled: every level is kept for the report at the kept level (notice
// unless Keep says) and above; below, as next decides.
func (h *Log) Enabled(ctx context.Context, l slog.Level) bool {
	h.st.mu.Lock()
	kept := l >= h.st.keepLevel()
	h.st.mu.Unlock()
	if kept {
		return true
	}
	return h.next != nil && h.next.Enabled(ctx, l)
}

// Handle rewrites, redacts, keeps and passes the record on.
func (h *Log) Handle(ctx context.Context, rec slog.Record) error {
	st := h.st
	st.mu.Lock()
	msg := rec.Message
	source := "Puppet"
	genType := "" // the type of a generated resource the line is about
	// A line that starts with a containment path (/Stage[main]/...) has
	// its path already.
	if ref := leadingRef(msg); ref != "" && !st.isPath(msg) && !strings.HasPrefix(ref, "Stage[") {
		rest := msg[1+len(ref):]
		if st.as != "" && "/"+ref == st.ref {
			msg = st.as + rest
		} else if p, ok := st.paths[ref]; ok {
			msg = p + rest
		} else if st.path != "" {
			// A resource Puppet generated for the one being applied: its
			// path is beside it.
			msg = st.parent + msg
			genType, _, _ = parseRef(ref)
		}
	}
	if strings.HasPrefix(msg, "/") {
		if i := strings.Index(msg, ": "); i > 0 {
			source = msg[:i]
		}
	}
	msg = redact(msg, st.secrets)
	if st.heard > 0 {
		msg = refreshLine(msg, st.heard)
	}
	if st.keep && rec.Level >= st.keepLevel() && !applier.IsUnreported(ctx) {
		e := report.LogEntry{Level: rec.Level, Message: msg, Source: source, Time: rec.Time}
		if source != "Puppet" {
			e.Message = msg[len(source)+2:]
		}
		if r := st.resourceOf(source); r != nil {
			e.Tags, e.File, e.Line = generatedTags(genType, r.Tags), r.File, r.Line
		}
		st.entries = append(st.entries, e)
	}
	if h.next == nil || !h.next.Enabled(ctx, rec.Level) {
		st.mu.Unlock()
		return nil
	}
	holding := st.hold && (len(st.held) > 0 || st.path != "" &&
		rec.Level == applier.LevelNotice && source != "Puppet" && source != st.path && (st.isPath(source) || st.as != "" && strings.HasPrefix(source, st.as+"/")))
	st.mu.Unlock()
	{
		// The handler next may want the line as the report has it (its
		// source, tags, file and line): EntryOf.
		e := report.LogEntry{Level: rec.Level, Message: msg, Source: source, Time: rec.Time}
		if source != "Puppet" {
			e.Message = msg[len(source)+2:]
			if r := st.resourceOfLocked(source); r != nil {
				e.Tags, e.File, e.Line = generatedTags(genType, r.Tags), r.File, r.Line
			}
		}
		ctx = context.WithValue(ctx, entryKey{}, e)
	}
	out := slog.NewRecord(rec.Time, rec.Level, msg, rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindString {
			a.Value = slog.StringValue(redact(a.Value.String(), st.secretsCopy()))
		}
		out.AddAttrs(a)
		return true
	})
	if holding {
		e, _ := EntryOf(ctx)
		st.mu.Lock()
		st.held = append(st.held, heldLine{ctx: ctx, rec: out, entry: e})
		st.mu.Unlock()
		return nil
	}
	return h.next.Handle(ctx, out)
}

// release prints the lines held for the resource just applied, the
// lines of its corrective changes (by "source\x00message") with Puppet's
// " (corrective)" at their end.
func (h *Log) release(corrective map[string]bool) {
	st := h.st
	st.mu.Lock()
	held := st.held
	st.held = nil
	st.mu.Unlock()
	for _, l := range held {
		ctx, rec := l.ctx, l.rec
		if l.entry.Source != "Puppet" && corrective[l.entry.Source+"\x00"+l.entry.Message] {
			l.entry.Message = withCorrective(l.entry.Message)
			ctx = context.WithValue(ctx, entryKey{}, l.entry)
			r := slog.NewRecord(rec.Time, rec.Level, withCorrective(rec.Message), rec.PC)
			rec.Attrs(func(a slog.Attr) bool { r.AddAttrs(a); return true })
			rec = r
		}
		_ = h.next.Handle(ctx, rec)
	}
}

// holdChanges(true) makes the Log hold the change lines of each resource until
// release (the run tells changes corrective).
func (h *Log) holdChanges(hold bool) {
	h.st.mu.Lock()
	h.st.hold = hold
	h.st.mu.Unlock()
}

// generatedTags are the tags of a resource of type typ generated for a
// resource tagged tags: its type's, then the generating resource's
// (Puppet copies the metaparameters); tags alone when typ is "" or
// already first.
func generatedTags(typ string, tags []string) []string {
	typ = strings.ToLower(typ)
	if typ == "" || len(tags) > 0 && tags[0] == typ {
		return tags
	}
	return append([]string{typ}, tags...)
}

type entryKey struct{}

// EntryOf is the line a Log passes to the handler after it, as the
// report keeps it (Source the resource's containment path or "Puppet",
// Message without the source, the resource's Tags, File and Line): log
// destinations that write Puppet's structured records read it.
func EntryOf(ctx context.Context) (report.LogEntry, bool) {
	e, ok := ctx.Value(entryKey{}).(report.LogEntry)
	return e, ok
}

// resourceOf is the resource a line with source is about: the one being
// applied, or the run's resource at that containment path (a line the
// walk logs for a resource before or after applying it: Scheduling
// refresh of ..., Would have triggered ...), so that its tags, file and
// line are Puppet's. The source may end with the property
// (/Stage[main]/Main/File[/x]/content). st.mu is held.
func (st *logState) resourceOf(source string) *Resource {
	if source == "Puppet" {
		return nil
	}
	if st.res != nil && st.isPath(source) {
		return st.res
	}
	if r, ok := st.byPath[source]; ok {
		return r
	}
	if i := strings.LastIndex(source, "]/"); i > 0 {
		if r, ok := st.byPath[source[:i+1]]; ok {
			return r
		}
	}
	return st.res
}

// resourceOfLocked is resourceOf taking st.mu.
func (st *logState) resourceOfLocked(source string) *Resource {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.resourceOf(source)
}

func (st *logState) secretsCopy() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.secrets
}

// WithAttrs and WithGroup keep the shared state.
func (h *Log) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	if h.next != nil {
		n.next = h.next.WithAttrs(as)
	}
	return &n
}

func (h *Log) WithGroup(name string) slog.Handler {
	n := *h
	if h.next != nil {
		n.next = h.next.WithGroup(name)
	}
	return &n
}

// current sets the resource being applied.
func (h *Log) current(v *vertex) {
	st := h.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if v == nil {
		st.ref, st.path, st.parent, st.as, st.secrets, st.heard, st.res = "", "", "", "", nil, 0, nil
		return
	}
	st.res = v.res
	st.ref, st.path = "/"+v.res.Ref(), v.path
	st.parent = "/" + strings.Join(v.elems[:len(v.elems)-1], "/")
	st.as = ""
	if v.typ != nil && v.typ.ReportAs != nil {
		st.as = st.parent + "/" + v.typ.ReportAs(v.res.Title, v.res.Params)
	}
	st.secrets = secretStrings(v.res)
}

// leadingRef is the reference a line starts with: "/File[/x]/mode: m"
// gives "File[/x]".
func leadingRef(msg string) string {
	if len(msg) < 4 || msg[0] != '/' || msg[1] < 'A' || msg[1] > 'Z' {
		return ""
	}
	open := strings.IndexByte(msg, '[')
	if open < 0 || strings.ContainsAny(msg[1:open], " /:") {
		return ""
	}
	for i := open; i < len(msg); i++ {
		if msg[i] == ']' && (i+1 == len(msg) || msg[i+1] == '/' || msg[i+1] == ':') {
			return msg[1 : i+1]
		}
	}
	return ""
}

// setPaths gives the containment paths of the run's resources (by
// reference) and the resources (by path).
func (h *Log) setPaths(paths map[string]string, byPath map[string]*Resource) {
	h.st.mu.Lock()
	h.st.paths, h.st.byPath = paths, byPath
	h.st.mu.Unlock()
}

// heard sets how many events the resource being applied heard.
func (h *Log) heard(n int) {
	h.st.mu.Lock()
	h.st.heard = n
	h.st.mu.Unlock()
}

// refreshLine words the engine's refresh lines as Puppet does for a
// resource that heard n events.
func refreshLine(msg string, n int) string {
	const (
		did   = ": Triggered 'refresh' from 1 event"
		would = ": Would have triggered 'refresh' from 1 event"
		fail  = ", which failed: "
	)
	if i := strings.Index(msg, did); i >= 0 {
		rest := msg[i+len(did):]
		if j := strings.Index(rest, fail); j >= 0 {
			return msg[:i] + ": Failed to call refresh: " + rest[j+len(fail):]
		}
		return msg[:i] + ": " + refreshMessage("Triggered", n)
	}
	if i := strings.Index(msg, would); i >= 0 {
		return msg[:i] + ": " + refreshMessage("Would have triggered", n)
	}
	return msg
}

// take returns the kept entries and forgets them.
// Take returns the lines kept (notice and above) since the last Take, or
// since the last Apply, which takes them for its report, and forgets
// them: an agent's run that ends before a catalog is applied reports
// the lines it logged on the way.
func (h *Log) Take() []report.LogEntry { return h.take() }

func (h *Log) take() []report.LogEntry {
	st := h.st
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.entries
	st.entries = nil
	return e
}

// secretStrings are the strings a resource's Sensitive values hold.
func secretStrings(r *Resource) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if x != "" {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, p := range r.Secrets {
		walk(r.Params[p])
	}
	return out
}

// redact replaces each secret in s.
func redact(s string, secrets []string) string {
	for _, x := range secrets {
		if strings.Contains(s, x) {
			s = strings.ReplaceAll(s, x, "[redacted]")
		}
	}
	return s
}

// withCorrective is a change's message with Puppet's " (corrective)": at
// the end of its first line (a message that carries its diff below).
func withCorrective(msg string) string {
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return msg[:i] + " (corrective)" + msg[i:]
	}
	return msg + " (corrective)"
}
