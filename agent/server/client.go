// Package server is the agent's side of a Puppet Server's catalog
// service, as Puppet 7's agent uses it: the node request that tells the
// agent its server-specified environment, the catalog request that
// sends the facts and receives a static catalog, the catalog cache, and
// the rules that decide which catalog a run applies.
//
// # Requests
//
// Client.Node asks GET /puppet/v3/node/CERTNAME and returns the node's
// environment. Client.Catalog posts the facts to
// /puppet/v3/catalog/CERTNAME with the form Puppet's agent sends
// (facts_format application/json, the facts document URI-escaped twice,
// static_catalog=true, checksum_type sha256.sha384.sha512.sha224.md5,
// check_environment=true, transaction_uuid, job_uuid and
// configured_environment) and accepts application/vnd.puppet.rich+json
// then application/json, as Puppet 7 does with rich_data on. The answer
// is read whole and parsed before anything uses it: a cut, truncated or
// malformed answer is an error, never a partial catalog, and is never
// cached.
//
// # Static catalogs
//
// The catalog keeps what a static catalog adds (code_id,
// catalog_format, the inlined metadata and recursive_metadata of File
// resources with puppet:///modules/ sources); catalog.Catalog.Static
// turns it into source.Static for the file type, which then asks no
// file_metadata for those files and reads their content from
// static_file_content when the catalog has a code_id.
//
// # Which catalog runs
//
// Retrieve follows Puppet's agent (configurer.rb): the cached catalog
// when use_cached_catalog says so; otherwise the node request for the
// server-specified environment (unless the environment was given on
// the command line or strict_environment_mode is set), the catalog
// request, and a new request each time the catalog comes back from
// another environment (at most four, as Puppet); when the request fails
// and usecacheonfailure is on, the cached catalog of the same
// environment. Result.CachedCatalogStatus says which (not_used,
// explicitly_requested, on_failure) for the report, and the log says it
// in Puppet's words.
//
// # Errors
//
// A server that cannot be reached (refused, timed out, TLS refused) is
// a *ConnectionError; an answer other than success is an *HTTPError
// carrying the server's message (a 404 worded as Puppet words it, with
// EnvironmentNotFound for an environment the server does not have); an
// answer that is not a catalog wraps ErrBadCatalog.
package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/catalog"
)

// ChecksumTypes are the checksum types the agent offers the server for
// static catalogs, in Puppet's order (supported_checksum_types).
var ChecksumTypes = []string{"sha256", "sha384", "sha512", "sha224", "md5"}

// Accept headers, as Puppet 7 sends them with rich_data on (the formats
// pippet reads: JSON and PSON are one for what a catalog holds).
const (
	acceptCatalog = "application/vnd.puppet.rich+json, application/json, text/pson"
	acceptNode    = "application/json, text/pson"
)

// maxNodeSize bounds a node answer (a few kilobytes: classes and
// parameters).
const maxNodeSize = 16 << 20

// Client talks to one Puppet Server's /puppet/v3 API for one node.
type Client struct {
	hc       *http.Client
	base     string
	certname string

	// ConfiguredEnvironment is sent as configured_environment (the
	// environment puppet.conf sets); empty: the environment requested.
	ConfiguredEnvironment string
	// JobID is sent as job_uuid (orchestrated runs); empty: none.
	JobID string
	// ReadTimeout bounds each wait for the server (the headers, then each
	// read of the body), as Puppet's http_read_timeout; 0: none beyond the
	// HTTP client's own.
	ReadTimeout time.Duration
	// UserAgent is sent as User-Agent (default "pippet").
	UserAgent string
}

// New returns a client of the server at base (https://host:port) for
// the node certname. hc carries the agent's TLS configuration and
// connect timeout (see HTTPClient).
func New(hc *http.Client, base string, certname string) *Client {
	return &Client{hc: hc, base: strings.TrimRight(base, "/"), certname: certname}
}

// Base is the server's base URL.
func (c *Client) Base() string { return c.base }

// Certname is the node's name.
func (c *Client) Certname() string { return c.certname }

