package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// PuppetOptions say how puppet:// sources reach a Puppet Server, as the
// agent's settings do.
type PuppetOptions struct {
	// Server is the host of puppet:/// URLs (no host of their own); Port
	// is used when a URL names none (default 8140).
	Server string
	Port   int
	// Environment is sent with every request (default production).
	Environment string
	// TLS is handed in by the caller: the client TLS configuration (the
	// agent's certificate and key, its CA as the only root, its CRL
	// checked), as agent/ssl's Files reads it from the agent's SSL
	// directory. It is asked for on the first puppet:// request, not
	// before, and again after it failed.
	TLS ClientTLS
	// Client, when set, carries every request (an agent run's client,
	// whose TLS configuration its certificate bootstrap made): TLS is then
	// not called.
	Client *http.Client
}

// ClientTLS gives the TLS configuration of a client of a Puppet Server.
// Its dynamic type must be comparable (a struct of values, or a
// pointer): options that compare equal share one fetcher.
type ClientTLS interface {
	TLSConfig() (*tls.Config, error)
}

// Puppet serves puppet:// URLs through a Puppet Server's file serving
// REST API (v3): file_metadata(s) for Stat and Walk, file_content for
// Open, over one kept-alive, mutually authenticated TLS connection per
// server.
//
// The TLS configuration is asked for on first use (not when the receiver
// starts), and again after a failure, so that a receiver that never sees
// a puppet:// source never needs the agent's SSL files.
type Puppet struct {
	opts    PuppetOptions
	timeout time.Duration
	maxSize int64

	mu     sync.Mutex
	client *http.Client
}

// NewPuppet builds the puppet:// backend.
func NewPuppet(opts PuppetOptions, o Options) *Puppet {
	if opts.Port == 0 {
		opts.Port = 8140
	}
	if opts.Environment == "" {
		opts.Environment = "production"
	}
	if opts.Server == "" {
		opts.Server = "puppet"
	}
	timeout := o.HTTPTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	maxSize := o.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	return &Puppet{opts: opts, timeout: timeout, maxSize: maxSize}
}

// Environment is the environment requests name.
func (p *Puppet) Environment() string { return p.opts.Environment }

// PuppetRedirects is the redirect policy of every request the agent makes
// to a Puppet Server (an http.Client's CheckRedirect): 301, 302 and 307
// are followed, at most redirect_limit (10) times, with the first
// request's method and body (Puppet's redirector sends the same request
// to the new location, where Go's client would turn a POST or PUT
// answered 301 or 302 into a GET without its body); any other redirect is
// an answer of its own; never to plain http.
func PuppetRedirects(req *http.Request, via []*http.Request) error {
	if req.Response != nil {
		switch req.Response.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect:
		default:
			return http.ErrUseLastResponse
		}
	}
	if len(via) > maxPuppetRedirects {
		return fmt.Errorf("too many HTTP redirections for %s", via[0].URL.Redacted())
	}
	if req.URL.Scheme != "https" {
		return fmt.Errorf("redirected to %s: a Puppet Server is only reached over https", req.URL.Redacted())
	}
	return sameRequest(req, via[0])
}

// sameRequest makes req, the client's next hop of first, first's method
// with first's body and body headers again.
func sameRequest(req, first *http.Request) error {
	if req.Method == first.Method {
		return nil
	}
	req.Method = first.Method
	if first.GetBody == nil {
		if first.ContentLength != 0 || first.Body != nil && first.Body != http.NoBody {
			return fmt.Errorf("redirected to %s: the %s body cannot be sent again", req.URL.Redacted(), first.Method)
		}
		return nil
	}
	body, err := first.GetBody()
	if err != nil {
		return fmt.Errorf("redirected to %s: %w", req.URL.Redacted(), err)
	}
	req.Body, req.GetBody, req.ContentLength = body, first.GetBody, first.ContentLength
	for _, h := range []string{"Content-Type", "Content-Encoding", "Content-Language"} {
		if v := first.Header.Values(h); len(v) > 0 {
			req.Header[h] = append([]string(nil), v...)
		}
	}
	return nil
}

// maxPuppetRedirects is the agent's redirect_limit.
const maxPuppetRedirects = 10

