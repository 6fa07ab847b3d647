package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/server"
	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

// fake is a Puppet Server's node and catalog endpoints: nodeEnv is the
// node's server-specified environment, envs the environments that
// exist; the catalog is compiled in the environment asked unless the
// node's differs (then, as check_environment asks, an empty catalog of
// the node's environment comes back).
type fake struct {
	mu      sync.Mutex
	nodeEnv string
	envs    map[string]bool
	// catalog, when set, answers the catalog request instead.
	catalog func(w http.ResponseWriter, r *http.Request, env string)
	// requests seen: "GET /puppet/v3/node/agent.test?..." and the forms.
	requests []string
	forms    []url.Values
	headers  []http.Header
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	env := r.URL.Query().Get("environment")
	notFound := func() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"Not Found: Could not find environment '%s'","issue_kind":"RUNTIME_NOT_FOUND"}`, env)
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/puppet/v3/node/"):
		if !f.envs[env] {
			notFound()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":%q,"environment":%q,"classes":{},"parameters":{}}`, strings.TrimPrefix(r.URL.Path, "/puppet/v3/node/"), f.nodeEnv)
	case strings.HasPrefix(r.URL.Path, "/puppet/v3/catalog/") && r.Method == http.MethodPost:
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f.mu.Lock()
		f.forms = append(f.forms, r.PostForm)
		f.mu.Unlock()
		if f.catalog != nil {
			f.catalog(w, r, env)
			return
		}
		if !f.envs[env] {
			notFound()
			return
		}
		catEnv := env
		if f.nodeEnv != "" && f.nodeEnv != env {
			w.Header().Set("Content-Type", "application/vnd.puppet.rich+json")
			fmt.Fprintf(w, `{"tags":[],"name":"agent.test","version":null,"code_id":null,"catalog_uuid":"x","catalog_format":2,"environment":%q,"resources":[],"edges":[],"classes":[]}`, f.nodeEnv)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.puppet.rich+json; charset=utf-8")
		io.WriteString(w, catalogJSON(catEnv, "notify from "+catEnv))
	default:
		http.NotFound(w, r)
	}
}

func (f *fake) reqs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// catalogJSON is a small static catalog as Puppet Server sends it.
func catalogJSON(env, msg string) string {
	return fmt.Sprintf(`{"tags":["settings"],"name":"agent.test","version":1764180000,"code_id":"c0de","catalog_uuid":"0f8e3a52-1111-2222-3333-444455556666","catalog_format":2,"environment":%q,
"resources":[{"type":"Stage","title":"main","tags":["stage"],"exported":false,"parameters":{"name":"main"}},
{"type":"Class","title":"Settings","tags":["class","settings"],"exported":false},
{"type":"Notify","title":"hello","tags":["notify"],"file":"/site.pp","line":1,"exported":false,"parameters":{"message":%q}},
{"type":"File","title":"/tmp/motd","tags":["file"],"exported":false,"parameters":{"source":"puppet:///modules/m/motd"}}],
"edges":[{"source":"Stage[main]","target":"Class[Settings]"},{"source":"Stage[main]","target":"Notify[hello]"},{"source":"Stage[main]","target":"File[/tmp/motd]"}],
"classes":["settings"],
"metadata":{"/tmp/motd":{"path":"/srv/code/environments/%s/modules/m/files/motd","relative_path":null,"links":"manage","owner":0,"group":0,"mode":420,"checksum":{"type":"sha256","value":"{sha256}5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"},"type":"file","destination":null,"source":"puppet:///modules/m/motd","content_uri":"puppet:///modules/m/files/motd"}},
"recursive_metadata":{}}`, env, msg, env)
}

type setup struct {
	f      *fake
	c      *server.Client
	hc     *http.Client
	base   string
	logbuf *bytes.Buffer
	log    *slog.Logger
	cache  string
}

