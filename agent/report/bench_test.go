package report_test

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/pippet/pippet/agent/report"
	"github.com/pippet/pippet/catalog"
)

// bigReport is a converged node's report: n resources, one in ten
// changed, a log line each.
func bigReport(n int) *catalog.Report {
	start := time.Now()
	r := &catalog.Report{Host: "node1", Environment: "production", ConfigurationVersion: "1795721707",
		Time: start, Duration: time.Second, Status: "changed", TransactionUUID: "u"}
	for i := 0; i < n; i++ {
		ref := fmt.Sprintf("File[/etc/app/conf.d/%04d.conf]", i)
		s := &catalog.Status{Resource: ref, Type: "File", Title: ref[5 : len(ref)-1], Provider: "posix",
			Path: "/Stage[main]/App/" + ref, Containment: []string{"Stage[main]", "App", ref},
			File: "/etc/puppet/code/environments/production/modules/app/manifests/init.pp", Line: 12,
			Tags: []string{"file", "class", "app"}, Time: start, EvaluationTime: time.Millisecond, Scheduled: true}
		if i%10 == 0 {
			s.Changed, s.OutOfSync = true, true
			s.Events = []catalog.Event{{Property: "content", Previous: "{sha256}aa", Desired: "{sha256}bb",
				Message: "content changed '{sha256}aa' to '{sha256}bb'", Status: "success", Name: "content_changed"}}
			r.Logs = append(r.Logs, catalog.LogEntry{Level: 2, Source: "/Stage[main]/App/" + ref + "/content",
				Message: s.Events[0].Message, Time: start, Tags: s.Tags, File: s.File, Line: s.Line})
		}
		r.Statuses = append(r.Statuses, s)
	}
	return r
}

func BenchmarkReport1000(b *testing.B) {
	r := bigReport(1000)
	m := report.Meta{TransactionUUID: "u", PuppetVersion: "7.23.0", Timings: map[string]time.Duration{"total": time.Second}}
	b.Run("JSON", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			body, err := report.JSON(r, m)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
		}
	})
	c := *r
	c.Meta = &m
	b.Run("YAML", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := c.WriteYAML(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("summary", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := c.WriteSummary(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
