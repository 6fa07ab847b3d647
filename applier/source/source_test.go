package source_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

const body = "served content\n"

var (
	bodySHA256 = source.SumString(source.SHA256, body)
	bodySHA1   = source.SumString(source.SHA1, body)
	bodyMD5    = source.SumString(source.MD5, body)
)

func newFetcher(t *testing.T, o source.Options) *source.Fetcher {
	t.Helper()
	f, err := source.New(o)
	require.NoError(t, err)
	return f
}

func TestChecksums(t *testing.T) {
	long := strings.Repeat("a", 600)
	cases := []struct {
		kind, in, want string
	}{
		{source.MD5, "hello", "5d41402abc4b2a76b9719d911017c592"},
		{source.SHA1, "hello", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},
		{source.SHA256, "hello", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
		{source.SHA224, "hello", "ea09ae9cc6768c50fcee903ed054556e5bfc8347907f12598aa24193"},
		{source.MD5Lite, long, source.SumString(source.MD5, long[:512])},
		{source.SHA1Lite, long, source.SumString(source.SHA1, long[:512])},
		{source.SHA256Lite, long, source.SumString(source.SHA256, long[:512])},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			assert.Equal(t, tc.want, source.SumString(tc.kind, tc.in))
			assert.Equal(t, tc.want, source.SumBytes(tc.kind, []byte(tc.in)))
			got, err := source.SumReader(tc.kind, strings.NewReader(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.True(t, source.ValidHex(tc.kind, tc.want))
		})
	}
	assert.Equal(t, 128, source.HexLen(source.SHA512))
	assert.Equal(t, 96, source.HexLen(source.SHA384))
	assert.False(t, source.IsDigest(source.MTime))
	assert.False(t, source.IsDigest(source.None))
}

func TestParse(t *testing.T) {
	cases := []struct {
		in, scheme, path string
		err              string
	}{
		{in: "/etc/hosts", scheme: "file", path: "/etc/hosts"},
		{in: "file:///etc/hosts", scheme: "file", path: "/etc/hosts"},
		{in: "HTTP://example.com/x", scheme: "http", path: "/x"},
		{in: "relative/path", err: "relative"},
		{in: "file://otherhost/etc/hosts", err: "names a host"},
	}
	for _, tc := range cases {
		u, err := source.Parse(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.scheme, u.Scheme)
		assert.Equal(t, tc.path, u.Path)
	}
	f := newFetcher(t, source.Options{})
	_, err := f.Stat(context.Background(), "ftp://example.com/x", source.Query{})
	var us *source.UnsupportedSchemeError
	require.ErrorAs(t, err, &us)
	assert.Equal(t, "ftp", us.Scheme)
	assert.Contains(t, err.Error(), "'ftp'")
}

func TestLocal(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(body), 0o640))
	require.NoError(t, os.Symlink("f", filepath.Join(dir, "l")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	f := newFetcher(t, source.Options{})
	ctx := context.Background()

	m, err := f.Stat(ctx, filepath.Join(dir, "f"), source.Query{Checksum: source.SHA256})
	require.NoError(t, err)
	assert.Equal(t, source.TypeFile, m.Type)
	assert.Equal(t, bodySHA256, m.Checksum)
	assert.Equal(t, os.FileMode(0o640), m.Mode)
	assert.True(t, m.HasOwner)

	m, err = f.Stat(ctx, "file://"+filepath.Join(dir, "l"), source.Query{Checksum: source.MD5})
	require.NoError(t, err)
	assert.Equal(t, source.TypeLink, m.Type)
	assert.Equal(t, "f", m.Target)
	m, err = f.Stat(ctx, filepath.Join(dir, "l"), source.Query{Checksum: source.MD5, FollowLinks: true})
	require.NoError(t, err)
	assert.Equal(t, source.TypeFile, m.Type)
	assert.Equal(t, bodyMD5, m.Checksum)

	_, err = f.Stat(ctx, filepath.Join(dir, "nope"), source.Query{})
	assert.ErrorIs(t, err, source.ErrNotFound)
	_, err = f.Stat(ctx, filepath.Join(dir, "f", "under-a-file"), source.Query{})
	assert.ErrorIs(t, err, source.ErrNotFound)

	m, err = f.First(ctx, []string{filepath.Join(dir, "nope"), filepath.Join(dir, "d"), filepath.Join(dir, "f")}, source.Query{})
	require.NoError(t, err)
	assert.Equal(t, source.TypeDirectory, m.Type)
	_, err = f.First(ctx, []string{filepath.Join(dir, "nope"), filepath.Join(dir, "nope2")}, source.Query{})
	assert.ErrorIs(t, err, source.ErrNotFound)

	rc, err := f.Open(ctx, filepath.Join(dir, "f"))
	require.NoError(t, err)
	b, _ := io.ReadAll(rc)
	rc.Close()
	assert.Equal(t, body, string(b))
}

func TestLocalWalk(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a", "sub/b", "sub/deeper/c", "skip.tmp", "sub/skip.tmp"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644))
	}
	f := newFetcher(t, source.Options{})
	walk := func(o source.WalkOptions) ([]string, error) {
		var got []string
		err := f.Walk(context.Background(), dir, source.Query{Checksum: source.SHA256}, o, func(rel string, m *source.Metadata) error {
			got = append(got, rel)
			if m.Type == source.TypeFile {
				assert.Equal(t, source.SumString(source.SHA256, rel), m.Checksum, rel)
			}
			return nil
		})
		sort.Strings(got)
		return got, err
	}
	cases := []struct {
		name string
		o    source.WalkOptions
		want []string
		err  error
	}{
		{"all", source.WalkOptions{}, []string{".", "a", "skip.tmp", "sub", "sub/b", "sub/deeper", "sub/deeper/c", "sub/skip.tmp"}, nil},
		{"ignore", source.WalkOptions{Ignore: []string{"*.tmp", "deep*"}}, []string{".", "a", "sub", "sub/b"}, nil},
		{"limit 1", source.WalkOptions{Limit: 1}, []string{".", "a", "skip.tmp", "sub"}, nil},
		{"limit 2", source.WalkOptions{Limit: 2, Ignore: []string{"*.tmp"}}, []string{".", "a", "sub", "sub/b", "sub/deeper"}, nil},
		{"max files", source.WalkOptions{MaxFiles: 3}, nil, source.ErrTooManyFiles},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := walk(tc.o)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// handler serves body with the given headers; HEAD may be refused.
func handler(headers map[string]string, refuseHead bool, heads *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			if heads != nil {
				heads.Add(1)
			}
			if refuseHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
		}
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method == http.MethodGet {
			io.WriteString(w, body)
		}
	}
}