func newSetup(t *testing.T, f *fake) *setup {
	t.Helper()
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, f, "")
	cfg, err := ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}.TLSConfig()
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "https://localhost:" + port
	hc := server.HTTPClient(cfg, 5*time.Second, 5*time.Second)
	s := &setup{f: f, hc: hc, base: base, c: server.New(hc, base, "agent.test"), logbuf: &bytes.Buffer{}, cache: t.TempDir()}
	s.log = slog.New(slog.NewTextHandler(s.logbuf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	return s
}

func (s *setup) options(env string) server.Options {
	return server.Options{
		Environment: env, CacheDir: s.cache, TransactionUUID: "uuid-1", Log: s.log, UseCacheOnFailure: true,
		Prepare: func(ctx context.Context, env string) ([]byte, error) {
			return server.FactsJSON("agent.test", map[string]any{"os": map[string]any{"family": "Debian"}, "osfamily": "Debian"}, server.FactsOptions{})
		},
	}
}

func TestNodeRequest(t *testing.T) {
	f := &fake{nodeEnv: "staging", envs: map[string]bool{"production": true, "staging": true}}
	s := newSetup(t, f)
	s.c.ConfiguredEnvironment = "conf_env"
	env, err := s.c.Node(context.Background(), "production", nil, "uuid-1")
	require.NoError(t, err)
	assert.Equal(t, "staging", env)
	reqs := f.reqs()
	require.Len(t, reqs, 1)
	u, err := url.Parse(strings.TrimPrefix(reqs[0], "GET "))
	require.NoError(t, err)
	assert.Equal(t, "/puppet/v3/node/agent.test", u.Path)
	assert.Equal(t, url.Values{"environment": {"production"}, "configured_environment": {"conf_env"}, "transaction_uuid": {"uuid-1"}}, u.Query())
	assert.Equal(t, "application/json, text/pson", f.headers[0].Get("Accept"))

	_, err = s.c.Node(context.Background(), "nosuch", nil, "uuid-1")
	var he *server.HTTPError
	require.ErrorAs(t, err, &he)
	assert.True(t, he.EnvironmentNotFound())
	assert.Equal(t, `Find /puppet/v3/node/agent.test resulted in 404 with the message: {"message":"Not Found: Could not find environment 'nosuch'","issue_kind":"RUNTIME_NOT_FOUND"}`, err.Error())
}

func TestCatalogRequestForm(t *testing.T) {
	f := &fake{envs: map[string]bool{"production": true}}
	s := newSetup(t, f)
	s.c.JobID = "job-7"
	facts, err := server.FactsJSON("agent.test", map[string]any{"os": map[string]any{"family": "Debian"}, "weird": "a+b %41 &c=d é"},
		server.FactsOptions{Now: time.Date(2026, 11, 26, 19, 0, 0, 5, time.UTC), Noop: true})
	require.NoError(t, err)
	cat, raw, err := s.c.Catalog(context.Background(), "production", facts, "uuid-1")
	require.NoError(t, err)
	assert.Equal(t, "production", cat.Environment)
	assert.Equal(t, "c0de", cat.CodeID)
	assert.Equal(t, 2, cat.Format)
	assert.Contains(t, cat.Metadata, "/tmp/motd")
	st, err := cat.Static()
	require.NoError(t, err)
	m, ok := st.File("/tmp/motd")
	require.True(t, ok)
	assert.Equal(t, "puppet:///modules/m/motd", m.Source)
	assert.Equal(t, "puppet:///modules/m/files/motd", m.ContentURI)
	assert.Equal(t, catalogJSON("production", "notify from production"), string(raw))

	reqs := f.reqs()
	require.Len(t, reqs, 1)
	assert.Equal(t, "POST /puppet/v3/catalog/agent.test?environment=production", reqs[0])
	h := f.headers[0]
	assert.Equal(t, "application/vnd.puppet.rich+json, application/json, text/pson", h.Get("Accept"))
	assert.Equal(t, "application/x-www-form-urlencoded", h.Get("Content-Type"))
	form := f.forms[0]
	assert.Equal(t, "application/json", form.Get("facts_format"))
	assert.Equal(t, "production", form.Get("environment"))
	assert.Equal(t, "production", form.Get("configured_environment"))
	assert.Equal(t, "true", form.Get("static_catalog"))
	assert.Equal(t, "true", form.Get("check_environment"))
	assert.Equal(t, "sha256.sha384.sha512.sha224.md5", form.Get("checksum_type"))
	assert.Equal(t, "uuid-1", form.Get("transaction_uuid"))
	assert.Equal(t, "job-7", form.Get("job_uuid"))
	// The facts are escaped once more, as Puppet's agent sends them: the
	// server unescapes them after reading the form (CGI.unescape).
	once := form.Get("facts")
	assert.NotContains(t, once, "{")
	doc, err := url.QueryUnescape(once)
	require.NoError(t, err)
	var wire struct {
		Name       string         `json:"name"`
		Values     map[string]any `json:"values"`
		Timestamp  string         `json:"timestamp"`
		Expiration string         `json:"expiration"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &wire), doc)
	assert.Equal(t, "agent.test", wire.Name)
	assert.Equal(t, "a+b %41 &c=d é", wire.Values["weird"])
	assert.Equal(t, "Debian", wire.Values["os"].(map[string]any)["family"])
	assert.Equal(t, "agent.test", wire.Values["clientcert"])
	assert.Equal(t, true, wire.Values["clientnoop"])
	assert.Equal(t, server.DefaultClientVersion, wire.Values["clientversion"])
	assert.Equal(t, "2026-11-26T19:00:00.000000005+00:00", wire.Timestamp)
	assert.Equal(t, "2026-11-26T19:30:00.000000005+00:00", wire.Expiration)
}

func TestCatalogErrors(t *testing.T) {
	cases := map[string]struct {
		handler func(w http.ResponseWriter, r *http.Request, env string)
		check   func(t *testing.T, err error)
	}{
		"500 with a JSON message": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(500)
				io.WriteString(w, `{"message":"Server Error: Evaluation Error: Unknown variable: '$nope'. (file: /site.pp, line: 1, column: 9) on node agent.test","issue_kind":"RUNTIME_ERROR"}`)
			},
			func(t *testing.T, err error) {
				var he *server.HTTPError
				require.ErrorAs(t, err, &he)
				assert.Equal(t, 500, he.Code)
				assert.Equal(t, "Error 500 on SERVER: Server Error: Evaluation Error: Unknown variable: '$nope'. (file: /site.pp, line: 1, column: 9) on node agent.test", err.Error())
			},
		},
		"403 in plain text": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(403)
				io.WriteString(w, "Forbidden request: /puppet/v3/catalog/agent.test (method :post)")
			},
			func(t *testing.T, err error) {
				assert.EqualError(t, err, "Error 403 on SERVER: Forbidden request: /puppet/v3/catalog/agent.test (method :post)")
			},
		},
		"404 environment": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(404)
				io.WriteString(w, `{"message":"Not Found: Could not find environment 'nosuch'","issue_kind":"RUNTIME_NOT_FOUND"}`)
			},
			func(t *testing.T, err error) {
				var he *server.HTTPError
				require.ErrorAs(t, err, &he)
				assert.True(t, he.EnvironmentNotFound())
				assert.Contains(t, err.Error(), "Find /puppet/v3/catalog/agent.test resulted in 404 with the message: ")
			},
		},
		"truncated by its length": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				body := catalogJSON(env, "x")
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				io.WriteString(w, body[:len(body)/2])
			},
			func(t *testing.T, err error) {
				var ce *server.ConnectionError
				require.ErrorAs(t, err, &ce, "%v", err)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			},
		},
		"truncated JSON": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				body := catalogJSON(env, "x")
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body[:len(body)-40])
			},
			func(t *testing.T, err error) { assert.ErrorIs(t, err, server.ErrBadCatalog) },
		},
		"not a catalog": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"name":"agent.test"}`)
			},
			func(t *testing.T, err error) { assert.ErrorIs(t, err, server.ErrBadCatalog) },
		},
		"bad inlined metadata": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, strings.Replace(catalogJSON(env, "x"), `"type":"file","destination"`, `"type":"fifo","destination"`, 1))
			},
			func(t *testing.T, err error) {
				assert.ErrorIs(t, err, server.ErrBadCatalog)
				assert.Contains(t, err.Error(), "File[/tmp/motd]")
			},
		},
		"HTML": {
			func(w http.ResponseWriter, r *http.Request, env string) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, `<html>proxy</html>`)
			},
			func(t *testing.T, err error) { assert.ErrorContains(t, err, "the answer is text/html, not JSON") },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fake{envs: map[string]bool{"production": true}, catalog: tc.handler}
			s := newSetup(t, f)
			facts, _ := server.FactsJSON("agent.test", nil, server.FactsOptions{})
			cat, raw, err := s.c.Catalog(context.Background(), "production", facts, "u")
			require.Error(t, err)
			assert.Nil(t, cat)
			assert.Nil(t, raw)
			tc.check(t, err)
		})
	}
}

