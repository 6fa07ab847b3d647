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
)

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

// Submit PUTs body (a report's MarshalJSON) to base (https://host:port)
// as /puppet/v3/report/CERTNAME?environment=ENV with hc, as Puppet's
// agent does, with version (the report's Version) as X-Puppet-Version.
// A refusal is an *Error worded as Puppet words it ("Error 400 on
// SERVER: ..."); the agent logs "Could not send report: " and the error,
// and goes on.
func Submit(ctx context.Context, hc *http.Client, base, certname, env string, body []byte, version string) error {
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
	req.Header.Set("X-Puppet-Version", version)
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
// last_run_summary.yaml (summaryFile) as Puppet writes them, each
// through applier/atomicfile (a temporary file in its directory, synced,
// renamed into place, the directory synced; mode 0640); "" skips one.
func WriteFiles(r *Report, reportFile, summaryFile string) error {
	if reportFile != "" {
		if err := writeFile(reportFile, r.WriteYAML); err != nil {
			return err
		}
	}
	if summaryFile != "" {
		if err := writeFile(summaryFile, r.WriteSummary); err != nil {
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