func TestHTTPHeaders(t *testing.T) {
	lastMod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	md5b64 := func() string { s := md5.Sum([]byte(body)); return base64.StdEncoding.EncodeToString(s[:]) }()
	cases := []struct {
		name     string
		headers  map[string]string
		ask      string
		kind     string
		sum      string
		modTime  time.Time
		refuse   bool
		errMatch string
	}{
		{name: "sha256", headers: map[string]string{"X-Checksum-Sha256": bodySHA256}, ask: source.SHA256, kind: source.SHA256, sum: bodySHA256},
		{name: "sha1 only, sha256 asked", headers: map[string]string{"X-Checksum-Sha1": bodySHA1}, ask: source.SHA256, kind: source.SHA1, sum: bodySHA1},
		{name: "md5 only", headers: map[string]string{"X-Checksum-Md5": bodyMD5}, ask: source.SHA256, kind: source.MD5, sum: bodyMD5},
		{name: "content-md5 base64", headers: map[string]string{"Content-MD5": md5b64}, ask: source.SHA256, kind: source.MD5, sum: bodyMD5},
		{name: "asked md5 among several", headers: map[string]string{"X-Checksum-Sha256": bodySHA256, "X-Checksum-Md5": bodyMD5}, ask: source.MD5, kind: source.MD5, sum: bodyMD5},
		{name: "strongest when asked is missing", headers: map[string]string{"X-Checksum-Sha1": bodySHA1, "X-Checksum-Md5": bodyMD5}, ask: source.SHA512, kind: source.SHA1, sum: bodySHA1},
		{name: "last-modified only", headers: map[string]string{"Last-Modified": lastMod.Format(http.TimeFormat)}, ask: source.SHA256, modTime: lastMod},
		{name: "nothing", headers: map[string]string{}, ask: source.SHA256},
		{name: "HEAD refused falls back to GET", headers: map[string]string{"X-Checksum-Sha256": bodySHA256}, ask: source.SHA256, kind: source.SHA256, sum: bodySHA256, refuse: true},
		{name: "malformed digest", headers: map[string]string{"X-Checksum-Sha256": "zz"}, ask: source.SHA256, errMatch: "not a sha256 digest"},
		{name: "md5 headers disagree", headers: map[string]string{"X-Checksum-Md5": bodyMD5, "Content-MD5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, ask: source.MD5, errMatch: "disagree"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var heads atomic.Int32
			srv := httptest.NewServer(handler(tc.headers, tc.refuse, &heads))
			defer srv.Close()
			f := newFetcher(t, source.Options{HTTPTimeout: 5 * time.Second})
			m, err := f.Stat(context.Background(), srv.URL+"/f", source.Query{Checksum: tc.ask})
			if tc.errMatch != "" {
				assert.ErrorContains(t, err, tc.errMatch)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, int32(1), heads.Load(), "one HEAD request")
			assert.Equal(t, source.TypeFile, m.Type)
			assert.Equal(t, tc.kind, m.ChecksumType)
			assert.Equal(t, tc.sum, m.Checksum)
			assert.True(t, tc.modTime.Equal(m.ModTime), "mtime %v", m.ModTime)
			assert.Equal(t, int64(len(body)), m.Size)
		})
	}
}