func TestConnectionFaults(t *testing.T) {
	facts, _ := server.FactsJSON("agent.test", nil, server.FactsOptions{})
	t.Run("refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		l.Close()
		s := newSetup(t, &fake{})
		c := server.New(s.hc, "https://"+addr, "agent.test")
		_, _, err = c.Catalog(context.Background(), "production", facts, "u")
		var ce *server.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.Contains(t, err.Error(), "Request to https://"+addr+"/puppet/v3/catalog/agent.test?environment=production failed after ")
		assert.Contains(t, err.Error(), "connection refused")
		assert.False(t, ce.Timeout())
	})
	t.Run("read timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		f := &fake{envs: map[string]bool{"production": true}, catalog: func(w http.ResponseWriter, r *http.Request, env string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"agent.test",`)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}}
		s := newSetup(t, f)
		s.c.ReadTimeout = 300 * time.Millisecond
		start := time.Now()
		_, _, err := s.c.Catalog(context.Background(), "production", facts, "u")
		var ce *server.ConnectionError
		require.ErrorAs(t, err, &ce, "%v", err)
		assert.True(t, ce.Timeout(), "%v", err)
		assert.ErrorIs(t, err, server.ErrReadTimeout)
		assert.Less(t, time.Since(start), 5*time.Second)
	})
	t.Run("header timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		f := &fake{nodeEnv: "production", envs: map[string]bool{"production": true}, catalog: func(w http.ResponseWriter, r *http.Request, env string) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}}
		s := newSetup(t, f)
		s.c.ReadTimeout = 300 * time.Millisecond
		_, err := s.c.Node(context.Background(), "production", nil, "u")
		require.NoError(t, err)
		_, _, err = s.c.Catalog(context.Background(), "production", facts, "u")
		var ce *server.ConnectionError
		require.ErrorAs(t, err, &ce, "%v", err)
		assert.True(t, ce.Timeout(), "%v", err)
	})
	t.Run("server certificate revoked", func(t *testing.T) {
		ca := sourcetest.NewPuppetCA(t, true)
		srv := ca.Serve(t, &fake{}, "")
		cfg, err := ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}.TLSConfig()
		require.NoError(t, err)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		c := server.New(server.HTTPClient(cfg, 5*time.Second, 5*time.Second), "https://localhost:"+port, "agent.test")
		_, _, err = c.Catalog(context.Background(), "production", facts, "u")
		var ce *server.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.Contains(t, err.Error(), "is revoked")
	})
	t.Run("agent certificate refused", func(t *testing.T) {
		// Another CA's agent: the server refuses the handshake, as a
		// Puppet Server refuses a revoked agent certificate.
		other := sourcetest.NewPuppetCA(t, false)
		ca := sourcetest.NewPuppetCA(t, false)
		srv := ca.Serve(t, &fake{}, "")
		cfg, err := ssl.Files{Dir: other.SSLDir, Certname: other.Certname}.TLSConfig()
		require.NoError(t, err)
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = nil
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		c := server.New(server.HTTPClient(cfg, 5*time.Second, 5*time.Second), "https://localhost:"+port, "agent.test")
		_, _, err = c.Catalog(context.Background(), "production", facts, "u")
		var ce *server.ConnectionError
		require.ErrorAs(t, err, &ce, "%v", err)
		assert.Contains(t, err.Error(), "tls")
	})
}

