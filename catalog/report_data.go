package catalog

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"gopkg.in/yaml.v3"

	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
)

// The report as Puppet 7 serializes it (Puppet::Transaction::Report's
// to_data_hash, report_format 12): one model, encoded as JSON for the
// server and as YAML for the files, its members in Puppet's order.

// ReportFormat is the report_format Puppet 7 writes.
const ReportFormat = 12

type reportData struct {
	Host                 string         `json:"host" yaml:"host"`
	Time                 string         `json:"time" yaml:"time"`
	ConfigurationVersion any            `json:"configuration_version" yaml:"configuration_version"`
	TransactionUUID      string         `json:"transaction_uuid" yaml:"transaction_uuid"`
	ReportFormat         int            `json:"report_format" yaml:"report_format"`
	PuppetVersion        string         `json:"puppet_version" yaml:"puppet_version"`
	Status               string         `json:"status" yaml:"status"`
	TransactionCompleted bool           `json:"transaction_completed" yaml:"transaction_completed"`
	Noop                 bool           `json:"noop" yaml:"noop"`
	NoopPending          bool           `json:"noop_pending" yaml:"noop_pending"`
	Environment          string         `json:"environment" yaml:"environment"`
	Logs                 []logData      `json:"logs" yaml:"logs"`
	Metrics              metricsData    `json:"metrics" yaml:"metrics"`
	ResourceStatuses     statusesData   `json:"resource_statuses" yaml:"resource_statuses"`
	CorrectiveChange     bool           `json:"corrective_change" yaml:"corrective_change"`
	ServerUsed           string         `json:"server_used,omitempty" yaml:"server_used,omitempty"`
	CatalogUUID          string         `json:"catalog_uuid,omitempty" yaml:"catalog_uuid,omitempty"`
	CodeID               string         `json:"code_id,omitempty" yaml:"code_id,omitempty"`
	JobID                string         `json:"job_id,omitempty" yaml:"job_id,omitempty"`
	CachedCatalogStatus  string         `json:"cached_catalog_status,omitempty" yaml:"cached_catalog_status,omitempty"`
	summary              summaryFigures `json:"-" yaml:"-"`
}

type logData struct {
	Level   string   `json:"level" yaml:"level"`
	Message string   `json:"message" yaml:"message"`
	Source  string   `json:"source" yaml:"source"`
	Tags    []string `json:"tags" yaml:"tags"`
	Time    string   `json:"time" yaml:"time"`
	File    *string  `json:"file" yaml:"file"`
	Line    *int     `json:"line" yaml:"line"`
}

type metricsData struct {
	Resources metricData `json:"resources" yaml:"resources"`
	Time      metricData `json:"time" yaml:"time"`
	Changes   metricData `json:"changes" yaml:"changes"`
	Events    metricData `json:"events" yaml:"events"`
}

type metricData struct {
	Name   string  `json:"name" yaml:"name"`
	Label  string  `json:"label" yaml:"label"`
	Values [][]any `json:"values" yaml:"values"`
}

type statusData struct {
	Title            string      `json:"title" yaml:"title"`
	File             *string     `json:"file" yaml:"file"`
	Line             *int        `json:"line" yaml:"line"`
	Resource         string      `json:"resource" yaml:"resource"`
	ResourceType     string      `json:"resource_type" yaml:"resource_type"`
	ProviderUsed     *string     `json:"provider_used" yaml:"provider_used"`
	ContainmentPath  []string    `json:"containment_path" yaml:"containment_path"`
	EvaluationTime   *seconds    `json:"evaluation_time" yaml:"evaluation_time"`
	Tags             []string    `json:"tags" yaml:"tags"`
	Time             string      `json:"time" yaml:"time"`
	Failed           bool        `json:"failed" yaml:"failed"`
	FailedToRestart  bool        `json:"failed_to_restart" yaml:"failed_to_restart"`
	Changed          bool        `json:"changed" yaml:"changed"`
	OutOfSync        bool        `json:"out_of_sync" yaml:"out_of_sync"`
	Skipped          bool        `json:"skipped" yaml:"skipped"`
	ChangeCount      int         `json:"change_count" yaml:"change_count"`
	OutOfSyncCount   int         `json:"out_of_sync_count" yaml:"out_of_sync_count"`
	Events           []eventData `json:"events" yaml:"events"`
	CorrectiveChange bool        `json:"corrective_change" yaml:"corrective_change"`
}

type eventData struct {
	Audited          bool    `json:"audited" yaml:"audited"`
	Property         *string `json:"property" yaml:"property"`
	PreviousValue    any     `json:"previous_value" yaml:"previous_value"`
	DesiredValue     any     `json:"desired_value" yaml:"desired_value"`
	HistoricalValue  any     `json:"historical_value" yaml:"historical_value"`
	Message          string  `json:"message" yaml:"message"`
	Name             *string `json:"name" yaml:"name"`
	Status           string  `json:"status" yaml:"status"`
	Time             string  `json:"time" yaml:"time"`
	Redacted         *bool   `json:"redacted" yaml:"redacted"`
	CorrectiveChange bool    `json:"corrective_change" yaml:"corrective_change"`
}