// ConnectionError is a request that got no answer: refused, timed out,
// its TLS handshake failed (a revoked or unknown certificate), or cut.
type ConnectionError struct {
	URL     string
	Elapsed time.Duration
	Err     error
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("Request to %s failed after %.3f seconds: %v", e.URL, e.Elapsed.Seconds(), e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// Send sends req with hc: a request that got no answer is a
// *ConnectionError, in Puppet's words ("Request to URL failed after N
// seconds: ..."). For the agent's requests outside Client (the status of
// server_list's entries, the environment check, the facts resubmitted).
func Send(hc *http.Client, req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &ConnectionError{URL: req.URL.String(), Elapsed: time.Since(start), Err: err}
	}
	return resp, nil
}

// Timeout reports whether the request ended because the server was too
// slow (http_connect_timeout, http_read_timeout).
func (e *ConnectionError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.Is(e.Err, ErrReadTimeout) || errors.Is(e.Err, context.DeadlineExceeded) || (errors.As(e.Err, &t) && t.Timeout())
}

// ErrReadTimeout is the cause of a request ended because the server sent
// nothing for the read timeout.
var ErrReadTimeout = errors.New("timed out waiting for the server (http_read_timeout)")

// HTTPError is an answer of the server other than success.
type HTTPError struct {
	// Path is the request's path (no query), as Puppet's message shows it.
	Path string
	// Code is the HTTP status.
	Code int
	// Message is the server's message: the "message" of a JSON error
	// body, else the body, else the reason phrase.
	Message string
	// Body is the error body as sent (at most 64 KiB).
	Body string
}

func (e *HTTPError) Error() string {
	if e.Code == http.StatusNotFound {
		body := e.Body
		if body == "" {
			body = e.Message
		}
		return fmt.Sprintf("Find %s resulted in 404 with the message: %s", elide(e.Path, 100), strings.TrimSpace(body))
	}
	return fmt.Sprintf("Error %d on SERVER: %s", e.Code, e.Message)
}

// EnvironmentNotFound reports whether the server said the requested
// environment does not exist.
func (e *HTTPError) EnvironmentNotFound() bool {
	return e.Code == http.StatusNotFound && strings.Contains(e.Message, "Could not find environment")
}

// ErrBadCatalog is wrapped by the error of an answer that is not a
// whole, valid catalog (truncated, malformed, of another type).
var ErrBadCatalog = errors.New("the server's answer is not a valid catalog")

// elide shortens s to at most n characters as Puppet's elide does.
func elide(s string, n int) string {
	if len(s) <= n || n < 4 {
		return s
	}
	return s[:n-3] + "..."
}

// Node asks the server for the node's definition and returns its
// environment (the server-specified environment). env is the agent's
// current environment; facts are not sent (Puppet 7's agent sends none
// with the node request; the parameter is kept for the seam).
func (c *Client) Node(ctx context.Context, env string, facts []byte, transactionUUID string) (env2 string, err error) {
	_ = facts
	q := url.Values{}
	q.Set("environment", env)
	q.Set("configured_environment", c.configured(env))
	if transactionUUID != "" {
		q.Set("transaction_uuid", transactionUUID)
	}
	path := "/puppet/v3/node/" + url.PathEscape(c.certname)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path+"?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", acceptNode)
	raw, err := c.do(req, path, maxNodeSize)
	if err != nil {
		return "", err
	}
	var n struct {
		Name        string `json:"name"`
		Environment string `json:"environment"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("the server's node answer is not a node: %w", err)
	}
	if n.Environment == "" {
		return "", errors.New("the server's node answer names no environment")
	}
	return n.Environment, nil
}

func (c *Client) configured(env string) string {
	if c.ConfiguredEnvironment != "" {
		return c.ConfiguredEnvironment
	}
	return env
}

// queryEscape is Puppet's uri_query_encode: CGI escaping with spaces as
// %20 (never +).
func queryEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// CatalogForm is the form body of a catalog request, field by field in
// Puppet's order: the facts document is escaped twice, as Puppet's agent
// does (its server unescapes the facts once more after reading the
// form).
func (c *Client) CatalogForm(env string, factsJSON []byte, transactionUUID string) string {
	fields := [][2]string{
		{"facts_format", "application/json"},
		{"facts", queryEscape(string(factsJSON))},
		{"environment", env},
		{"configured_environment", c.configured(env)},
		{"check_environment", "true"},
		{"transaction_uuid", transactionUUID},
		{"job_uuid", c.JobID},
		{"static_catalog", "true"},
		{"checksum_type", strings.Join(ChecksumTypes, ".")},
	}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(f[0])
		b.WriteByte('=')
		b.WriteString(queryEscape(f[1]))
	}
	return b.String()
}

// Catalog posts the facts (a facts document, see FactsJSON) and returns
// the catalog compiled for env, parsed, with the answer's bytes (what
// SaveCache keeps). Nothing partial is returned: an answer cut short or
// not a catalog is an error wrapping ErrBadCatalog.
func (c *Client) Catalog(ctx context.Context, env string, factsJSON []byte, transactionUUID string) (*catalog.Catalog, []byte, error) {
	path := "/puppet/v3/catalog/" + url.PathEscape(c.certname)
	q := url.Values{"environment": {env}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path+"?"+q.Encode(),
		strings.NewReader(c.CatalogForm(env, factsJSON, transactionUUID)))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", acceptCatalog)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	raw, err := c.do(req, path, catalog.MaxSize)
	if err != nil {
		return nil, nil, err
	}
	cat, err := catalog.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadCatalog, err)
	}
	if _, err := cat.Static(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadCatalog, err)
	}
	return cat, raw, nil
}

// do sends req and reads the whole successful JSON answer (at most max
// bytes).
func (c *Client) do(req *http.Request, path string, max int64) ([]byte, error) {
	ua := c.UserAgent
	if ua == "" {
		ua = "pippet"
	}
	req.Header.Set("User-Agent", ua)
	ctx, cancel := context.WithCancelCause(req.Context())
	defer cancel(nil)
	w := newWatch(c.ReadTimeout, cancel)
	defer w.stop()
	start := time.Now()
	w.arm()
	resp, err := c.hc.Do(req.WithContext(ctx))
	w.disarm()
	redacted := req.URL.Redacted()
	fail := func(err error) error {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if cause := context.Cause(ctx); errors.Is(cause, ErrReadTimeout) {
			if errors.Is(err, ErrReadTimeout) {
				err = fmt.Errorf("%w (%v)", err, c.ReadTimeout)
			} else {
				err = fmt.Errorf("%w (%v): %w", ErrReadTimeout, c.ReadTimeout, err)
			}
		}
		return &ConnectionError{URL: redacted, Elapsed: time.Since(start), Err: err}
	}
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	body := &watchedReader{r: io.LimitReader(resp.Body, max+1), w: w}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		return nil, httpError(path, resp, raw)
	}
	raw, err := io.ReadAll(body)
	if err == nil && ctx.Err() != nil {
		// Ended by the read timeout or the caller while reading: what
		// came may look whole and is not to be trusted (the transport may
		// report the cut as the body's end).
		err = context.Cause(ctx)
	}
	if err != nil {
		return nil, fail(err)
	}
	if int64(len(raw)) > max {
		return nil, fmt.Errorf("%s: the answer is over %d bytes", redacted, max)
	}
	if resp.ContentLength >= 0 && int64(len(raw)) != resp.ContentLength {
		return nil, fmt.Errorf("%s: the answer is %d bytes of the %d promised", redacted, len(raw), resp.ContentLength)
	}
	ct := strings.ToLower(strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0]))
	switch ct {
	case "application/json", "application/vnd.puppet.rich+json", "text/pson":
	case "":
		return nil, fmt.Errorf("%s: no content type in the answer; cannot parse", redacted)
	default:
		return nil, fmt.Errorf("%s: the answer is %s, not JSON", redacted, ct)
	}
	return raw, nil
}

// httpError reads an error answer as Puppet's agent reports it.
func httpError(path string, resp *http.Response, raw []byte) *HTTPError {
	e := &HTTPError{Path: path, Code: resp.StatusCode, Body: string(raw)}
	msg := strings.TrimSpace(string(raw))
	if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "json") || strings.Contains(ct, "pson") {
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Message != "" {
			msg = m.Message
		}
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e.Message = msg
	return e
}

// watch cancels a request when the server is silent for longer than
// the timeout: armed while waiting for the headers and during each read.
type watch struct {
	timeout time.Duration
	timer   *time.Timer
	once    sync.Once
}

func newWatch(timeout time.Duration, cancel context.CancelCauseFunc) *watch {
	w := &watch{timeout: timeout}
	if timeout > 0 {
		w.timer = time.AfterFunc(timeout, func() { cancel(ErrReadTimeout) })
		w.timer.Stop()
	}
	return w
}

func (w *watch) arm() {
	if w.timer != nil {
		w.timer.Reset(w.timeout)
	}
}

func (w *watch) disarm() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watch) stop() { w.once.Do(w.disarm) }

type watchedReader struct {
	r io.Reader
	w *watch
}

func (r *watchedReader) Read(p []byte) (int, error) {
	r.w.arm()
	n, err := r.r.Read(p)
	r.w.disarm()
	return n, err
}

// HTTPClient is an HTTP client for the agent's requests, set up as
// Puppet's agent sets up its connections: cfg is the TLS configuration
// (the agent's certificate, the CA and the CRL); connectTimeout bounds
// connecting and the TLS handshake (http_connect_timeout, Puppet's
// default 2 minutes when 0), readTimeout the wait for an answer's
// headers (http_read_timeout, 10 minutes when 0; Client.ReadTimeout
// bounds the reads of the body); connections are kept alive between the
// run's requests; redirects 301, 302 and 307 are followed, at most 10,
// never away from https.
func HTTPClient(cfg *tls.Config, connectTimeout, readTimeout time.Duration) *http.Client {
	if connectTimeout <= 0 {
		connectTimeout = 2 * time.Minute
	}
	if readTimeout <= 0 {
		readTimeout = 10 * time.Minute
	}
	tr := &http.Transport{
		TLSClientConfig:       cfg,
		DialContext:           (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: readTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: source.PuppetRedirects,
	}
}
