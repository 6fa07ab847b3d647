package file_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

// puppetServer is a fake Puppet Server's file serving: files by path
// below /modules/m/, the metadata's checksum computed from the content
// unless lie says otherwise; it counts requests by endpoint.
type puppetServer struct {
	mu    sync.Mutex
	files map[string]string
	lie   map[string]string // path → content served instead of the real one
	count map[string]int
}

func (s *puppetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/puppet/v3/"), "/", 2)
	endpoint, path := parts[0], strings.TrimPrefix(parts[1], "modules/m/")
	s.count[endpoint]++
	data, ok := s.files[path]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"Not Found: Could not find %s modules/m/%s","issue_kind":"RESOURCE_NOT_FOUND"}`, endpoint, path)
		return
	}
	switch endpoint {
	case "file_metadata":
		kind := r.URL.Query().Get("checksum_type")
		sum := "{" + kind + "}" + source.SumString(kind, data)
		if kind == "mtime" || kind == "ctime" {
			sum = "{" + kind + "}" + time.Now().Add(-time.Hour).UTC().Format("2006-01-02 15:04:05 -0700")
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":"/srv/%s","relative_path":null,"links":"manage","owner":0,"group":0,"mode":416,"checksum":{"type":%q,"value":%q},"type":"file","destination":null}`, path, kind, sum)
	case "file_content":
		if l, ok := s.lie[path]; ok {
			data = l
		}
		io.WriteString(w, data)
	default:
		http.NotFound(w, r)
	}
}

func (s *puppetServer) n(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[endpoint]
}

func withPuppet(t *testing.T, files map[string]string) (*puppetServer, func(*source.Options)) {
	ca := sourcetest.NewPuppetCA(t, false)
	ps := &puppetServer{files: files, lie: map[string]string{}, count: map[string]int{}}
	srv := ca.Serve(t, ps, "")
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	var p int
	fmt.Sscan(port, &p)
	return ps, func(o *source.Options) {
		o.Puppet = &source.PuppetOptions{Server: "localhost", Port: p, TLS: ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}}
	}
}