// statusesData is resource_statuses: a mapping from each resource's
// reference to its status, in the order the resources were evaluated.
type statusesData []*statusData

func (s statusesData) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, st := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(st.Resource)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(st)
		if err != nil {
			return nil, fmt.Errorf("the status of %s: %w", st.Resource, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// seconds is a duration as Puppet's report gives it: a float, written
// with its dot (3.0, 1.0e-05) so that JSON and Ruby's YAML read a Float.
type seconds float64

func (s seconds) MarshalJSON() ([]byte, error) {
	return []byte(rubyFloat(strconv.FormatFloat(float64(s), 'g', -1, 64))), nil
}

func (s seconds) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: rubyFloat(strconv.FormatFloat(float64(s), 'g', -1, 64))}, nil
}

// puppetTime is Ruby's Time#iso8601(9): nanoseconds and a numeric offset.
func puppetTime(t time.Time) string {
	return t.Format("2006-01-02T15:04:05.000000000-07:00")
}

// labelize is Puppet's metric label: "failed_to_restart" gives "Failed
// to restart".
func labelize(name string) string {
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + strings.ReplaceAll(strings.ToLower(name[1:]), "_", " ")
}

// configVersion is the catalog's version as the catalog gave it: Puppet's
// default version (the compile time) is an integer.
func configVersion(v string) any {
	if v == "" {
		return nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		return n
	}
	return v
}

// phaseOrder is the order Puppet's agent adds its phases' times in.
var phaseOrder = []string{"startup_time", "node_retrieval", "plugin_sync", "fact_generation", "convert_catalog",
	"config_retrieval", "transaction_evaluation", "catalog_application", "resubmit_facts"}

// defaultResources are the resources Puppet's agent adds to every
// catalog it applies (the default schedules, then the default filebucket).
var defaultResources = []string{"Schedule[puppet]", "Schedule[hourly]", "Schedule[daily]", "Schedule[weekly]",
	"Schedule[monthly]", "Schedule[never]", "Filebucket[puppet]"}

// summaryFigures are the counts the summary and the metrics share.
type summaryFigures struct {
	// total is the run's whole time (the summary's last_run is its end).
	total     time.Duration
	resources [][]any
	times     [][]any
	changes   int
	events    [][]any
}

// statuses are the statuses the report holds: the walk's, and for an
// agent's run the resources its agent adds to every catalog.
func (r *Report) statuses() []*Status {
	if r.Meta == nil || (len(r.Statuses) == 0 && r.Incomplete) {
		return r.Statuses
	}
	have := make(map[string]bool, len(r.Statuses))
	for _, s := range r.Statuses {
		have[s.Resource] = true
	}
	out := r.Statuses
	t := r.Time.Add(r.Duration)
	for _, ref := range defaultResources {
		if have[ref] {
			continue
		}
		typ, title, _ := parseRef(ref)
		out = append(out, &Status{Resource: ref, Type: typ, Title: title, Path: "/" + ref, Containment: []string{ref},
			Tags: []string{strings.ToLower(typ), title}, Time: t})
	}
	return out
}

