package report

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"time"
)

// Report is a run's outcome, as Puppet's transaction report holds it
// (see the package doc for who fills what).
type Report struct {
	Host, Environment, ConfigurationVersion, CatalogUUID string
	// TransactionUUID is the run's (an agent sends it with the node and
	// catalog requests too); Finish makes one when the run set none.
	TransactionUUID string
	// CodeID is the static catalog's code_id ("" for none, left out as
	// Puppet leaves it).
	CodeID   string
	Time     time.Time
	Duration time.Duration
	Noop     bool
	// Status is changed, unchanged or failed.
	Status string
	// Incomplete: the run stopped before the catalog was applied to its
	// end (no catalog could be had, or the walk was interrupted): Puppet's
	// transaction_completed false, and the status failed.
	Incomplete bool
	// Statuses are the resources' outcomes in the order they were walked.
	Statuses []*Status
	// Logs are the run's log lines at the level the Log keeps (notice and
	// above unless told otherwise); an agent adds its own lines before
	// and after the walk's.
	Logs []LogEntry
	// PuppetVersion names the Puppet the report says it is compatible
	// with (Puppet's report field, and the X-Puppet-Version header Submit
	// sends); "" writes protocol.PuppetVersion, the release whose
	// semantics pippet follows.
	PuppetVersion string
	// Meta is what an agent run adds (nil: a `receiver apply` run, written
	// as `puppet apply` writes its report).
	Meta *Meta
}

// Meta is what an agent run knows of itself that the catalog walk does
// not: where its catalog came from, and how long each of its phases
// took. Given (Report.Meta), the report is an agent's: its run mode is
// agent, its time metric holds the phases, and it holds the resources
// Puppet's agent adds to every catalog (the default schedules and
// Filebucket[puppet]). The run's identifiers (transaction UUID, code id)
// and the Puppet version are the Report's own fields, set by the run.
type Meta struct {
	// CachedCatalogStatus: not_used, explicitly_requested or on_failure.
	CachedCatalogStatus string
	// JobID is the orchestrator's job; "" leaves it out, as Puppet does.
	JobID string
	// ServerUsed is host:port of the server chosen from server_list
	// ("" leaves it out, as Puppet does when server_list is not set).
	ServerUsed string
	// InitialEnvironment is the environment the run started with (the
	// summary's application.initial_environment; "" is the report's).
	InitialEnvironment string
	// Timings are the phases' wall times, by Puppet's names: node_retrieval,
	// plugin_sync, fact_generation, convert_catalog, config_retrieval,
	// transaction_evaluation, catalog_application, total (the whole run;
	// without it, the walk's duration), and any other.
	Timings map[string]time.Duration
}

// StatusAudit is the status of an event that reports an audited value
// changed since the last run (Puppet's "audit").
const StatusAudit = "audit"

// LogEntry is one line of a run's log, as the report keeps it.
type LogEntry struct {
	Level   slog.Level
	Message string
	// Source is the resource's containment path, or "Puppet".
	Source string
	Time   time.Time
	// Tags, File and Line are those of the resource the line is about
	// (none for a line of Puppet's own); the report adds the level's
	// name to the tags, as Puppet does.
	Tags []string
	File string
	Line int
}

// Status is one resource's outcome.
type Status struct {
	Resource, Type, Title string
	// Path is the containment path (/Stage[main]/Main/File[/x]).
	Path string
	// Containment is Path's elements.
	Containment []string
	File        string
	Line        int
	Tags        []string
	Time        time.Time
	// EvaluationTime is how long the resource took (none when skipped).
	EvaluationTime                                                  time.Duration
	Changed, Failed, Skipped, OutOfSync, FailedToRestart, Scheduled bool
	// Provider is the provider that applied it (Puppet's provider_used;
	// "" for a type without providers, or one applied by Puppet itself).
	Provider string
	// CorrectiveChange: a change brought the resource back to the value
	// the run before had set (drift corrected).
	CorrectiveChange bool
	Events           []Event
	// Generated are the statuses of the resources Puppet generated for
	// this one (a delegated concat_file's File), also in the report's
	// list right after it.
	Generated []*Status
}

// Event is one change of a resource, made, wanted (noop) or failed.
type Event struct {
	// Property is "" for a refresh.
	Property          string
	Previous, Desired any
	Message, Status   string
	// Name is Puppet's: file_created, content_changed, refresh, ...
	Name string
	// Audited: the property is audited (the audit metaparameter);
	// Historical is then the value recorded by the run before, if any.
	Audited    bool
	Historical any
	// Redacted: the values are a Sensitive property's, replaced.
	Redacted bool
	// CorrectiveChange: the change set the property back to the value
	// the run before had set.
	CorrectiveChange bool
	// Time is when it happened (zero: the resource's time).
	Time time.Time
}

// Find returns the status of ref (Type[title]), or nil.
func (r *Report) Find(ref string) *Status {
	for _, s := range r.Statuses {
		if s.Resource == ref {
			return s
		}
	}
	return nil
}

// Finish sets what the walk's end decides: the status, and a transaction
// UUID when the report has none.
func (r *Report) Finish() {
	r.Status = r.status()
	if r.TransactionUUID == "" {
		r.TransactionUUID = uuid()
	}
}

// status is changed, unchanged or failed, as Puppet computes it.
func (r *Report) status() string {
	if r.Incomplete {
		return "failed"
	}
	st := "unchanged"
	for _, s := range r.Statuses {
		if s.Failed || s.FailedToRestart {
			return "failed"
		}
		for _, e := range s.Events {
			if e.Status == "success" {
				st = "changed"
			}
		}
	}
	return st
}

// Counts are the report's resource metrics.
type Counts struct {
	Total, Changed, Failed, FailedToRestart, Skipped, Scheduled, OutOfSync, Restarted, CorrectiveChange int
	Changes, EventsSuccess, EventsFailure, EventsNoop                                                   int
}

// Counts counts the statuses and events.
func (r *Report) Counts() Counts {
	var c Counts
	for _, s := range r.Statuses {
		c.Total++
		if s.Changed {
			c.Changed++
		}
		if s.Failed {
			c.Failed++
		}
		if s.FailedToRestart {
			c.FailedToRestart++
		}
		if s.Skipped {
			c.Skipped++
		}
		if s.Scheduled {
			c.Scheduled++
		}
		if s.OutOfSync {
			c.OutOfSync++
		}
		for _, e := range s.Events {
			switch e.Status {
			case "success":
				c.EventsSuccess++
				if e.Name == "refresh" {
					c.Restarted++
				} else {
					c.Changes++
				}
			case "failure":
				c.EventsFailure++
			case "noop":
				c.EventsNoop++
			}
		}
	}
	return c
}

// ExitCode is `puppet apply --detailed-exitcodes`': 2 when something
// changed, 4 when something failed, 6 for both, 0 otherwise.
func (r *Report) ExitCode() int {
	code := 0
	c := r.Counts()
	if c.Changes > 0 || c.Restarted > 0 {
		code |= 2
	}
	if c.Failed > 0 || c.FailedToRestart > 0 {
		code |= 4
	}
	return code
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
