package source

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// HTTP serves http and https URLs. Metadata comes from response headers
// (HEAD, or GET when the server refuses HEAD); content is a streamed GET.
type HTTP struct {
	client  *http.Client
	maxSize int64
	timeout time.Duration // idle time (see idle.go)
}

// checksumHeaders maps digest kinds to the headers that carry them (hex),
// in the order Puppet reads them.
var checksumHeaders = []struct{ kind, header string }{
	{SHA256, "X-Checksum-Sha256"},
	{SHA1, "X-Checksum-Sha1"},
	{MD5, "X-Checksum-Md5"},
}

// NewHTTP builds the HTTP backend: one client with a bounded idle time
// (idle.go) and redirect count, verifying TLS against the system roots or
// opts.CAFile.
func NewHTTP(opts Options) (*HTTP, error) {
	timeout := opts.HTTPTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	maxRedirects := opts.MaxRedirects
	if maxRedirects <= 0 {
		maxRedirects = 10
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	tr.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = timeout
	tr.ResponseHeaderTimeout = timeout
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", opts.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	maxSize := opts.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	return &HTTP{maxSize: maxSize, timeout: timeout, client: &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}}, nil
}

// StatusError is an HTTP answer that is neither success nor not-found.
type StatusError struct {
	URL    string
	Status string
	Code   int
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s: HTTP %s", e.URL, e.Status) }

func redact(u *url.URL) string { return u.Redacted() }

func (h *HTTP) do(ctx context.Context, method string, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, redact(u), err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := idleRequest(h.client, req, h.timeout)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, redact(u), err)
	}
	return resp, nil
}

func checkStatus(u *url.URL, resp *http.Response) error {
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return fmt.Errorf("%s: HTTP %s: %w", redact(u), resp.Status, ErrNotFound)
	default:
		return &StatusError{URL: redact(u), Status: resp.Status, Code: resp.StatusCode}
	}
}

// Stat asks for the headers with HEAD, falling back to GET (body
// discarded unread) when the server refuses HEAD.
func (h *HTTP) Stat(ctx context.Context, u *url.URL, q Query) (*Metadata, error) {
	resp, err := h.do(ctx, http.MethodHead, u)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented || resp.StatusCode == http.StatusForbidden {
		resp, err = h.do(ctx, http.MethodGet, u)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
	}
	if err := checkStatus(u, resp); err != nil {
		return nil, err
	}
	return metadataFromHeaders(resp.Header, resp.ContentLength, q.Checksum)
}

// metadataFromHeaders picks the checksum asked for when offered, else the
// strongest offered, and Last-Modified.
func metadataFromHeaders(hd http.Header, size int64, want string) (*Metadata, error) {
	m := &Metadata{Type: TypeFile, Size: size}
	offered := map[string]string{}
	for _, c := range checksumHeaders {
		if v := strings.TrimSpace(hd.Get(c.header)); v != "" {
			v = strings.ToLower(v)
			if !ValidHex(c.kind, v) {
				return nil, fmt.Errorf("header %s: %q is not a %s digest", c.header, v, c.kind)
			}
			offered[c.kind] = v
		}
	}
	if v := strings.TrimSpace(hd.Get("Content-MD5")); v != "" {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(raw) != 16 {
			return nil, fmt.Errorf("header Content-MD5: %q is not a base64 MD5 digest", v)
		}
		if prev, ok := offered[MD5]; ok && prev != hex.EncodeToString(raw) {
			return nil, fmt.Errorf("headers X-Checksum-Md5 and Content-MD5 disagree")
		}
		offered[MD5] = hex.EncodeToString(raw)
	}
	if v, ok := offered[want]; ok {
		m.ChecksumType, m.Checksum = want, v
	} else {
		for _, k := range Strength {
			if v, ok := offered[k]; ok {
				m.ChecksumType, m.Checksum = k, v
				break
			}
		}
	}
	if v := hd.Get("Last-Modified"); v != "" {
		if t, err := http.ParseTime(v); err == nil {
			m.ModTime = t
		}
	}
	return m, nil
}

// Open starts a GET and returns its body; a read error (a cut connection,
// a short body, the timeout) surfaces from Read.
func (h *HTTP) Open(ctx context.Context, u *url.URL) (io.ReadCloser, error) {
	resp, err := h.do(ctx, http.MethodGet, u)
	if err != nil {
		return nil, err
	}
	if err := checkStatus(u, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	// The body is bounded: by its Content-Length (the client reads no
	// more than that, and a shorter one is an error) and by maxSize,
	// which a promised length is checked against before anything is read.
	if resp.ContentLength > h.maxSize {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: Content-Length %d is %w (%d bytes)", redact(u), resp.ContentLength, ErrTooLarge, h.maxSize)
	}
	b := &body{rc: resp.Body, r: resp.Body, u: redact(u), left: h.maxSize, max: h.maxSize, size: resp.ContentLength}
	// Asked for identity, a server may still encode the body: gzip is
	// decoded (a file is never stored compressed), anything else refused.
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("%s: Content-Encoding gzip: %w", redact(u), err)
		}
		b.r, b.size = gz, -1
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("%s: Content-Encoding %q is not supported (only gzip is decoded)", redact(u), enc)
	}
	return b, nil
}

// body is an HTTP body bounded by max bytes (decoded).
type body struct {
	rc   io.ReadCloser // the response's body
	r    io.Reader     // what is read: rc, or a decoder over it
	u    string
	left int64 // bytes still allowed
	max  int64
	size int64 // the decoded size when known (Content-Length), else -1
}

func (b *body) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Allowed bytes used up: one more byte would be past the bound.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("read %s: the body is %w (%d bytes)", b.u, ErrTooLarge, b.max)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			err = fmt.Errorf("read %s: %w", b.u, err)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("read %s: %w", b.u, err)
	}
	return n, err
}

// Size is the body's length when the server said it (-1 otherwise).
func (b *body) Size() int64 { return b.size }

func (b *body) Close() error { return b.rc.Close() }