func TestCacheSaveLoad(t *testing.T) {
	dir := t.TempDir()
	_, _, err := server.LoadCache(dir, "agent.test")
	assert.ErrorIs(t, err, server.ErrNoCache)
	assert.ErrorIs(t, err, os.ErrNotExist)

	raw := []byte(catalogJSON("production", "one"))
	require.NoError(t, server.SaveCache(dir, "agent.test", raw))
	p := filepath.Join(dir, "catalog", "agent.test.json")
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o660), fi.Mode().Perm())
	di, err := os.Stat(filepath.Dir(p))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), di.Mode().Perm())
	cat, got, err := server.LoadCache(dir, "agent.test")
	require.NoError(t, err)
	assert.Equal(t, raw, got)
	assert.Equal(t, "production", cat.Environment)

	// A partial catalog never replaces a whole one.
	err = server.SaveCache(dir, "agent.test", raw[:len(raw)/2])
	require.Error(t, err)
	_, got, err = server.LoadCache(dir, "agent.test")
	require.NoError(t, err)
	assert.Equal(t, raw, got)
	entries, _ := os.ReadDir(filepath.Dir(p))
	assert.Len(t, entries, 1, "no temporary file left")

	// The mode an administrator gave is kept.
	require.NoError(t, os.Chmod(p, 0o600))
	require.NoError(t, server.SaveCache(dir, "agent.test", []byte(catalogJSON("production", "two"))))
	fi, _ = os.Stat(p)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// A corrupt cache is an error naming it; a symlink is not followed.
	require.NoError(t, os.WriteFile(p, []byte(`{"resources":[`), 0o600))
	_, _, err = server.LoadCache(dir, "agent.test")
	assert.ErrorContains(t, err, "Could not parse JSON data for catalog agent.test")
	require.NoError(t, os.Remove(p))
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	require.NoError(t, os.WriteFile(target, raw, 0o600))
	require.NoError(t, os.Symlink(target, p))
	_, _, err = server.LoadCache(dir, "agent.test")
	assert.ErrorContains(t, err, "is a symbolic link")
	assert.NotErrorIs(t, err, server.ErrNoCache)
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Mkdir(p, 0o700))
	_, _, err = server.LoadCache(dir, "agent.test")
	assert.ErrorContains(t, err, "is not a regular file")

	for _, bad := range []string{"", "..", "a/b", "../x"} {
		assert.Error(t, server.SaveCache(dir, bad, raw), bad)
	}
}