// data is the report as Puppet serializes it.
func (r *Report) data() *reportData {
	m := r.Meta
	if m == nil {
		m = &Meta{}
	}
	d := &reportData{
		Host: r.Host, Time: puppetTime(r.Time), ConfigurationVersion: configVersion(r.ConfigurationVersion),
		TransactionUUID: r.TransactionUUID, ReportFormat: ReportFormat, PuppetVersion: r.version(),
		Status: r.Status, TransactionCompleted: !r.Incomplete, Noop: r.Noop, Environment: r.Environment,
		Logs: []logData{}, CatalogUUID: r.CatalogUUID, CachedCatalogStatus: "not_used",
		ServerUsed: m.ServerUsed, CodeID: r.CodeID, JobID: m.JobID,
	}
	if m.CodeID != "" {
		d.CodeID = m.CodeID
	}
	if m.TransactionUUID != "" {
		d.TransactionUUID = m.TransactionUUID
	}
	if m.CachedCatalogStatus != "" {
		d.CachedCatalogStatus = m.CachedCatalogStatus
	}
	if d.Status == "" || r.Incomplete {
		d.Status = r.status()
	}
	for _, l := range r.Logs {
		level := puppetlog.Name(l.Level)
		tags := append([]string{level}, l.Tags...)
		ld := logData{Level: level, Message: l.Message, Source: l.Source, Tags: tags, Time: puppetTime(l.Time)}
		if l.File != "" {
			f, n := l.File, l.Line
			ld.File, ld.Line = &f, &n
		}
		if ld.Source == "" {
			ld.Source = "Puppet"
		}
		d.Logs = append(d.Logs, ld)
	}
	sts := r.statuses()
	var (
		byType                 = map[string]float64{}
		types                  []string
		changes, evTotal       int
		failed, failedRestart  int
		skipped, oosN, changed int
		restarted, corrective  int
		evByStatus             = map[string]int{}
		evStatuses             = []string{"total", "failure", "success"}
	)
	d.ResourceStatuses = make(statusesData, 0, len(sts))
	for _, s := range sts {
		sd := s.data()
		d.ResourceStatuses = append(d.ResourceStatuses, sd)
		t := strings.ToLower(s.Type)
		if _, ok := byType[t]; !ok {
			types = append(types, t)
			byType[t] = 0
		}
		if sd.EvaluationTime != nil {
			byType[t] += float64(*sd.EvaluationTime)
		}
		changes += sd.ChangeCount
		for _, e := range sd.Events {
			evTotal++
			if _, ok := evByStatus[e.Status]; !ok && e.Status != "failure" && e.Status != "success" {
				evStatuses = append(evStatuses, e.Status)
			}
			evByStatus[e.Status]++
			if e.Status == "noop" {
				d.NoopPending = true
			}
		}
		if s.FailedToRestart {
			failedRestart++
		}
		if restartedBy(s) {
			restarted++
		}
		if s.Failed {
			failed++
		}
		if s.Skipped {
			skipped++
		}
		if sd.OutOfSync {
			oosN++
		}
		if s.Changed {
			changed++
		}
		if sd.CorrectiveChange {
			corrective++
			d.CorrectiveChange = true
		}
	}
	evByStatus["total"] = evTotal
	fig := summaryFigures{
		resources: [][]any{{"total", "Total", len(sts)}, {"skipped", "Skipped", skipped}, {"failed", "Failed", failed},
			{"failed_to_restart", "Failed to restart", failedRestart}, {"restarted", "Restarted", restarted},
			{"changed", "Changed", changed}, {"out_of_sync", "Out of sync", oosN},
			{"scheduled", "Scheduled", 0}, {"corrective_change", "Corrective change", corrective}},
		changes: changes,
	}
	for _, t := range types {
		fig.times = append(fig.times, []any{t, labelize(t), seconds(byType[t])})
	}
	total := r.Duration
	if r.Meta == nil {
		fig.times = append(fig.times, []any{"total", "Total", seconds(total.Seconds())})
	} else {
		seen := map[string]bool{"total": true}
		add := func(name string) {
			if v, ok := m.Timings[name]; ok && !seen[name] {
				seen[name] = true
				fig.times = append(fig.times, []any{name, labelize(name), seconds(v.Seconds())})
			}
		}
		for _, name := range phaseOrder {
			add(name)
		}
		var rest []string
		for name := range m.Timings {
			if !seen[name] {
				rest = append(rest, name)
			}
		}
		sort.Strings(rest)
		for _, name := range rest {
			add(name)
		}
		if v, ok := m.Timings["total"]; ok {
			total = v
		}
		fig.times = append(fig.times, []any{"total", "Total", seconds(total.Seconds())})
	}
	fig.total = total
	for _, st := range evStatuses {
		fig.events = append(fig.events, []any{st, labelize(st), evByStatus[st]})
	}
	d.summary = fig
	d.Metrics = metricsData{
		Resources: metricData{Name: "resources", Label: "Resources", Values: fig.resources},
		Time:      metricData{Name: "time", Label: "Time", Values: fig.times},
		Changes:   metricData{Name: "changes", Label: "Changes", Values: [][]any{{"total", "Total", changes}}},
		Events:    metricData{Name: "events", Label: "Events", Values: fig.events},
	}
	return d
}

// restartedBy: the resource was refreshed (Puppet's restarted flag).
func restartedBy(s *Status) bool {
	for _, e := range s.Events {
		if e.Name == "refresh" && e.Status == "success" {
			return true
		}
	}
	return false
}