// httpClient loads the SSL files once they are first needed.
func (p *Puppet) httpClient() (*http.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		return p.client, nil
	}
	if p.opts.Client != nil {
		p.client = p.opts.Client
		return p.client, nil
	}
	if p.opts.TLS == nil {
		return nil, errors.New("no TLS configuration (--ssldir, --certname) for puppet:// sources")
	}
	cfg, err := p.opts.TLS.TLSConfig()
	if err != nil {
		return nil, fmt.Errorf("puppet:// sources: %w", err)
	}
	tr := &http.Transport{
		TLSClientConfig:     cfg,
		DialContext:         (&net.Dialer{Timeout: p.timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: p.timeout,
		// Idle time only (idle.go): the headers' wait, then each read.
		ResponseHeaderTimeout: p.timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     false,
	}
	p.client = &http.Client{
		Transport:     tr,
		CheckRedirect: PuppetRedirects,
	}
	return p.client, nil
}

// endpoint is the REST URL for one of the file serving endpoints, with
// the path of the puppet:// URL (its mount and the path below it).
func (p *Puppet) endpoint(u *url.URL, what string, q url.Values) (*url.URL, error) {
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = p.opts.Server
	}
	if port == "" {
		port = strconv.Itoa(p.opts.Port)
	}
	path := strings.TrimLeft(u.Path, "/")
	mount, _, _ := strings.Cut(path, "/")
	if mount == "" {
		return nil, fmt.Errorf("%s names no mount point (puppet:///MOUNT/PATH)", u.Redacted())
	}
	q.Set("environment", p.opts.Environment)
	e := &url.URL{Scheme: "https", Host: net.JoinHostPort(host, port), Path: "/puppet/v3/" + what + "/" + path, RawQuery: q.Encode()}
	return e, nil
}

// ServerError is an answer of the server that is neither success nor
// not-found, worded as the agent words it.
type ServerError struct {
	Code    int
	Message string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("Error %d on SERVER: %s", e.Code, e.Message)
}

func (p *Puppet) get(ctx context.Context, e *url.URL, accept string) (*http.Response, error) {
	c, err := p.httpClient()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "pippet")
	start := time.Now()
	resp, err := idleRequest(c, req, p.timeout)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("request to %s failed after %.3f seconds: %w", e.Redacted(), time.Since(start).Seconds(), err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("%s: %w", e.Redacted(), ErrNotFound)
	}
	return nil, serverError(resp)
}

// serverError reads the message of an error answer: the JSON message
// when the body is JSON, else the body, else the reason phrase.
func serverError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(raw))
	if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "json") {
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
	return &ServerError{Code: resp.StatusCode, Message: msg}
}

