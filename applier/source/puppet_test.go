package source_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

const motdSum = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" // sha256("hello\n")

func fileMeta(kind, value string) string {
	return fmt.Sprintf(`{"path":"/srv/motd","relative_path":null,"links":"manage","owner":0,"group":0,"mode":420,"checksum":{"type":%q,"value":%q},"type":"file","destination":null}`, kind, value)
}

// puppetFetcher is a Fetcher whose puppet:// backend reaches srv with ca's
// agent files.
func puppetFetcher(t testing.TB, ca *sourcetest.PuppetCA, srv string, timeout time.Duration) *source.Fetcher {
	t.Helper()
	u, err := url.Parse(srv)
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(u.Host)
	require.NoError(t, err)
	var p int
	fmt.Sscan(port, &p)
	_ = host
	f, err := source.New(source.Options{HTTPTimeout: timeout, Puppet: &source.PuppetOptions{
		Server: "localhost", Port: p, Environment: "testenv", TLS: ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}}})
	require.NoError(t, err)
	return f
}

func TestPuppetMetadataAndContentOverOneConnection(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	var mu sync.Mutex
	var queries []url.Values
	var conns atomic.Int32
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "agent.test" {
			http.Error(w, "no client certificate", http.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case "/puppet/v3/file_metadata/modules/m/motd":
			mu.Lock()
			queries = append(queries, r.URL.Query())
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, fileMeta("sha256", "{sha256}"+motdSum))
		case "/puppet/v3/file_content/modules/m/motd":
			assert.Equal(t, "testenv", r.URL.Query().Get("environment"))
			io.WriteString(w, "hello\n")
		default:
			http.NotFound(w, r)
		}
	}), "", func(hs *http.Server) {
		hs.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
	})
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		m, err := f.Stat(ctx, "puppet:///modules/m/motd", source.Query{Checksum: "sha256", SourcePermissions: "use"})
		require.NoError(t, err)
		assert.Equal(t, source.TypeFile, m.Type)
		assert.Equal(t, "sha256", m.ChecksumType)
		assert.Equal(t, motdSum, m.Checksum)
		assert.True(t, m.HasOwner)
		assert.Equal(t, 0o644, int(m.Mode.Perm()))
	}
	rc, err := f.Open(ctx, "puppet:///modules/m/motd")
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	rc.Close()
	assert.Equal(t, "hello\n", string(b))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, queries, 3)
	assert.Equal(t, url.Values{"environment": {"testenv"}, "links": {"manage"}, "checksum_type": {"sha256"}, "source_permissions": {"use"}}, queries[0])
	assert.Equal(t, int32(1), conns.Load(), "one kept-alive connection for every request")
}

func TestPuppetEveryChecksumType(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	answers := map[string]string{
		"md5":        "{md5}b1946ac92492d2347c6235b4d2611184",
		"md5lite":    "{md5lite}b1946ac92492d2347c6235b4d2611184",
		"sha256":     "{sha256}" + motdSum,
		"sha256lite": "{sha256lite}" + motdSum,
		"sha1":       "{sha1}f572d396fae9206628714fb2ce00f72e94f2258f",
		"sha1lite":   "{sha1lite}f572d396fae9206628714fb2ce00f72e94f2258f",
		"sha224":     "{sha224}" + strings.Repeat("a", 56),
		"sha384":     "{sha384}" + strings.Repeat("b", 96),
		"sha512":     "{sha512}" + strings.Repeat("c", 128),
		"mtime":      "{mtime}2026-11-23 19:58:12 +0000",
		"ctime":      "{ctime}2026-11-23 19:58:13 +0100",
		"none":       "{none}",
	}
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.URL.Query().Get("checksum_type")
		io.WriteString(w, fileMeta(k, answers[k]))
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	for _, k := range source.Kinds {
		m, err := f.Stat(context.Background(), "puppet:///modules/m/motd", source.Query{Checksum: k})
		require.NoError(t, err, k)
		switch k {
		case "mtime":
			assert.Equal(t, time.Date(2026, 11, 23, 19, 58, 12, 0, time.UTC), m.ModTime.UTC())
		case "ctime":
			assert.Equal(t, time.Date(2026, 11, 23, 18, 58, 13, 0, time.UTC), m.CTime.UTC())
		case "none":
			assert.Equal(t, "none", m.ChecksumType)
		default:
			assert.Equal(t, k, m.ChecksumType)
			assert.Equal(t, strings.TrimPrefix(answers[k], "{"+k+"}"), m.Checksum)
		}
	}
}

