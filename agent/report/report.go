// Package report is the end of an agent run: the transaction report sent
// to the Puppet Server and left on disk for monitoring.
//
// The report itself is catalog.Report, filled by the catalog walk; the run
// adds what the walk cannot know (Meta: the transaction's UUID, where the
// catalog came from, how long each phase took) and the lines it logged
// before and after the walk (Report.Logs). One model is then written three
// ways, as Puppet 7's agent writes it, so that they agree:
//
//   - JSON, the body PUT to /puppet/v3/report/CERTNAME?environment=ENV
//     (Puppet::Transaction::Report#to_data_hash, report_format 12), which
//     the server hands to its report processors (store, PuppetDB's);
//   - last_run_report.yaml, the same document as YAML with Ruby's tag;
//   - last_run_summary.yaml, the metrics by name (what monitoring reads).
//
// Submit sends the JSON and says why the server refused it; WriteFiles
// writes the two files whole or not at all.
package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier/atomicfile"
	"github.com/pippet/pippet/catalog"
)

// Meta is what the run knows of itself that the catalog walk does not
// (catalog.Meta).
type Meta = catalog.Meta

// JSON is the report as Puppet 7's agent sends it to the server (Content-
// Type application/json): r with m's identifiers and phase times.
func JSON(r *catalog.Report, m Meta) ([]byte, error) {
	c := *r
	c.Meta = &m
	return c.MarshalJSON()
}

// Error is the server's refusal of a report: its HTTP status and the
// message it gave (the "message" of Puppet Server's JSON error, or the
// body).
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("Error %d on SERVER: %s", e.Code, e.Message)
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Submit PUTs body (JSON's) to base (https://host:port) as
// /puppet/v3/report/CERTNAME?environment=ENV with hc, as Puppet's agent
// does. A refusal is an *Error worded as Puppet words it ("Error 400 on
// SERVER: ..."); the agent logs "Could not send report: " and the error,
// and goes on.
func Submit(ctx context.Context, hc *http.Client, base, certname, env string, body []byte) error {
	if certname == "" {
		return errors.New("sending the report: no certname")
	}
	u := strings.TrimRight(base, "/") + "/puppet/v3/report/" + url.PathEscape(certname) +
		"?" + url.Values{"environment": {env}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("sending the report: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Puppet-Version", puppetVersion(body))
	// pippet's name, as in the agent's other requests; the version of
	// Puppet it follows is X-Puppet-Version's and the report's.
	req.Header.Set("User-Agent", "pippet")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("sending the report to %s: %w", base, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return &Error{Code: resp.StatusCode, Message: serverMessage(resp, data)}
}

// puppetVersion is the version the report claims, for the header Puppet
// sends with every request.
func puppetVersion(body []byte) string {
	var v struct {
		PuppetVersion string `json:"puppet_version"`
	}
	if json.Unmarshal(body, &v) == nil && v.PuppetVersion != "" {
		return v.PuppetVersion
	}
	return "7"
}

// serverMessage is what Puppet shows of an error answer: the message of a
// JSON error, else the body, else the status text.
func serverMessage(resp *http.Response, body []byte) string {
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			return e.Message
		}
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return s
	}
	return http.StatusText(resp.StatusCode)
}

// WriteFiles writes last_run_report.yaml (reportFile) and
// last_run_summary.yaml (summaryFile) as Puppet's agent does, each
// through a temporary file in its directory renamed into place (mode
// 0640); "" skips one.
func WriteFiles(r *catalog.Report, m Meta, reportFile, summaryFile string) error {
	c := *r
	c.Meta = &m
	if reportFile != "" {
		if err := writeFile(reportFile, c.WriteYAML); err != nil {
			return err
		}
	}
	if summaryFile != "" {
		if err := writeFile(summaryFile, c.WriteSummary); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(name string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o750); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	// A symlink in the way is replaced, not followed.
	err := atomicfile.WriteFunc(context.Background(), name, atomicfile.Options{Mode: 0o640, UID: -1, GID: -1}, write)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