func (s *setup) logged() string { return s.logbuf.String() }

func TestRetrieveSwitchesToNodeEnvironment(t *testing.T) {
	f := &fake{nodeEnv: "staging", envs: map[string]bool{"production": true, "staging": true}}
	s := newSetup(t, f)
	var prepared []string
	o := s.options("production")
	prep := o.Prepare
	o.Prepare = func(ctx context.Context, env string) ([]byte, error) {
		prepared = append(prepared, env)
		return prep(ctx, env)
	}
	res, err := s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, "staging", res.Environment)
	assert.Equal(t, "staging", res.Catalog.Environment)
	assert.Equal(t, server.CacheNotUsed, res.CachedCatalogStatus)
	assert.False(t, res.Cached)
	assert.Equal(t, []string{"staging"}, prepared)
	assert.Contains(t, s.logged(), `level=INFO+2 msg="Local environment: 'production' doesn't match server specified node environment 'staging', switching agent to 'staging'."`)
	assert.Contains(t, s.logged(), `msg="Using environment 'staging'"`)
	assert.Contains(t, s.logged(), `msg="Caching catalog for agent.test"`)
	cached, _, err := server.LoadCache(s.cache, "agent.test")
	require.NoError(t, err)
	assert.Equal(t, "staging", cached.Environment)
	reqs := f.reqs()
	require.Len(t, reqs, 2)
	assert.True(t, strings.HasPrefix(reqs[0], "GET /puppet/v3/node/agent.test?"))
	assert.Equal(t, "POST /puppet/v3/catalog/agent.test?environment=staging", reqs[1])

	// With the environment on the command line, no node request.
	f.requests = nil
	o.EnvironmentFromCLI = true
	o.Noop = true
	f.nodeEnv = ""
	res, err = s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, "production", res.Environment)
	assert.Equal(t, []string{"POST /puppet/v3/catalog/agent.test?environment=production"}, f.reqs())
	cached, _, _ = server.LoadCache(s.cache, "agent.test")
	assert.Equal(t, "staging", cached.Environment, "a noop run leaves the cache alone")
}

func TestRetrieveNodeFailureContinues(t *testing.T) {
	// The node endpoint fails (500) but the catalog comes.
	f := &fake{envs: map[string]bool{"production": true}}
	mux := http.NewServeMux()
	mux.HandleFunc("/puppet/v3/node/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.Handle("/", f)
	s := newSetup(t, &fake{})
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, mux, "")
	cfg, err := ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}.TLSConfig()
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := server.New(server.HTTPClient(cfg, 5*time.Second, 5*time.Second), "https://localhost:"+port, "agent.test")
	res, err := c.Retrieve(context.Background(), s.options("production"))
	require.NoError(t, err)
	assert.Equal(t, "production", res.Environment)
	assert.Greater(t, res.NodeRetrieval, time.Duration(0))
	assert.Contains(t, s.logged(), `level=WARN msg="Unable to fetch my node definition, but the agent run will continue:"`)
	assert.Contains(t, s.logged(), `level=WARN msg="Error 500 on SERVER: boom"`)
}