func TestPuppetSourceUnchangedFetchesNoContent(t *testing.T) {
	ps, opt := withPuppet(t, map[string]string{"motd": "hello\n"})
	e := newEngine(t, opt)
	root := t.TempDir()
	for _, kind := range []string{"md5", "sha256", "sha1lite", "sha512", "mtime"} {
		dst := filepath.Join(root, kind)
		params := "{source: 'puppet:///modules/m/motd', checksum: " + kind + "}"
		before := ps.n("file_content")
		assert.Equal(t, changed, outcomeOf(apply(t, e, dst, params)), kind)
		assert.Equal(t, "hello\n", readFile(t, dst))
		assert.Equal(t, before+1, ps.n("file_content"), kind)
		metas := ps.n("file_metadata")
		assert.Equal(t, unchanged, outcomeOf(apply(t, e, dst, params)), kind)
		assert.Equal(t, before+1, ps.n("file_content"), "%s: an unchanged file fetched its content", kind)
		assert.Equal(t, metas+1, ps.n("file_metadata"), "%s: one metadata request", kind)
	}
	// source_permissions use: the server's mode (0640 = 416).
	res := apply(t, e, filepath.Join(root, "perm"), "{source: 'puppet:///modules/m/motd', source_permissions: use}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, os.FileMode(0o640), modeOf(t, filepath.Join(root, "perm")))
}

func TestPuppetSourceChecksumMismatchInstallsNothing(t *testing.T) {
	ps, opt := withPuppet(t, map[string]string{"motd": "hello\n"})
	ps.lie["motd"] = "tampered\n"
	e := newEngine(t, opt)
	root := t.TempDir()
	dst := filepath.Join(root, "motd")
	res := apply(t, e, dst, "{source: 'puppet:///modules/m/motd'}")
	assert.Equal(t, failed, outcomeOf(res), "%+v", res)
	require.NotEmpty(t, res.Exception)
	assert.Contains(t, res.Exception, "does not match its checksum")
	assert.Contains(t, res.Exception, "not installed")
	assert.NoFileExists(t, dst)
	assert.Empty(t, listDir(t, root), "no temp file left behind")

	// An existing file is left as it was.
	require.NoError(t, os.WriteFile(dst, []byte("old\n"), 0o644))
	res = apply(t, e, dst, "{source: 'puppet:///modules/m/motd', checksum: md5}")
	assert.Equal(t, failed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "old\n", readFile(t, dst))
}

func TestPuppetSourceNotFound(t *testing.T) {
	_, opt := withPuppet(t, map[string]string{"motd": "hello\n"})
	e := newEngine(t, opt)
	dst := filepath.Join(t.TempDir(), "x")
	res := apply(t, e, dst, "{source: ['puppet:///modules/m/nope', 'puppet:///modules/m/gone']}")
	assert.Equal(t, failed, outcomeOf(res), "%+v", res)
	require.NotEmpty(t, res.Exception)
	assert.Contains(t, res.Exception, "could not retrieve information from environment production source(s) puppet:///modules/m/nope, puppet:///modules/m/gone")
	assert.NoFileExists(t, dst)
}

// TestPuppetRecursiveCopyListsOnce: a recursive copy from a puppet://
// source asks the server one listing (file_metadatas) and takes the
// directory's own metadata from its root entry, as Puppet's agent does;
// no file_metadata of the source's root. A root the listing would
// describe otherwise than file_metadata (a file whose checksum is not a
// digest) is asked for on its own.
func TestPuppetRecursiveCopyListsOnce(t *testing.T) {
	dir := t.TempDir()
	for rel, data := range map[string]string{"tree/a": "a\n", "tree/sub/b": "b\n", "one": "one\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(data), 0o644))
	}
	fs := sourcetest.NewFileServer(map[string]string{"m": dir})
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, fs, "")
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	var p int
	fmt.Sscan(port, &p)
	e := newEngine(t, func(o *source.Options) {
		o.Puppet = &source.PuppetOptions{Server: "localhost", Port: p, TLS: ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}}
	})
	root := t.TempDir()
	for _, tc := range []struct {
		name, params        string
		first               outcome
		metadata, metadatas int // requests per apply
	}{
		{"links manage", "{ensure: directory, recurse: true, source: 'puppet:///m/tree'}", changed, 0, 1},
		{"links follow", "{ensure: directory, recurse: true, links: follow, source: 'puppet:///m/tree'}", changed, 0, 1},
		{"two sources, the first missing", "{ensure: directory, recurse: true, source: ['puppet:///m/nope', 'puppet:///m/tree']}", changed, 0, 2},
		{"a file, md5", "{recurse: true, checksum: md5, source: 'puppet:///m/one'}", changed, 0, 1},
		{"a file, mtime", "{recurse: true, checksum: mtime, source: 'puppet:///m/one'}", changed, 1, 1},
	} {
		dst := filepath.Join(root, strings.ReplaceAll(tc.name, " ", "_"))
		for i, want := range []outcome{tc.first, unchanged} {
			fs.Reset()
			res := apply(t, e, dst, tc.params)
			assert.Equal(t, want, outcomeOf(res), "%s, apply %d: %+v", tc.name, i+1, res)
			assert.Equal(t, tc.metadata, fs.Count("file_metadata"), "%s, apply %d: file_metadata", tc.name, i+1)
			assert.Equal(t, tc.metadatas, fs.Count("file_metadatas"), "%s, apply %d: file_metadatas", tc.name, i+1)
		}
		if strings.Contains(tc.params, "tree") {
			assert.Equal(t, "b\n", readFile(t, filepath.Join(dst, "sub", "b")), tc.name)
		} else {
			assert.Equal(t, "one\n", readFile(t, dst), tc.name)
		}
	}
	res := apply(t, e, filepath.Join(root, "missing"), "{ensure: directory, recurse: true, source: ['puppet:///m/nope', 'puppet:///m/gone']}")
	assert.Equal(t, failed, outcomeOf(res), "%+v", res)
	assert.Contains(t, res.Exception, "could not retrieve information from environment production source(s) puppet:///m/nope, puppet:///m/gone")
}