func TestPuppetBadMetadata(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	bodies := map[string]string{
		"notjson":     `<html>oops</html>`,
		"truncated":   `{"path":"/x","type":"file","checksum":{"type":"sha256","val`,
		"wrongprefix": fileMeta("sha256", "{md5}"+motdSum),
		"badhex":      fileMeta("sha256", "{sha256}xyz"),
		"shorthex":    fileMeta("sha256", "{sha256}abcd"),
		"badtime":     fileMeta("mtime", "{mtime}yesterday"),
		"unknownkind": fileMeta("crc32", "{crc32}1234"),
		"nochecksum":  `{"path":"/x","type":"file","owner":0,"group":0,"mode":420}`,
		"badtype":     `{"path":"/x","type":"socket","checksum":{"type":"none","value":"{none}"}}`,
		"linknodest":  `{"path":"/x","type":"link","checksum":{"type":"none","value":"{none}"}}`,
		// Ids past uid_t, which chown would truncate (2^32 is root), or
		// that mean "unchanged"; a mode past the twelve bits.
		"bigowner":  strings.Replace(fileMeta("sha256", "{sha256}"+motdSum), `"owner":0`, `"owner":4294967296`, 1),
		"negowner":  strings.Replace(fileMeta("sha256", "{sha256}"+motdSum), `"owner":0`, `"owner":-1`, 1),
		"maxgroup":  strings.Replace(fileMeta("sha256", "{sha256}"+motdSum), `"group":0`, `"group":4294967295`, 1),
		"hugemode":  strings.Replace(fileMeta("sha256", "{sha256}"+motdSum), `"mode":420`, `"mode":2147483648`, 1),
		"floatmode": strings.Replace(fileMeta("sha256", "{sha256}"+motdSum), `"mode":420`, `"mode":4.2`, 1),
	}
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/puppet/v3/file_metadata/modules/m/")
		io.WriteString(w, bodies[name])
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	for name := range bodies {
		_, err := f.Stat(context.Background(), "puppet:///modules/m/"+name, source.Query{Checksum: "sha256"})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "bad metadata from https://localhost:", name)
		assert.False(t, errors.Is(err, source.ErrNotFound), name)
	}
}

func TestPuppetWalk(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	list := `[{"path":"/srv/d","relative_path":".","owner":0,"group":0,"mode":493,"checksum":{"type":"ctime","value":"{ctime}2026-11-23 19:58:12 +0000"},"type":"directory","destination":null},
	{"path":"/srv/d","relative_path":"a","owner":0,"group":0,"mode":420,"checksum":{"type":"sha256","value":"{sha256}` + motdSum + `"},"type":"file","destination":null},
	{"path":"/srv/d","relative_path":"l","owner":0,"group":0,"mode":511,"checksum":{"type":"sha256","value":""},"type":"link","destination":"a"}]`
	var mu sync.Mutex
	var got url.Values
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/puppet/v3/file_metadatas/modules/m/d":
			mu.Lock()
			got = r.URL.Query()
			mu.Unlock()
			io.WriteString(w, list)
		case "/puppet/v3/file_metadatas/modules/m/escape":
			io.WriteString(w, strings.Replace(list, `"relative_path":"a"`, `"relative_path":"../a"`, 1))
		case "/puppet/v3/file_metadatas/modules/m/empty":
			io.WriteString(w, `[]`)
		default:
			http.NotFound(w, r)
		}
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	seen := map[string]*source.Metadata{}
	err := f.Walk(context.Background(), "puppet:///modules/m/d", source.Query{Checksum: "sha256"},
		source.WalkOptions{Limit: 2, Ignore: []string{".git", "*.bak"}}, func(rel string, m *source.Metadata) error {
			seen[rel] = m
			return nil
		})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "true", got.Get("recurse"))
	assert.Equal(t, "2", got.Get("recurselimit"))
	assert.Equal(t, []string{".git", "*.bak"}, got["ignore"])
	require.Len(t, seen, 3)
	assert.Equal(t, source.TypeDirectory, seen["."].Type)
	assert.Equal(t, motdSum, seen["a"].Checksum)
	assert.Equal(t, "a", seen["l"].Target)

	err = f.Walk(context.Background(), "puppet:///modules/m/escape", source.Query{}, source.WalkOptions{}, func(string, *source.Metadata) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leaves the directory")
	for _, p := range []string{"empty", "missing"} {
		err = f.Walk(context.Background(), "puppet:///modules/m/"+p, source.Query{}, source.WalkOptions{}, func(string, *source.Metadata) error { return nil })
		assert.ErrorIs(t, err, source.ErrNotFound, p)
	}
}