func TestRetrieveCatalogEnvironmentLoop(t *testing.T) {
	// The catalog answers always from another environment: Puppet asks
	// again four times, then gives up.
	n := 0
	f := &fake{envs: map[string]bool{"production": true}, catalog: func(w http.ResponseWriter, r *http.Request, env string) {
		n++
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, catalogJSON(fmt.Sprintf("env%d", n), "x"))
	}}
	s := newSetup(t, f)
	o := s.options("production")
	o.EnvironmentFromCLI = true
	var prepared []string
	prep := o.Prepare
	o.Prepare = func(ctx context.Context, env string) ([]byte, error) {
		prepared = append(prepared, env)
		return prep(ctx, env)
	}
	_, err := s.c.Retrieve(context.Background(), o)
	require.Error(t, err)
	assert.ErrorIs(t, err, server.ErrNoCatalog)
	assert.Contains(t, err.Error(), "Catalog environment didn't stabilize after 4 fetches, aborting run")
	assert.Equal(t, []string{"production", "env1", "env2", "env3", "env4"}, prepared)
	assert.Contains(t, s.logged(), `msg="Local environment: 'production' doesn't match server specified environment 'env1', restarting agent run with environment 'env1'"`)
	_, _, err = server.LoadCache(s.cache, "agent.test")
	assert.ErrorIs(t, err, server.ErrNoCache)

	// One move then stable: the second catalog runs.
	n = 0
	f.catalog = func(w http.ResponseWriter, r *http.Request, env string) {
		w.Header().Set("Content-Type", "application/json")
		if env == "production" {
			io.WriteString(w, catalogJSON("moved", "x"))
			return
		}
		io.WriteString(w, catalogJSON(env, "x"))
	}
	res, err := s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, "moved", res.Environment)
	assert.Equal(t, 2, res.Tries)

	// strict_environment_mode: the moved catalog is refused.
	o.StrictEnvironmentMode = true
	_, err = s.c.Retrieve(context.Background(), o)
	assert.ErrorContains(t, err, "Not using catalog because its environment 'moved' does not match agent specified environment 'production' and strict_environment_mode is set")
}

func TestRetrieveCache(t *testing.T) {
	f := &fake{envs: map[string]bool{"production": true}}
	s := newSetup(t, f)
	o := s.options("production")
	o.EnvironmentFromCLI = true
	res, err := s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	require.False(t, res.Cached)
	first := res.Raw

	// The server fails: the cached catalog runs (on_failure).
	f.catalog = func(w http.ResponseWriter, r *http.Request, env string) { http.Error(w, "down for maintenance", 503) }
	s.logbuf.Reset()
	res, err = s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.True(t, res.Cached)
	assert.Equal(t, server.CacheOnFailure, res.CachedCatalogStatus)
	assert.Equal(t, first, res.Raw)
	assert.Contains(t, s.logged(), `level=ERROR msg="Could not retrieve catalog from remote server: Error 503 on SERVER: down for maintenance"`)
	assert.Contains(t, s.logged(), `level=INFO msg="Using cached catalog from environment 'production'"`)

	// A truncated answer: the cache stays whole and runs.
	f.catalog = func(w http.ResponseWriter, r *http.Request, env string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, catalogJSON("production", "new")[:100])
	}
	res, err = s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, first, res.Raw)
	_, raw, err := server.LoadCache(s.cache, "agent.test")
	require.NoError(t, err)
	assert.Equal(t, first, raw)

	// usecacheonfailure off: no catalog.
	o.UseCacheOnFailure = false
	s.logbuf.Reset()
	res, err = s.c.Retrieve(context.Background(), o)
	assert.ErrorIs(t, err, server.ErrNoCatalog)
	assert.ErrorIs(t, err, server.ErrBadCatalog, "the cause is kept")
	require.NotNil(t, res, "the environment and timings are said")
	assert.Nil(t, res.Catalog)
	assert.Equal(t, "production", res.Environment)
	assert.Contains(t, s.logged(), `level=WARN msg="Not using cache on failed catalog"`)
	assert.Contains(t, s.logged(), `level=ERROR msg="Could not retrieve catalog; skipping run"`)

	// The cached catalog of another environment is not used.
	o.UseCacheOnFailure = true
	o.Environment = "staging"
	s.logbuf.Reset()
	_, err = s.c.Retrieve(context.Background(), o)
	assert.ErrorIs(t, err, server.ErrNoCatalog)
	assert.Contains(t, s.logged(), `msg="Not using cached catalog because its environment 'production' does not match 'staging'"`)

	// use_cached_catalog: no request at all; the cached environment wins.
	f.requests = nil
	o.UseCachedCatalog = true
	o.EnvironmentFromCLI = false
	s.logbuf.Reset()
	res, err = s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.Empty(t, f.reqs())
	assert.Equal(t, server.CacheExplicitlyRequested, res.CachedCatalogStatus)
	assert.Equal(t, "production", res.Environment)
	assert.Contains(t, s.logged(), `msg="Local environment: 'staging' doesn't match the environment of the cached catalog 'production', switching agent to 'production'."`)

	// use_cached_catalog without a cache: the server is asked.
	require.NoError(t, os.Remove(filepath.Join(s.cache, "catalog", "agent.test.json")))
	f.catalog = nil
	o.Environment = "production"
	res, err = s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.False(t, res.Cached)
	assert.Equal(t, server.CacheNotUsed, res.CachedCatalogStatus)
}