// puppetMeta is one entry of file_metadata(s), as the server sends it.
type puppetMeta struct {
	Path         string  `json:"path"`
	RelativePath *string `json:"relative_path"`
	Owner        *int64  `json:"owner"`
	Group        *int64  `json:"group"`
	Mode         *int64  `json:"mode"`
	Checksum     struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"checksum"`
	Type        string  `json:"type"`
	Destination *string `json:"destination"`
	// Source and ContentURI are given in a static catalog's inlined
	// metadata only.
	Source     string `json:"source"`
	ContentURI string `json:"content_uri"`
}

// puppetTime is how the server prints the mtime and ctime checksums
// (Ruby's Time#to_s).
const puppetTime = "2006-01-02 15:04:05 -0700"

// convert checks one entry and turns it into Metadata.
func (m *puppetMeta) convert() (*Metadata, error) {
	out := &Metadata{Type: m.Type, Size: -1}
	switch m.Type {
	case TypeFile, TypeDirectory, TypeLink:
	default:
		return nil, fmt.Errorf("unknown file type %q", m.Type)
	}
	if m.Owner != nil && m.Group != nil && m.Mode != nil {
		// Checked, never truncated: chown takes 32 bits (2^32 would be
		// root) and -1 or 4294967295 means "unchanged"; the server
		// reports the twelve permission bits only.
		for _, id := range []struct {
			name string
			v    int64
		}{{"owner", *m.Owner}, {"group", *m.Group}} {
			if id.v < 0 || id.v > 4294967294 {
				return nil, fmt.Errorf("%s %d is not a valid id", id.name, id.v)
			}
		}
		if *m.Mode < 0 || *m.Mode > 0o7777 {
			return nil, fmt.Errorf("mode %d is not a file mode", *m.Mode)
		}
		out.UID, out.GID, out.HasOwner = int(*m.Owner), int(*m.Group), true
		mode := *m.Mode
		out.Mode = fs.FileMode(mode & 0o777)
		if mode&0o4000 != 0 {
			out.Mode |= fs.ModeSetuid
		}
		if mode&0o2000 != 0 {
			out.Mode |= fs.ModeSetgid
		}
		if mode&0o1000 != 0 {
			out.Mode |= fs.ModeSticky
		}
	}
	if m.Type == TypeLink {
		if m.Destination == nil || *m.Destination == "" {
			return nil, errors.New("a link without a destination")
		}
		out.Target = *m.Destination
	}
	kind, val := m.Checksum.Type, m.Checksum.Value
	if kind == "" && val == "" {
		if m.Type == TypeFile {
			return nil, errors.New("a file without a checksum")
		}
		return out, nil
	}
	prefix := "{" + kind + "}"
	if !strings.HasPrefix(val, prefix) {
		if m.Type == TypeLink && val == "" {
			return out, nil // a dangling link has no checksum
		}
		return nil, fmt.Errorf("checksum %q is not of its type %q", val, kind)
	}
	val = strings.TrimPrefix(val, prefix)
	switch {
	case IsDigest(kind):
		val = strings.ToLower(val)
		if !ValidHex(kind, val) {
			return nil, fmt.Errorf("checksum %q is not a %s digest", m.Checksum.Value, kind)
		}
		out.ChecksumType, out.Checksum = kind, val
	case kind == MTime || kind == CTime:
		t, err := time.Parse(puppetTime, val)
		if err != nil {
			return nil, fmt.Errorf("checksum %q is not a time", m.Checksum.Value)
		}
		if kind == MTime {
			out.ModTime = t
		} else {
			out.CTime = t
			if m.Type == TypeFile {
				out.ModTime = t
			}
		}
	case kind == None:
		out.ChecksumType = None
	default:
		return nil, fmt.Errorf("unknown checksum type %q", kind)
	}
	return out, nil
}

func linksParam(follow bool) string {
	if follow {
		return "follow"
	}
	return "manage"
}

func (p *Puppet) metaQuery(q Query) url.Values {
	v := url.Values{}
	v.Set("links", linksParam(q.FollowLinks))
	kind := q.Checksum
	if kind == "" {
		kind = SHA256
	}
	v.Set("checksum_type", kind)
	sp := q.SourcePermissions
	if sp == "" {
		sp = "ignore"
	}
	v.Set("source_permissions", sp)
	return v
}

// Stat asks file_metadata.
func (p *Puppet) Stat(ctx context.Context, u *url.URL, q Query) (*Metadata, error) {
	e, err := p.endpoint(u, "file_metadata", p.metaQuery(q))
	if err != nil {
		return nil, err
	}
	resp, err := p.get(ctx, e, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var pm puppetMeta
	if err := decodeJSON(resp.Body, &pm); err != nil {
		return nil, fmt.Errorf("bad metadata from %s: %w", e.Redacted(), err)
	}
	m, err := pm.convert()
	if err != nil {
		return nil, fmt.Errorf("bad metadata from %s: %w", e.Redacted(), err)
	}
	return m, nil
}

// decodeJSON reads one JSON document of at most 1 MiB (one entry's
// metadata is a few hundred bytes): a server answering garbage costs no
// more.
func decodeJSON(r io.Reader, v any) error {
	raw, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return err
	}
	if len(raw) > 1<<20 {
		return errors.New("an answer of more than 1 MiB")
	}
	return json.Unmarshal(raw, v)
}

// drain reads what is left of an answer whose document has been read,
// a little at most (a server that sends more after its document is not
// waited for: the connection is then closed rather than reused).
func drain(r io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 4<<10))
}

// MaxWalkEntries bounds the entries of a file_metadatas answer without
// max_files (the entries are held in memory: about 200 bytes each).
const MaxWalkEntries = 1 << 20

// maxListBytes bounds the bytes of a file_metadatas answer.
const maxListBytes = 512 << 20

// decodeList reads a JSON array of entries one at a time, so that an
// answer listing more than max entries is refused (ErrTooManyFiles) as
// soon as it does, before it fills memory.
func decodeList(r io.Reader, max int) ([]puppetMeta, error) {
	lr := &io.LimitedReader{R: r, N: maxListBytes + 1}
	dec := json.NewDecoder(lr)
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("expected a list of entries, got %v", tok)
	}
	var list []puppetMeta
	for dec.More() {
		if len(list) >= max {
			return nil, ErrTooManyFiles
		}
		list = append(list, puppetMeta{})
		if err := dec.Decode(&list[len(list)-1]); err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("an answer of more than %d bytes", maxListBytes)
			}
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return list, nil
}

// Walk asks file_metadatas with recurse.
func (p *Puppet) Walk(ctx context.Context, u *url.URL, q Query, opts WalkOptions, fn WalkFunc) error {
	v := p.metaQuery(q)
	v.Set("recurse", "true")
	if opts.Limit > 0 {
		v.Set("recurselimit", strconv.Itoa(opts.Limit))
	}
	if opts.MaxFiles > 0 {
		v.Set("max_files", strconv.Itoa(opts.MaxFiles))
	}
	for _, i := range opts.Ignore {
		v.Add("ignore", i)
	}
	e, err := p.endpoint(u, "file_metadatas", v)
	if err != nil {
		return err
	}
	resp, err := p.get(ctx, e, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	limit := MaxWalkEntries
	if opts.MaxFiles > 0 {
		limit = opts.MaxFiles
	}
	list, err := decodeList(resp.Body, limit+1)
	if err == nil {
		// The decoder stops at the list's ']': the rest of the answer
		// (the chunked body's end) is read, so that the connection goes
		// back to the client's pool for the next request instead of
		// being closed (a new TLS handshake each listing).
		drain(resp.Body)
	}
	if errors.Is(err, ErrTooManyFiles) {
		if opts.MaxFiles > 0 {
			return fmt.Errorf("%s lists more than max_files (%d) entries: %w", u.Redacted(), opts.MaxFiles, ErrTooManyFiles)
		}
		return fmt.Errorf("%s lists more than %d entries: %w", u.Redacted(), limit, ErrTooManyFiles)
	}
	if err != nil {
		return fmt.Errorf("bad metadata from %s: %w", e.Redacted(), err)
	}
	if len(list) == 0 {
		return fmt.Errorf("%s: no entries: %w", e.Redacted(), ErrNotFound)
	}
	seenRoot := false
	for i := range list {
		pm := &list[i]
		if pm.RelativePath == nil {
			return fmt.Errorf("bad metadata from %s: entry %d has no relative_path", e.Redacted(), i)
		}
		rel := *pm.RelativePath
		if rel == "" {
			rel = "."
		}
		if rel != "." && (strings.HasPrefix(rel, "/") || rel != filepath.Clean(rel) || rel == ".." || strings.HasPrefix(rel, "../")) {
			return fmt.Errorf("bad metadata from %s: relative_path %q leaves the directory", e.Redacted(), rel)
		}
		m, err := pm.convert()
		if err != nil {
			return fmt.Errorf("bad metadata from %s: %s: %w", e.Redacted(), rel, err)
		}
		if rel == "." {
			seenRoot = true
		}
		if err := fn(rel, m); err != nil {
			return err
		}
	}
	if !seenRoot {
		return fmt.Errorf("bad metadata from %s: no entry for the directory itself", e.Redacted())
	}
	return nil
}

// Open streams file_content.
func (p *Puppet) Open(ctx context.Context, u *url.URL) (io.ReadCloser, error) {
	e, err := p.endpoint(u, "file_content", url.Values{})
	if err != nil {
		return nil, err
	}
	return p.content(ctx, e)
}

// OpenStatic streams static_file_content: u is a static catalog's
// content_uri (puppet:///modules/MOD/files/PATH), codeID the catalog's
// code_id; the server answers with the file as it was in that version
// of the code.
func (p *Puppet) OpenStatic(ctx context.Context, u *url.URL, codeID string) (io.ReadCloser, error) {
	e, err := p.endpoint(u, "static_file_content", url.Values{"code_id": {codeID}})
	if err != nil {
		return nil, err
	}
	return p.content(ctx, e)
}

// content reads a file_content or static_file_content answer.
func (p *Puppet) content(ctx context.Context, e *url.URL) (io.ReadCloser, error) {
	resp, err := p.get(ctx, e, "application/octet-stream")
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > p.maxSize {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: Content-Length %d is %w (%d bytes)", e.Redacted(), resp.ContentLength, ErrTooLarge, p.maxSize)
	}
	if enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc != "" && enc != "identity" {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: Content-Encoding %q was not asked for", e.Redacted(), enc)
	}
	return &body{rc: resp.Body, r: resp.Body, u: e.Redacted(), left: p.maxSize, max: p.maxSize, size: resp.ContentLength}, nil
}