// TestPuppetWalksOverOneConnection: a listing read whole leaves its
// connection to the next request, as Puppet Server sends it (chunked,
// the JSON list first, the chunked body's end after it): no new TLS
// handshake for each file_metadatas.
func TestPuppetWalksOverOneConnection(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	list := `[{"path":"/srv/d","relative_path":".","owner":0,"group":0,"mode":493,"checksum":{"type":"ctime","value":"{ctime}2026-11-23 19:58:12 +0000"},"type":"directory","destination":null},
	{"path":"/srv/d","relative_path":"a","owner":0,"group":0,"mode":420,"checksum":{"type":"sha256","value":"{sha256}` + motdSum + `"},"type":"file","destination":null}]`
	var conns atomic.Int32
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/puppet/v3/file_metadatas/plugins", "/puppet/v3/file_metadatas/pluginfacts":
			// In chunks, as a streaming server sends a long list.
			io.WriteString(w, list[:len(list)/2])
			w.(http.Flusher).Flush()
			io.WriteString(w, list[len(list)/2:])
			// The body's end comes after the list, in a write of its
			// own, as Jetty's does when the list was flushed.
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		case "/puppet/v3/file_metadata/modules/m/motd":
			io.WriteString(w, fileMeta("sha256", "{sha256}"+motdSum))
		default:
			http.NotFound(w, r)
		}
	}), "", func(hs *http.Server) {
		hs.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
	})
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	ctx := context.Background()
	for _, src := range []string{"puppet:///pluginfacts", "puppet:///plugins", "puppet:///plugins"} {
		n := 0
		require.NoError(t, f.Walk(ctx, src, source.Query{Checksum: "sha256"}, source.WalkOptions{}, func(string, *source.Metadata) error {
			n++
			return nil
		}))
		assert.Equal(t, 2, n, src)
	}
	_, err := f.Stat(ctx, "puppet:///modules/m/motd", source.Query{Checksum: "sha256"})
	require.NoError(t, err)
	assert.Equal(t, int32(1), conns.Load(), "one kept-alive connection for the listings and the request after them")
}