func TestRetrieveRefusedServerUsesCache(t *testing.T) {
	f := &fake{envs: map[string]bool{"production": true}}
	s := newSetup(t, f)
	o := s.options("production")
	_, err := s.c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	c := server.New(s.hc, "https://"+addr, "agent.test")
	s.logbuf.Reset()
	res, err := c.Retrieve(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, server.CacheOnFailure, res.CachedCatalogStatus)
	assert.Contains(t, s.logged(), "Unable to fetch my node definition")
	assert.Contains(t, s.logged(), "connection refused")

	// A cancelled run does not fall back.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Retrieve(ctx, o)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestFactsJSONAgentSpecifiedEnvironment(t *testing.T) {
	now := time.Date(2026, 11, 26, 19, 0, 0, 5, time.UTC)
	for _, c := range []struct{ env, want string }{{"", "<absent>"}, {"staging", "staging"}} {
		b, err := server.FactsJSON("agent.test", map[string]any{"kernel": "Linux"}, server.FactsOptions{Now: now, AgentSpecifiedEnvironment: c.env})
		require.NoError(t, err)
		var doc struct {
			Values map[string]any `json:"values"`
		}
		require.NoError(t, json.Unmarshal(b, &doc))
		got, ok := doc.Values["agent_specified_environment"]
		if !ok {
			got = "<absent>"
		}
		assert.Equal(t, c.want, got)
		assert.Equal(t, "Linux", doc.Values["kernel"])
	}
}

// TestCatalogRedirectRepostsBody: a 301, 302 or 307 answer to the catalog
// POST is followed with the same method and body, as Puppet's agent does
// (Puppet::HTTP::Redirector copies the request's body and headers), where
// Go's client turns a 301 or 302 into a GET without the facts.
func TestCatalogRedirectRepostsBody(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			f := &fake{envs: map[string]bool{"production": true}}
			var seen []string
			var bodies []string
			var mu sync.Mutex
			mover := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type"))
				bodies = append(bodies, string(b))
				mu.Unlock()
				if r.URL.Query().Get("moved") == "" {
					http.Redirect(w, r, r.URL.Path+"?"+r.URL.RawQuery+"&moved=1", code)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
				f.ServeHTTP(w, r)
			})
			s := newSetup(t, &fake{})
			ca := sourcetest.NewPuppetCA(t, false)
			srv := ca.Serve(t, mover, "")
			cfg, err := ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}.TLSConfig()
			require.NoError(t, err)
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			s.c = server.New(server.HTTPClient(cfg, 5*time.Second, 5*time.Second), "https://localhost:"+port, "agent.test")

			facts, err := server.FactsJSON("agent.test", map[string]any{"weird": "a+b"}, server.FactsOptions{})
			require.NoError(t, err)
			cat, _, err := s.c.Catalog(context.Background(), "production", facts, "uuid-1")
			require.NoError(t, err)
			assert.Equal(t, "production", cat.Environment)
			require.Len(t, seen, 2)
			assert.Equal(t, []string{
				"POST /puppet/v3/catalog/agent.test?environment=production application/x-www-form-urlencoded",
				"POST /puppet/v3/catalog/agent.test?environment=production&moved=1 application/x-www-form-urlencoded",
			}, seen)
			assert.NotEmpty(t, bodies[0])
			assert.Equal(t, bodies[0], bodies[1], "the same body posted again")
			require.Len(t, f.forms, 1)
			assert.NotEmpty(t, f.forms[0].Get("facts"))
		})
	}
}