// data is the status as Puppet serializes it.
func (s *Status) data() *statusData {
	sd := &statusData{
		Title: s.Title, Resource: s.Resource, ResourceType: s.Type, ContainmentPath: s.Containment,
		Tags: s.Tags, Time: puppetTime(s.Time), Failed: s.Failed, FailedToRestart: s.FailedToRestart,
		Changed: s.Changed, OutOfSync: s.OutOfSync, Skipped: s.Skipped, Events: []eventData{},
		CorrectiveChange: s.CorrectiveChange,
	}
	if sd.ContainmentPath == nil {
		sd.ContainmentPath = []string{}
	}
	if sd.Tags == nil {
		sd.Tags = []string{}
	}
	if s.File != "" {
		f, n := s.File, s.Line
		sd.File, sd.Line = &f, &n
	}
	if s.Provider != "" {
		p := s.Provider
		sd.ProviderUsed = &p
	}
	if !s.Skipped {
		et := seconds(s.EvaluationTime.Seconds())
		sd.EvaluationTime = &et
	}
	for _, e := range s.Events {
		ed := eventData{
			Audited: e.Audited, PreviousValue: e.Previous, DesiredValue: e.Desired, HistoricalValue: e.Historical,
			Message: e.Message, Status: e.Status, CorrectiveChange: e.CorrectiveChange,
		}
		if e.Property != "" {
			p := e.Property
			ed.Property = &p
		}
		if e.Name != "" {
			n := e.Name
			ed.Name = &n
		}
		t := e.Time
		if t.IsZero() {
			t = s.Time
		}
		ed.Time = puppetTime(t)
		switch {
		case e.Redacted:
			ed.Redacted = &e.Redacted
		case e.Property == "" && e.Status != "failure":
			// Puppet's refresh events say redacted: false; a property's
			// change leaves it unset.
			f := false
			ed.Redacted = &f
		}
		if e.Status == "success" {
			sd.ChangeCount++
		}
		if e.Status != StatusAudit {
			sd.OutOfSyncCount++
		}
		sd.Events = append(sd.Events, ed)
	}
	return sd
}

// MarshalJSON is the report as Puppet's agent sends it to the server
// (to_data_hash as JSON, report_format 12).
func (r *Report) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.data())
	if err != nil {
		return nil, fmt.Errorf("the report as JSON: %w", err)
	}
	return b, nil
}

// WriteYAML writes Puppet's transaction report, as the agent writes
// last_run_report.yaml (and `puppet apply --lastrunreport FILE`), and
// as the server's store processor keeps it.
func (r *Report) WriteYAML(w io.Writer) error {
	// The YAML is made from the JSON: the same document by construction.
	body, err := json.Marshal(r.data())
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if _, err := io.WriteString(w, "--- !ruby/object:Puppet::Transaction::Report\n"); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := emitYAML(w, body); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// rubyFloat writes a float so that YAML 1.1 (Ruby's Psych) reads a float:
// with a dot before any exponent (1e-05 would be a string there).
func rubyFloat(s string) string {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if !hasExp {
		return mant
	}
	if exp != "" && exp[0] != '-' && exp[0] != '+' {
		exp = "+" + exp
	}
	return mant + "e" + exp
}

func writeDoc(w io.Writer, doc *yaml.Node, what string) error {
	if _, err := io.WriteString(w, "---\n"); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}

// WriteSummary writes Puppet's last_run_summary.yaml (--lastrunfile):
// each metric's values by label, as Puppet's raw_summary orders them.
func (r *Report) WriteSummary(w io.Writer) error {
	d := r.data()
	mode, initial := "user", r.Environment
	if r.Meta != nil {
		mode = "agent"
		if r.Meta.InitialEnvironment != "" {
			initial = r.Meta.InitialEnvironment
		}
	}
	byLabel := func(values [][]any, total bool) *yaml.Node {
		vs := append([][]any{}, values...)
		sort.SliceStable(vs, func(i, j int) bool { return vs[i][1].(string) < vs[j][1].(string) })
		n := mapping()
		hasTotal := false
		for _, v := range vs {
			hasTotal = hasTotal || v[0] == "total"
			n.Content = append(n.Content, scalar(v[0]), scalar(v[2]))
		}
		if total && !hasTotal {
			n.Content = append(n.Content, scalar("total"), scalar(0))
		}
		return n
	}
	times := byLabel(d.summary.times, false)
	times.Content = append(times.Content, scalar("last_run"), scalar(r.Time.Add(d.summary.total).Unix()))
	doc := mapping(
		"version", mapping("config", d.ConfigurationVersion, "puppet", d.PuppetVersion),
		"application", mapping("run_mode", mode, "initial_environment", initial, "converged_environment", r.Environment),
		"resources", byLabel(d.summary.resources, true),
		"time", times,
		"changes", mapping("total", d.summary.changes),
		"events", byLabel(d.summary.events, true),
	)
	return writeDoc(w, doc, "the summary")
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

func (r *Report) version() string {
	if r.Meta != nil && r.Meta.PuppetVersion != "" {
		return r.Meta.PuppetVersion
	}
	if r.PuppetVersion != "" {
		return r.PuppetVersion
	}
	// The Puppet release whose semantics the run followed: tools that
	// read reports (PuppetDB, Foreman, Puppetboard) expect a Puppet
	// version here. pippet says its own name where nothing reads a
	// version (the User-Agent of its requests).
	return protocol.PuppetVersion
}
