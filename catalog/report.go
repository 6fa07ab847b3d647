package catalog

import (
	"crypto/rand"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/internal/puppetlog"
)

// Report is a run's outcome, as Puppet's transaction report holds it.
type Report struct {
	Host, Environment, ConfigurationVersion, CatalogUUID string
	TransactionUUID                                      string
	Time                                                 time.Time
	Duration                                             time.Duration
	Noop                                                 bool
	// Status is changed, unchanged or failed.
	Status string
	// Statuses are the resources' outcomes in the order they were walked.
	Statuses []*Status
	// Logs are the run's log lines at notice and above.
	Logs []LogEntry
	// PuppetVersion names the Puppet the report says it is compatible
	// with (Puppet's report field); "" writes pippet's version.
	PuppetVersion string
}

// Status is one resource's outcome.
type Status struct {
	Resource, Type, Title string
	// Path is the containment path (/Stage[main]/Main/File[/x]).
	Path string
	// Containment is Path's elements.
	Containment                                                     []string
	File                                                            string
	Line                                                            int
	Tags                                                            []string
	Time                                                            time.Time
	EvaluationTime                                                  time.Duration
	Changed, Failed, Skipped, OutOfSync, FailedToRestart, Scheduled bool
	Events                                                          []Event
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
	r.Status = "unchanged"
	for _, s := range r.Statuses {
		if s.Failed || s.FailedToRestart {
			r.Status = "failed"
			return
		}
		if s.Changed {
			r.Status = "changed"
		}
	}
	if r.TransactionUUID == "" {
		r.TransactionUUID = uuid()
	}
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

// node builds YAML mapping nodes with keys in the order given.
type node = yaml.Node

func mapping(kv ...any) *node {
	n := &node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, scalar(kv[i]), value(kv[i+1]))
	}
	return n
}

func scalar(v any) *node {
	n := &node{}
	_ = n.Encode(v)
	return n
}

func value(v any) *node {
	if n, ok := v.(*node); ok {
		return n
	}
	return scalar(v)
}

func seq(items ...*node) *node {
	return &node{Kind: yaml.SequenceNode, Content: items}
}

func (r *Report) version() string {
	if r.PuppetVersion != "" {
		return r.PuppetVersion
	}
	return "pippet"
}

// WriteYAML writes Puppet's transaction report (the YAML `puppet apply
// --lastrunreport FILE` writes, report_format 12).
func (r *Report) WriteYAML(w io.Writer) error {
	c := r.Counts()
	logs := seq()
	for _, l := range r.Logs {
		logs.Content = append(logs.Content, mapping(
			"level", puppetlog.Name(l.Level), "message", l.Message, "source", l.Source,
			"tags", seq(scalar(puppetlog.Name(l.Level))), "time", l.Time.Format(time.RFC3339Nano), "file", nil, "line", nil))
	}
	statuses := mapping()
	for _, s := range r.Statuses {
		events := seq()
		for _, e := range s.Events {
			var prop any
			if e.Property != "" {
				prop = e.Property
			}
			events.Content = append(events.Content, mapping(
				"audited", e.Audited, "property", prop, "previous_value", e.Previous, "desired_value", e.Desired,
				"historical_value", e.Historical, "message", e.Message, "name", e.Name, "status", e.Status,
				"time", s.Time.Format(time.RFC3339Nano), "redacted", nil, "corrective_change", false))
		}
		tags := seq()
		for _, t := range s.Tags {
			tags.Content = append(tags.Content, scalar(t))
		}
		cpath := seq()
		for _, p := range s.Containment {
			cpath.Content = append(cpath.Content, scalar(p))
		}
		var file, line any
		if s.File != "" {
			file, line = s.File, s.Line
		}
		changes, oos := 0, 0
		for _, e := range s.Events {
			if e.Status == "success" {
				changes++
			}
			if e.Status != StatusAudit {
				oos++
			}
		}
		statuses.Content = append(statuses.Content, scalar(s.Resource), mapping(
			"title", s.Title, "file", file, "line", line, "resource", s.Resource, "resource_type", s.Type,
			"provider_used", nil, "containment_path", cpath, "evaluation_time", s.EvaluationTime.Seconds(),
			"tags", tags, "time", s.Time.Format(time.RFC3339Nano), "failed", s.Failed,
			"failed_to_restart", s.FailedToRestart, "changed", s.Changed, "out_of_sync", s.OutOfSync,
			"skipped", s.Skipped, "change_count", changes, "out_of_sync_count", oos, "events", events,
			"corrective_change", false))
	}
	doc := mapping(
		"host", r.Host, "time", r.Time.Format(time.RFC3339Nano), "configuration_version", r.ConfigurationVersion,
		"transaction_uuid", r.TransactionUUID, "report_format", 12, "puppet_version", r.version(),
		"status", r.Status, "transaction_completed", true, "noop", r.Noop, "noop_pending", c.EventsNoop > 0,
		"environment", r.Environment, "logs", logs, "metrics", r.metrics(), "resource_statuses", statuses,
		"corrective_change", false, "catalog_uuid", r.CatalogUUID, "cached_catalog_status", "not_used",
	)
	doc.Tag = "!ruby/object:Puppet::Transaction::Report"
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return enc.Close()
}

