package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pippet/pippet/agent/facts"
	"github.com/pippet/pippet/agent/server"
)

// This file holds what a run does around its requests as Puppet's agent
// does: the server chosen from server_list (the first whose status
// endpoint answers), the run lock waited for (waitforlock), the run
// bounded (runtimeout) and the facts sent again after the apply
// (resubmit_facts).

// statusPaths are the status endpoints Puppet asks a server_list entry:
// the second when the first is not found (an older server).
var statusPaths = []string{"/status/v1/simple/server", "/status/v1/simple/master"}

// statusError is a status request that got an answer other than 2xx.
type statusError struct {
	Code   int
	Reason string
}

func (e *statusError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Reason) }

// simpleStatus asks the server at base whether it is up, as Puppet's
// get_simple_status: GET /status/v1/simple/server (then .../master on a
// 404); nil when it answers 2xx, a *statusError for another answer, else
// the request's error in Puppet's words ("Request to URL failed after N
// seconds: ...").
func simpleStatus(ctx context.Context, hc *http.Client, base string) error {
	for i, p := range statusPaths {
		u := base + p
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "*/*")
		resp, err := server.Send(hc, req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return nil
		}
		if resp.StatusCode == http.StatusNotFound && i == 0 {
			continue
		}
		return &statusError{Code: resp.StatusCode, Reason: strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))}
	}
	return nil // not reached
}

// probeTLS is the TLS configuration of the status requests made before
// the certificates are checked: verified against the ssldir's CA
// certificate when there is one, else not verified (the status says
// nothing secret, and the CA certificate itself is fetched that way by
// the bootstrap, as Puppet's).
func (r *run) probeTLS() *tls.Config {
	b, err := os.ReadFile(filepath.Join(r.s.SSLDir, "certs", "ca.pem"))
	if err == nil {
		pool := x509.NewCertPool()
		if pool.AppendCertsFromPEM(b) {
			return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
	}
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // status only, as Puppet's bootstrap
}

// selectServer chooses the run's server from server_list as Puppet's
// agent: each entry's status is asked in order and the first that
// answers serves the run (and the CA and report requests unless
// ca_server and report_server are set). Each failure is a warning, the
// last one an error; when none answers the run goes on with the first
// entry, its catalog from the cache, when usecacheonfailure says so, and
// fails otherwise (false).
func (r *run) selectServer(ctx context.Context) bool {
	list := r.s.ServerList
	hc := server.HTTPClient(r.probeTLS(), r.s.HTTPConnectTimeout, r.s.HTTPReadTimeout)
	defer hc.CloseIdleConnections()
	for i, hp := range list {
		port := hp.Port
		if port == 0 {
			port = r.s.ServerPort
		}
		err := simpleStatus(ctx, hc, baseURL(hp.Host, port))
		if err == nil {
			r.host, r.port = hp.Host, port
			r.serverUsed = fmt.Sprintf("%s:%d", hp.Host, port)
			r.log.Debug(fmt.Sprintf("Selected puppet server from the `server_list` setting: %s:%d", hp.Host, port))
			return true
		}
		if ctx.Err() != nil {
			break
		}
		var msg string
		var se *statusError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("Puppet server %s:%d is unavailable: %d %s", hp.Host, port, se.Code, se.Reason)
		} else {
			msg = fmt.Sprintf("Unable to connect to server from server_list setting: %v", err)
		}
		if i < len(list)-1 {
			r.log.Warn(msg + " Trying with next server from server_list.")
		} else {
			r.log.Error(msg)
		}
	}
	r.log.Debug("Unable to connect to server from server_list setting: No more routes to puppet")
	detail := fmt.Sprintf("Could not select a functional puppet server from server_list: '%s'", r.s.Values["server_list"])
	if !r.s.UseCacheOnFailure || ctx.Err() != nil {
		r.log.Error(fmt.Sprintf("Could not run %s: %s", client, detail))
		return false
	}
	// As Puppet: the first entry, no pluginsync, the cached catalog.
	r.log.Error(detail)
	r.host, r.port = list[0].Host, list[0].Port
	if r.port == 0 {
		r.port = r.s.ServerPort
	}
	r.serverFailed = true
	return true
}

// caAddr is where the certificate requests go: ca_server and ca_port,
// or the server chosen from server_list when ca_server was not set.
func (r *run) caAddr() (string, int) {
	if r.host != "" && !r.s.SetByConfig("ca_server") {
		return r.host, r.port
	}
	return r.s.CAServer, r.s.CAPort
}

// reportAddr is where the report goes: report_server and report_port,
// or the run's server when server_list chose it and report_server was
// not set.
func (r *run) reportAddr() (string, int) {
	if (r.host != "" && !r.s.SetByConfig("report_server")) || r.s.ReportServer == "" {
		return r.serverAddr()
	}
	return r.s.ReportServer, r.s.ReportPort
}

// Puppet's lines about the run lock and the run's time bound.
const (
	msgWaitingForLock  = "Another puppet instance is already running; --waitforlock flag used, waiting for running instance to finish."
	msgLockTimedOut    = "Exiting now because the maxwaitforlock timeout has been exceeded."
	msgRuntimeExceeded = "Execution of %s did not complete within %d seconds and was terminated."
)

// resubmitFacts gathers the facts again and sends them to the run's
// server (PUT /puppet/v3/facts/CERTNAME?environment=ENV), as Puppet's
// agent does after the apply when resubmit_facts is on. A failure is
// logged ("Failed to submit facts: ...") and does not fail the run.
func (r *run) resubmitFacts(ctx context.Context, hc *http.Client, env string) {
	start := time.Now()
	defer func() { r.timings[TimeResubmitFacts] = time.Since(start) }()
	f, errs := facts.Gather(ctx, r.gatherOptions())
	for _, err := range errs {
		var cw *facts.CacheWarning
		if errors.As(err, &cw) {
			r.log.Warn("Facter: " + err.Error())
			continue
		}
		r.log.Error("Facter: " + err.Error())
	}
	body, err := server.FactsJSON(r.s.Certname, f, r.factsOptions())
	if err == nil {
		host, port := r.serverAddr()
		r.log.Info(fmt.Sprintf("Uploading facts for %s to %s", r.s.Certname, host))
		err = putFacts(ctx, hc, baseURL(host, port), r.s.Certname, env, body)
	}
	if err != nil {
		r.log.Error(fmt.Sprintf("Failed to submit facts: %v", err))
	}
}

// putFacts is Puppet's put_facts: the facts document to
// /puppet/v3/facts/NAME?environment=ENV.
func putFacts(ctx context.Context, hc *http.Client, base, certname, env string, body []byte) error {
	u := base + "/puppet/v3/facts/" + url.PathEscape(certname) + "?" + url.Values{"environment": {env}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := server.Send(hc, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("Error %d on SERVER: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}
