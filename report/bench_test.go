package report_test

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/pippet/pippet/report"
)

// bigReport is a converged node's report: n resources, one in ten
// changed, a log line each.
func bigReport(n int) *report.Report {
	start := time.Now()
	r := &report.Report{Host: "node1", Environment: "production", ConfigurationVersion: "1795721707",
		Time: start, Duration: time.Second, Status: "changed", TransactionUUID: "u"}
	for i := 0; i < n; i++ {
		ref := fmt.Sprintf("File[/etc/app/conf.d/%04d.conf]", i)
		s := &report.Status{Resource: ref, Type: "File", Title: ref[5 : len(ref)-1], Provider: "posix",
			Path: "/Stage[main]/App/" + ref, Containment: []string{"Stage[main]", "App", ref},
			File: "/etc/puppet/code/environments/production/modules/app/manifests/init.pp", Line: 12,
			Tags: []string{"file", "class", "app"}, Time: start, EvaluationTime: time.Millisecond, Scheduled: true}
		if i%10 == 0 {
			s.Changed, s.OutOfSync = true, true
			s.Events = []report.Event{{Property: "content", Previous: "{sha256}aa", Desired: "{sha256}bb",
				Message: "content changed '{sha256}aa' to '{sha256}bb'", Status: "success", Name: "content_changed"}}
			r.Logs = append(r.Logs, report.LogEntry{Level: 2, Source: "/Stage[main]/App/" + ref + "/content",
				Message: s.Events[0].Message, Time: start, Tags: s.Tags, File: s.File, Line: s.Line})
		}
		r.Statuses = append(r.Statuses, s)
	}
	return r
}

func BenchmarkReport1000(b *testing.B) {
	r := bigReport(1000)
	r.PuppetVersion = "7.23.0"
	r.Meta = &report.Meta{Timings: map[string]time.Duration{"total": time.Second}}
	b.Run("JSON", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			body, err := r.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
		}
	})
	b.Run("YAML", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := r.WriteYAML(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("summary", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := r.WriteSummary(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