func metric(name, label string, values [][3]any) *node {
	vs := seq()
	for _, v := range values {
		vs.Content = append(vs.Content, seq(scalar(v[0]), scalar(v[1]), scalar(v[2])))
	}
	return mapping("name", name, "label", label, "values", vs)
}

func (r *Report) metrics() *node {
	c := r.Counts()
	byType := map[string]float64{}
	for _, s := range r.Statuses {
		byType[strings.ToLower(s.Type)] += s.EvaluationTime.Seconds()
	}
	var types []string
	for t := range byType {
		types = append(types, t)
	}
	sort.Strings(types)
	var times [][3]any
	for _, t := range types {
		times = append(times, [3]any{t, strings.ToUpper(t[:1]) + t[1:], byType[t]})
	}
	times = append(times, [3]any{"total", "Total", r.Duration.Seconds()})
	return mapping(
		"resources", metric("resources", "Resources", [][3]any{
			{"total", "Total", c.Total}, {"skipped", "Skipped", c.Skipped}, {"failed", "Failed", c.Failed},
			{"failed_to_restart", "Failed to restart", c.FailedToRestart}, {"restarted", "Restarted", c.Restarted},
			{"changed", "Changed", c.Changed}, {"out_of_sync", "Out of sync", c.OutOfSync},
			{"scheduled", "Scheduled", c.Scheduled}, {"corrective_change", "Corrective change", 0}}),
		"time", metric("time", "Time", times),
		"changes", metric("changes", "Changes", [][3]any{{"total", "Total", c.Changes}}),
		"events", metric("events", "Events", [][3]any{
			{"total", "Total", c.EventsSuccess + c.EventsFailure + c.EventsNoop},
			{"failure", "Failure", c.EventsFailure}, {"success", "Success", c.EventsSuccess}}),
	)
}

// WriteSummary writes Puppet's last_run_summary.yaml (--lastrunfile).
func (r *Report) WriteSummary(w io.Writer) error {
	c := r.Counts()
	doc := mapping(
		"version", mapping("config", r.ConfigurationVersion, "puppet", r.version()),
		"resources", mapping("changed", c.Changed, "corrective_change", 0, "failed", c.Failed,
			"failed_to_restart", c.FailedToRestart, "out_of_sync", c.OutOfSync, "restarted", c.Restarted,
			"scheduled", c.Scheduled, "skipped", c.Skipped, "total", c.Total),
		"time", mapping("total", r.Duration.Seconds(), "last_run", r.Time.Unix()),
		"changes", mapping("total", c.Changes),
		"events", mapping("failure", c.EventsFailure, "success", c.EventsSuccess,
			"total", c.EventsSuccess+c.EventsFailure+c.EventsNoop),
	)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	return enc.Close()
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