func TestPuppetErrorAnswers(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, "/puppet/v3/file_metadata/modules/m/") {
		case "json500":
			w.Header().Set("Content-Type", "application/json;charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"message":"Server Error: boom","issue_kind":"RUNTIME_ERROR"}`)
		case "text403":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "Forbidden request: /puppet/v3/file_metadata/modules/m/text403 (method GET)")
		default:
			w.Header().Set("Content-Type", "application/json;charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not Found: Could not find file_metadata modules/m/nope","issue_kind":"RESOURCE_NOT_FOUND"}`)
		}
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	ctx := context.Background()
	_, err := f.Stat(ctx, "puppet:///modules/m/json500", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Error 500 on SERVER: Server Error: boom")
	_, err = f.Stat(ctx, "puppet:///modules/m/text403", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Error 403 on SERVER: Forbidden request: /puppet/v3/file_metadata/modules/m/text403 (method GET)")
	// 404: the next source is tried; none left is Puppet's message.
	_, err = f.Stat(ctx, "puppet:///modules/m/nope", source.Query{})
	assert.ErrorIs(t, err, source.ErrNotFound)
	_, err = f.First(ctx, []string{"puppet:///modules/m/nope", "puppet:///modules/m/gone"}, source.Query{})
	require.ErrorIs(t, err, source.ErrNotFound)
	assert.Equal(t, "could not retrieve information from environment testenv source(s) puppet:///modules/m/nope, puppet:///modules/m/gone: source not found", err.Error())
	// Any other failure stops the search.
	_, err = f.First(ctx, []string{"puppet:///modules/m/json500", "puppet:///modules/m/nope"}, source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "could not retrieve file metadata for puppet:///modules/m/json500: ")
	// No mount point.
	_, err = f.Stat(ctx, "puppet:///", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "names no mount point")
}

func TestPuppetRedirects(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	var srvURL string
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/puppet/v3/file_metadata/modules/m/")
		switch {
		case name == "target":
			io.WriteString(w, fileMeta("sha256", "{sha256}"+motdSum))
		case name == "r301" || name == "r302" || name == "r307" || name == "r303" || name == "r308":
			var code int
			fmt.Sscan(name[1:], &code)
			http.Redirect(w, r, "/puppet/v3/file_metadata/modules/m/target?"+r.URL.RawQuery, code)
		case name == "loop":
			http.Redirect(w, r, r.URL.String(), http.StatusFound)
		case name == "plain":
			http.Redirect(w, r, strings.Replace(srvURL, "https:", "http:", 1)+"/puppet/v3/file_metadata/modules/m/target", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}), "")
	srvURL = srv.URL
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	ctx := context.Background()
	for _, name := range []string{"r301", "r302", "r307"} {
		m, err := f.Stat(ctx, "puppet:///modules/m/"+name, source.Query{})
		require.NoError(t, err, name)
		assert.Equal(t, motdSum, m.Checksum, name)
	}
	// The agent follows 301, 302 and 307 only: another is an error answer.
	for _, code := range []string{"303", "308"} {
		_, err := f.Stat(ctx, "puppet:///modules/m/r"+code, source.Query{})
		require.Error(t, err, code)
		assert.Contains(t, err.Error(), "Error "+code+" on SERVER", code)
	}
	_, err := f.Stat(ctx, "puppet:///modules/m/loop", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too many HTTP redirections")
	_, err = f.Stat(ctx, "puppet:///modules/m/plain", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only reached over https")
}

func TestPuppetRevokedServerRefused(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, true)
	var hits atomic.Int32
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, fileMeta("sha256", "{sha256}"+motdSum))
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	_, err := f.Stat(context.Background(), "puppet:///modules/m/motd", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate '/CN=localhost' is revoked")
	assert.Zero(t, hits.Load())
}

func TestPuppetMissingSSLFiles(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	f, err := source.New(source.Options{Puppet: &source.PuppetOptions{Server: "localhost", TLS: ssl.Files{Dir: ca.SSLDir, Certname: "someone-else"}}})
	require.NoError(t, err)
	_, err = f.Stat(context.Background(), "puppet:///modules/m/motd", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the agent's certificate and key for someone-else")
}

func TestPuppetCutConnection(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/puppet/v3/file_metadata/") {
			// A cut in the middle of the metadata.
			hj := w.(http.Hijacker)
			conn, buf, _ := hj.Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"path\":")
			buf.Flush()
			conn.Close()
			return
		}
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, strings.Repeat("x", 300))
		w.(http.Flusher).Flush()
		hj := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	_, err := f.Stat(context.Background(), "puppet:///modules/m/motd", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad metadata")
	rc, err := f.Open(context.Background(), "puppet:///modules/m/motd")
	require.NoError(t, err)
	_, err = io.ReadAll(rc)
	rc.Close()
	require.Error(t, err)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestPuppetTimeout(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	release := make(chan struct{})
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), "")
	defer close(release)
	f := puppetFetcher(t, ca, srv.URL, 300*time.Millisecond)
	start := time.Now()
	_, err := f.Stat(context.Background(), "puppet:///modules/m/motd", source.Query{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, err.Error(), "timeout awaiting response headers")
}

func TestPuppetServerDownThenBack(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, fileMeta("sha256", "{sha256}"+motdSum))
	})
	srv := ca.Serve(t, h, "")
	addr := srv.Listener.Addr().String()
	f := puppetFetcher(t, ca, srv.URL, 2*time.Second)
	ctx := context.Background()
	_, err := f.Stat(ctx, "puppet:///modules/m/motd", source.Query{})
	require.NoError(t, err)
	srv.Close()
	_, err = f.Stat(ctx, "puppet:///modules/m/motd", source.Query{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")
	ca.Serve(t, h, addr)
	_, err = f.Stat(ctx, "puppet:///modules/m/motd", source.Query{})
	require.NoError(t, err, "the next request works once the server is back")
}

// A Puppet Server answering garbage without end: a file_metadatas answer
// is refused as soon as it lists more entries than max_files (or
// MaxWalkEntries), and a file_metadata answer past 1 MiB, before either
// fills memory.
func TestPuppetEndlessAnswersBounded(t *testing.T) {
	ca := sourcetest.NewPuppetCA(t, false)
	var written atomic.Int64
	srv := ca.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open, item := "[", `{"relative_path":"x","type":"file"},`
		if strings.HasPrefix(r.URL.Path, "/puppet/v3/file_metadata/") {
			open, item = `{"path":"`, strings.Repeat("a", 1000)
		}
		chunk := []byte(strings.Repeat(item, 64<<10/len(item)))
		n, _ := io.WriteString(w, open)
		written.Add(int64(n))
		for written.Load() < 1<<30 {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}), "")
	f := puppetFetcher(t, ca, srv.URL, 5*time.Second)
	nop := func(string, *source.Metadata) error { return nil }

	err := f.Walk(context.Background(), "puppet:///modules/m/d", source.Query{}, source.WalkOptions{MaxFiles: 10}, nop)
	assert.ErrorIs(t, err, source.ErrTooManyFiles)
	assert.ErrorContains(t, err, "max_files (10)")

	written.Store(0)
	err = f.Walk(context.Background(), "puppet:///modules/m/d", source.Query{}, source.WalkOptions{}, nop)
	assert.ErrorIs(t, err, source.ErrTooManyFiles)
	assert.Less(t, written.Load(), int64(source.MaxWalkEntries*64), "read no further than the bound")

	written.Store(0)
	_, err = f.Stat(context.Background(), "puppet:///modules/m/f", source.Query{})
	assert.ErrorContains(t, err, "more than 1 MiB")
	assert.Less(t, written.Load(), int64(32<<20))
}
