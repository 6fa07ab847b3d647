package file_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

func TestLocalSource(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	require.NoError(t, os.WriteFile(src, []byte("source content\n"), 0o600))
	e := newEngine(t)
	cases := []struct {
		path, params string
		want         outcome
	}{
		{"a", "{source: @ROOT@/src}", changed},
		{"a", "{source: @ROOT@/src}", unchanged},
		{"a", "{source: 'file://@ROOT@/src'}", unchanged},
		{"a", "{source: [@ROOT@/nope, @ROOT@/src]}", unchanged},
		{"b", "{ensure: file, source: @ROOT@/nope}", errored},
		{"b", "{ensure: file, source: 'ftp://example.com/x'}", errored},
		{"b", "{ensure: file, source: 'puppet:///modules/x/y'}", failed}, // no Puppet Server configured
		{"b", "{ensure: file, source: relative/x}", errored},
		{"a", "{source: @ROOT@/src, checksum: md5}", unchanged},
		{"a", "{source: @ROOT@/src, checksum: none}", errored},
		{"c", "{source: @ROOT@/src, source_permissions: use}", changed},
	}
	for i, tc := range cases {
		res := apply(t, e, filepath.Join(root, tc.path), strings.ReplaceAll(tc.params, "@ROOT@", root))
		assert.Equal(t, tc.want, outcomeOf(res), "step %d %s: %+v", i+1, tc.params, res)
	}
	assert.Equal(t, "source content\n", readFile(t, root+"/a"))
	assert.Equal(t, os.FileMode(0o644), modeOf(t, root+"/a"))
	assert.Equal(t, os.FileMode(0o600), modeOf(t, root+"/c"))
	assert.NoFileExists(t, root+"/b")

	// source_permissions use also corrects the mode of a file whose
	// content is already right (Puppet: "mode changed '0644' to '0600'");
	// use_when_creating leaves an existing file's mode alone.
	require.NoError(t, os.WriteFile(root+"/d", []byte("source content\n"), 0o644))
	require.NoError(t, os.Chmod(root+"/d", 0o644))
	res := apply(t, e, root+"/d", "{source: "+src+", source_permissions: use_when_creating}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
	assert.Equal(t, os.FileMode(0o644), modeOf(t, root+"/d"))
	res = apply(t, e, root+"/d", "{source: "+src+", source_permissions: use}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	require.Len(t, res.Events, 1)
	assert.Equal(t, "mode changed '0644' to '0600'", res.Events[0].Message)
	assert.Equal(t, os.FileMode(0o600), modeOf(t, root+"/d"))
	res = apply(t, e, root+"/d", "{source: "+src+", source_permissions: use}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
	res = apply(t, e, root+"/d", "{source: "+src+", source_permissions: use, mode: '0640'}")
	assert.Equal(t, changed, outcomeOf(res), "a given mode wins over the source's: %+v", res)
	assert.Equal(t, os.FileMode(0o640), modeOf(t, root+"/d"))

	// A changed source replaces the file; the event names checksums only.
	require.NoError(t, os.WriteFile(src, []byte("new content\n"), 0o600))
	res = apply(t, e, root+"/a", "{source: "+src+", show_diff: false}")
	require.Equal(t, changed, outcomeOf(res), "%+v", res)
	require.Len(t, res.Events, 1)
	assert.Equal(t, "content", res.Events[0].Property)
	assert.Contains(t, res.Events[0].Message, "{sha256}"+source.SumString(source.SHA256, "new content\n"))
	assert.NotContains(t, fmt.Sprint(res), "new content")
	assert.Equal(t, "new content\n", readFile(t, root+"/a"))

	// checksum mtime: a source newer than the file replaces it.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(root+"/a", old, old))
	res = apply(t, e, root+"/a", "{source: "+src+", checksum: mtime}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	res = apply(t, e, root+"/a", "{source: "+src+", checksum: mtime}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
}

// server counts requests and serves one body with configurable headers.
type server struct {
	body    atomic.Value // string
	headers atomic.Value // map[string]string
	heads   atomic.Int32
	gets    atomic.Int32
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		s.heads.Add(1)
	} else {
		s.gets.Add(1)
	}
	b := s.body.Load().(string)
	for k, v := range s.headers.Load().(map[string]string) {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method == http.MethodGet {
		io.WriteString(w, b)
	}
}

func newServer(body string, headers map[string]string) *server {
	s := &server{}
	s.body.Store(body)
	s.headers.Store(headers)
	return s
}

func TestHTTPSource(t *testing.T) {
	const content = "from the web\n"
	sha := source.SumString(source.SHA256, content)
	lastMod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		headers map[string]string
		body    string // served; defaults to content
		params  string
		first   outcome
		second  outcome
		gets    int32 // GETs over both runs (-1: don't check)
		check   func(t *testing.T, p string)
	}{
		{name: "sha256 header", headers: map[string]string{"X-Checksum-Sha256": sha}, first: changed, second: unchanged, gets: 1},
		{name: "sha1 header", headers: map[string]string{"X-Checksum-Sha1": source.SumString(source.SHA1, content)}, first: changed, second: unchanged, gets: 1},
		{name: "md5 header", headers: map[string]string{"X-Checksum-Md5": source.SumString(source.MD5, content)}, first: changed, second: unchanged, gets: 1},
		{name: "last-modified only", headers: map[string]string{"Last-Modified": lastMod.Format(http.TimeFormat)}, first: changed, second: unchanged, gets: 1,
			check: func(t *testing.T, p string) {
				fi, err := os.Stat(p)
				require.NoError(t, err)
				assert.True(t, fi.ModTime().Equal(lastMod), "mtime %v", fi.ModTime())
			}},
		{name: "no headers, same bytes", headers: map[string]string{}, first: changed, second: unchanged, gets: 2},
		{name: "checksum mismatch", headers: map[string]string{"X-Checksum-Sha256": strings.Repeat("0", 64)}, first: failed, second: failed, gets: 2,
			check: func(t *testing.T, p string) { assert.NoFileExists(t, p) }},
		{name: "checksum_value mismatch", headers: map[string]string{}, params: ", checksum_value: '" + strings.Repeat("1", 64) + "'", first: failed, second: failed, gets: -1,
			check: func(t *testing.T, p string) { assert.NoFileExists(t, p) }},
		{name: "checksum_value match", headers: map[string]string{}, params: ", checksum_value: " + sha, first: changed, second: unchanged, gets: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(content, tc.headers)
			hs := httptest.NewServer(srv)
			defer hs.Close()
			root := t.TempDir()
			p := filepath.Join(root, "a")
			e := newEngine(t)
			params := "{source: '" + hs.URL + "/f'" + tc.params + "}"
			res := apply(t, e, p, params)
			assert.Equal(t, tc.first, outcomeOf(res), "first: %+v", res)
			res = apply(t, e, p, params)
			assert.Equal(t, tc.second, outcomeOf(res), "second: %+v", res)
			if tc.gets >= 0 {
				assert.Equal(t, tc.gets, srv.gets.Load(), "GET requests")
			}
			if tc.first == changed {
				assert.Equal(t, content, readFile(t, p))
			}
			if tc.check != nil {
				tc.check(t, p)
			}
			assert.Subset(t, []string{"a"}, listDir(t, root), "no temp files")
		})
	}
}

func TestHTTPSourceChangesAndFailures(t *testing.T) {
	srv := newServer("one\n", map[string]string{})
	mux := http.NewServeMux()
	mux.Handle("/f", srv)
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/f", http.StatusMovedPermanently) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	stop := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Header().Set("X-Checksum-Sha256", strings.Repeat("a", 64))
		if r.Method == http.MethodHead {
			return
		}
		io.WriteString(w, strings.Repeat("x", 5000))
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer close(stop)
	root := t.TempDir()
	p := filepath.Join(root, "a")
	require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o644))
	e := newEngine(t, func(o *source.Options) { o.HTTPTimeout = time.Second })

	for _, bad := range []string{"/missing", "/broken", "/loop", "/slow", "/cut"} {
		res := apply(t, e, p, "{source: '"+hs.URL+bad+"'}")
		assert.Equal(t, failed, outcomeOf(res), "%s: %+v", bad, res)
		assert.Equal(t, "old\n", readFile(t, p), bad)
		assert.Equal(t, []string{"a"}, listDir(t, root), bad)
	}
	res := apply(t, e, p, "{source: ['"+hs.URL+"/missing', '"+hs.URL+"/redirect']}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "one\n", readFile(t, p))

	srv.body.Store("two\n")
	res = apply(t, e, p, "{source: '"+hs.URL+"/f'}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "two\n", readFile(t, p))
	res = apply(t, e, p, "{source: '"+hs.URL+"/f'}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
}

func TestHTTPSSourceWithCAFile(t *testing.T) {
	const content = "secure\n"
	srv, caFile := sourcetest.TLSServer(t, newServer(content, map[string]string{"X-Checksum-Sha256": source.SumString(source.SHA256, content)}))
	root := t.TempDir()

	e := newEngine(t)
	res := apply(t, e, root+"/a", "{source: '"+srv.URL+"/f'}")
	assert.Equal(t, failed, outcomeOf(res), "untrusted CA: %+v", res)
	assert.Contains(t, res.Exception, "certificate")
	assert.NoFileExists(t, root+"/a")

	e = newEngine(t, func(o *source.Options) { o.CAFile = caFile })
	res = apply(t, e, root+"/a", "{source: '"+srv.URL+"/f'}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, content, readFile(t, root+"/a"))
	res = apply(t, e, root+"/a", "{source: '"+srv.URL+"/f'}")
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
}

func TestSourceKindIsDesiredKind(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "src/f", "srcdir/g", "dest-dir/x")
	e := newEngine(t)
	res := apply(t, e, root+"/dest-dir", "{source: "+root+"/src/f}")
	assert.Equal(t, failed, outcomeOf(res), "a file source does not replace a directory without force: %+v", res)
	assert.DirExists(t, root+"/dest-dir")
	res = apply(t, e, root+"/dest-dir", "{source: "+root+"/src/f, force: true}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "src/f", readFile(t, root+"/dest-dir"))
	require.Len(t, res.Events, 1)
	assert.Equal(t, "file", res.Events[0].Desired)

	res = apply(t, e, root+"/copy", "{source: "+root+"/srcdir, recurse: true}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "srcdir/g", readFile(t, root+"/copy/g"))
	require.Len(t, res.Events, 1)
	assert.Equal(t, "directory", res.Events[0].Desired)

	res = apply(t, e, root+"/noop", "{source: "+root+"/src/f, noop: true}")
	assert.True(t, res.Noop)
	assert.False(t, res.Changed)
	require.Len(t, res.Events, 1)
	assert.Equal(t, "noop", res.Events[0].Status)
	assert.NoFileExists(t, root+"/noop")
}