func TestHTTPFailures(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", handler(nil, false, nil))
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	release := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		if r.Method == http.MethodHead {
			return
		}
		io.WriteString(w, strings.Repeat("x", 1000))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	f := newFetcher(t, source.Options{HTTPTimeout: 300 * time.Millisecond, MaxRedirects: 3})
	ctx := context.Background()

	m, err := f.Stat(ctx, srv.URL+"/redirect", source.Query{})
	require.NoError(t, err)
	assert.Equal(t, source.TypeFile, m.Type)
	rc, err := f.Open(ctx, srv.URL+"/redirect")
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	rc.Close()
	require.NoError(t, err)
	assert.Equal(t, body, string(b))

	for _, p := range []string{"/missing", "/gone"} {
		_, err = f.Stat(ctx, srv.URL+p, source.Query{})
		assert.ErrorIs(t, err, source.ErrNotFound, p)
		_, err = f.Open(ctx, srv.URL+p)
		assert.ErrorIs(t, err, source.ErrNotFound, p)
	}

	_, err = f.Stat(ctx, srv.URL+"/broken", source.Query{})
	var se *source.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 500, se.Code)
	assert.False(t, errors.Is(err, source.ErrNotFound))

	_, err = f.Stat(ctx, srv.URL+"/loop", source.Query{})
	assert.ErrorContains(t, err, "redirects")

	start := time.Now()
	_, err = f.Stat(ctx, srv.URL+"/slow", source.Query{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.False(t, errors.Is(err, source.ErrNotFound))

	rc, err = f.Open(ctx, srv.URL+"/cut")
	require.NoError(t, err)
	_, err = io.ReadAll(rc)
	rc.Close()
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestHTTPSWithOwnCA(t *testing.T) {
	srv, caFile := sourcetest.TLSServer(t, handler(map[string]string{"X-Checksum-Sha256": bodySHA256}, false, nil))
	ctx := context.Background()

	f := newFetcher(t, source.Options{CAFile: caFile, HTTPTimeout: 5 * time.Second})
	m, err := f.Stat(ctx, srv.URL+"/f", source.Query{Checksum: source.SHA256})
	require.NoError(t, err)
	assert.Equal(t, bodySHA256, m.Checksum)
	rc, err := f.Open(ctx, srv.URL+"/f")
	require.NoError(t, err)
	b, _ := io.ReadAll(rc)
	rc.Close()
	assert.Equal(t, body, string(b))

	// The system roots do not know the test CA: no silent fallback.
	sys := newFetcher(t, source.Options{HTTPTimeout: 5 * time.Second})
	_, err = sys.Stat(ctx, srv.URL+"/f", source.Query{})
	assert.ErrorContains(t, err, "certificate")

	_, err = source.New(source.Options{CAFile: filepath.Join(t.TempDir(), "missing.pem")})
	assert.Error(t, err)
}

func TestLocalWalkLinkLoop(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "d", "up")))
	f := newFetcher(t, source.Options{})
	n := 0
	count := func(string, *source.Metadata) error { n++; return nil }
	// Managed links are entries, not directories to enter.
	require.NoError(t, f.Walk(context.Background(), dir, source.Query{}, source.WalkOptions{}, count))
	assert.Equal(t, 3, n) // ".", "d", "d/up"
	// Followed, the loop is cut instead of running forever.
	err := f.Walk(context.Background(), dir, source.Query{FollowLinks: true}, source.WalkOptions{}, count)
	assert.ErrorContains(t, err, "levels")
}
