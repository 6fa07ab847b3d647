package catalog

import (
	"crypto/rand"
	"fmt"
	"time"
)

// Report is a run's outcome, as Puppet's transaction report holds it.
// It is written as Puppet writes it: WriteYAML (last_run_report.yaml,
// the report processors' YAML), WriteSummary (last_run_summary.yaml) and
// MarshalJSON (the body an agent PUTs to /puppet/v3/report), all three
// from one model, so that they say the same.
type Report struct {
	Host, Environment, ConfigurationVersion, CatalogUUID string
	TransactionUUID                                      string
	// CodeID is the static catalog's code_id ("" for none).
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
	// with (Puppet's report field); "" writes protocol.PuppetVersion, the
	// release whose semantics pippet follows.
	PuppetVersion string
	// Meta is what an agent run adds (nil: a `receiver apply` run, written
	// as `puppet apply` writes its report).
	Meta *Meta
}

// Meta is what a run knows of itself that the catalog walk does not: the
// agent's identifiers for the run, where its catalog came from, and how
// long each of its phases took. Given (Report.Meta), the report is an
// agent's: its run mode is agent, its time metric holds the phases, and
// it holds the resources Puppet's agent adds to every catalog (the
// default schedules and Filebucket[puppet]).
type Meta struct {
	// TransactionUUID is the run's (sent with the node and catalog
	// requests too); "" keeps the report's own.
	TransactionUUID string
	// CachedCatalogStatus: not_used, explicitly_requested or on_failure.
	CachedCatalogStatus string
	// CodeID is the static catalog's code_id; JobID the orchestrator's
	// job; "" leaves each out, as Puppet does.
	CodeID, JobID string
	// ServerUsed is host:port of the server chosen from server_list
	// ("" leaves it out, as Puppet does when server_list is not set).
	ServerUsed string
	// PuppetVersion is the version the report claims ("" keeps the
	// report's).
	PuppetVersion string
	// InitialEnvironment is the environment the run started with (the
	// summary's application.initial_environment; "" is the report's).
	InitialEnvironment string
	// Timings are the phases' wall times, by Puppet's names: node_retrieval,
	// plugin_sync, fact_generation, convert_catalog, config_retrieval,
	// transaction_evaluation, catalog_application, total (the whole run;
	// without it, the walk's duration), and any other.
	Timings map[string]time.Duration
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

func (r *Report) finish() {
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
