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

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/agent/ssl"
	"github.com/pippet/pippet/applier/source"
	"github.com/pippet/pippet/applier/source/sourcetest"
)

// staticServer serves what a Puppet Server serves an agent that applies
// a static catalog: static_file_content by code_id, file_content and
// file_metadata(s) as usual (counted, so a test sees none was asked).
type staticServer struct {
	mu      sync.Mutex
	files   map[string]string // below the environment: modules/m/files/NAME
	byCode  map[string]map[string]string
	count   map[string]int
	queries []string
}

func (s *staticServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	endpoint, path, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/puppet/v3/"), "/")
	s.count[endpoint]++
	s.queries = append(s.queries, endpoint+" "+path+" "+r.URL.RawQuery)
	switch endpoint {
	case "static_file_content":
		files, ok := s.byCode[r.URL.Query().Get("code_id")]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"message":"no such code_id"}`)
			return
		}
		data, ok := files[path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, data)
	case "file_content":
		// puppet:///modules/m/NAME is modules/m/files/NAME.
		mod, rest, _ := strings.Cut(strings.TrimPrefix(path, "modules/"), "/")
		data, ok := s.files["modules/"+mod+"/files/"+rest]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, data)
	default:
		http.NotFound(w, r)
	}
}

func (s *staticServer) n(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[endpoint]
}

// inlined is a File's metadata as a static catalog inlines it.
func inlined(t *testing.T, src, content, rel string) json.RawMessage {
	t.Helper()
	name := strings.TrimPrefix(src, "puppet:///modules/m/")
	m := map[string]any{
		"path": "/srv/code/environments/production/modules/m/files/" + name, "relative_path": nil, "links": "manage",
		"owner": 0, "group": 0, "mode": 420, "checksum": map[string]any{"type": "sha256", "value": "{sha256}" + source.SumString("sha256", content)},
		"type": "file", "destination": nil, "source": src, "content_uri": "puppet:///modules/m/files/" + name,
	}
	if rel != "" {
		m["relative_path"] = rel
		if rel == "." {
			m["type"], m["checksum"] = "directory", map[string]any{"type": "ctime", "value": "{ctime}2026-11-26 12:00:00 +0000"}
		}
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func withStatic(t *testing.T, s *staticServer, st *source.Static) func(*source.Options) {
	ca := sourcetest.NewPuppetCA(t, false)
	srv := ca.Serve(t, s, "")
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	var p int
	fmt.Sscan(port, &p)
	return func(o *source.Options) {
		o.Puppet = &source.PuppetOptions{Server: "localhost", Port: p, TLS: ssl.Files{Dir: ca.SSLDir, Certname: ca.Certname}}
		o.Static = st
	}
}

func TestStaticCatalogSourceAsksNoMetadata(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "motd")
	s := &staticServer{
		files:  map[string]string{"modules/m/files/motd": "from file_content\n"},
		byCode: map[string]map[string]string{"code1": {"modules/m/files/motd": "version code1\n"}},
		count:  map[string]int{},
	}
	st, err := source.NewStatic("code1", map[string]json.RawMessage{dst: inlined(t, "puppet:///modules/m/motd", "version code1\n", "")}, nil)
	require.NoError(t, err)
	e := newEngine(t, withStatic(t, s, st))

	params := "{source: ['puppet:///modules/m/missing', 'puppet:///modules/m/motd']}"
	res := apply(t, e, dst, params)
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "version code1\n", readFile(t, dst))
	assert.Equal(t, 0, s.n("file_metadata"), "inlined metadata is not asked again: %v", s.queries)
	assert.Equal(t, 0, s.n("file_content"), "%v", s.queries)
	require.Equal(t, 1, s.n("static_file_content"), "%v", s.queries)
	assert.Contains(t, s.queries[0], "code_id=code1")
	assert.Contains(t, s.queries[0], "environment=production")

	// Converged: nothing fetched at all.
	res = apply(t, e, dst, params)
	assert.Equal(t, unchanged, outcomeOf(res), "%+v", res)
	assert.Equal(t, 1, s.n("static_file_content"))
	assert.Equal(t, 0, s.n("file_metadata"))

	// Another title is not inlined: asked as usual (and absent here).
	other := filepath.Join(root, "other")
	res = apply(t, e, other, params)
	assert.Equal(t, failed, outcomeOf(res), "%+v", res)
	assert.Equal(t, 2, s.n("file_metadata"), "both sources asked: %v", s.queries)
	assert.NoFileExists(t, other)
}

func TestStaticCatalogWithoutCodeIDReadsFileContent(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "motd")
	s := &staticServer{files: map[string]string{"modules/m/files/motd": "hello\n"}, byCode: map[string]map[string]string{}, count: map[string]int{}}
	st, err := source.NewStatic("", map[string]json.RawMessage{dst: inlined(t, "puppet:///modules/m/motd", "hello\n", "")}, nil)
	require.NoError(t, err)
	e := newEngine(t, withStatic(t, s, st))
	res := apply(t, e, dst, "{source: 'puppet:///modules/m/motd'}")
	assert.Equal(t, changed, outcomeOf(res), "%+v", res)
	assert.Equal(t, "hello\n", readFile(t, dst))
	assert.Equal(t, 0, s.n("file_metadata"))
	assert.Equal(t, 0, s.n("static_file_content"))
	assert.Equal(t, 1, s.n("file_content"), "%v", s.queries)
}

func TestStaticCatalogContentMustMatchInlinedChecksum(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "motd")
	require.NoError(t, os.WriteFile(dst, []byte("old\n"), 0o644))
	s := &staticServer{files: map[string]string{}, byCode: map[string]map[string]string{"c": {"modules/m/files/motd": "tampered\n"}}, count: map[string]int{}}
	st, err := source.NewStatic("c", map[string]json.RawMessage{dst: inlined(t, "puppet:///modules/m/motd", "promised\n", "")}, nil)
	require.NoError(t, err)
	e := newEngine(t, withStatic(t, s, st))
	res := apply(t, e, dst, "{source: 'puppet:///modules/m/motd'}")
	assert.Equal(t, failed, outcomeOf(res), "%+v", res)
	assert.Contains(t, res.Exception, "does not match its checksum")
	assert.Equal(t, "old\n", readFile(t, dst))
}

func TestStaticCatalogRecursiveListing(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "tree")
	s := &staticServer{files: map[string]string{}, count: map[string]int{},
		byCode: map[string]map[string]string{"c": {"modules/m/files/tree/a": "a\n", "modules/m/files/tree/sub/b": "b\n"}}}
	list := func(entries ...json.RawMessage) json.RawMessage {
		b, err := json.Marshal(entries)
		require.NoError(t, err)
		return b
	}
	src := "puppet:///modules/m/tree"
	dir := inlined(t, src, "", ".")
	sub := inlined(t, src, "", ".")
	sub = json.RawMessage(strings.Replace(string(sub), `"relative_path":"."`, `"relative_path":"sub"`, 1))
	sub = json.RawMessage(strings.Replace(string(sub), `files/tree"`, `files/tree/sub"`, 1))
	a := json.RawMessage(strings.Replace(string(inlined(t, "puppet:///modules/m/tree/a", "a\n", "a")), `"source":"puppet:///modules/m/tree/a"`, `"source":null`, 1))
	b := inlined(t, "puppet:///modules/m/tree/sub/b", "b\n", "sub/b")
	st, err := source.NewStatic("c", nil, map[string]map[string]json.RawMessage{dst: {src: list(dir, a, sub, b)}})
	require.NoError(t, err)
	e := newEngine(t, withStatic(t, s, st))
	res := apply(t, e, dst, "{ensure: directory, recurse: true, source: '"+src+"'}")
	assert.False(t, res.Failed, "%+v", res)
	assert.Equal(t, "a\n", readFile(t, filepath.Join(dst, "a")))
	assert.Equal(t, "b\n", readFile(t, filepath.Join(dst, "sub", "b")))
	assert.Equal(t, 0, s.n("file_metadatas")+s.n("file_metadata"), "%v", s.queries)
	assert.Equal(t, 2, s.n("static_file_content"), "%v", s.queries)
}

func TestStaticMetadataRefused(t *testing.T) {
	for name, raw := range map[string]string{
		"no source":   `{"path":"/x","relative_path":null,"owner":0,"group":0,"mode":420,"checksum":{"type":"sha256","value":"{sha256}` + strings.Repeat("0", 64) + `"},"type":"file"}`,
		"bad sum":     `{"path":"/x","source":"puppet:///modules/m/x","checksum":{"type":"sha256","value":"{sha256}zz"},"type":"file"}`,
		"no checksum": `{"path":"/x","source":"puppet:///modules/m/x","type":"file"}`,
		"bad type":    `{"path":"/x","source":"puppet:///modules/m/x","type":"fifo"}`,
		"not json":    `{"path":`,
	} {
		_, err := source.NewStatic("c", map[string]json.RawMessage{"/etc/x": json.RawMessage(raw)}, nil)
		assert.Error(t, err, name)
		if err != nil {
			assert.Contains(t, err.Error(), "File[/etc/x]", name)
		}
	}
	dir := `{"relative_path":".","type":"directory","checksum":{"type":"ctime","value":"{ctime}2026-11-26 12:00:00 +0000"}}`
	for name, list := range map[string]string{
		"escapes":  `[` + dir + `,{"relative_path":"../x","type":"directory"}]`,
		"no root":  `[{"relative_path":"x","type":"directory"}]`,
		"no rel":   `[` + dir + `,{"type":"directory"}]`,
		"absolute": `[` + dir + `,{"relative_path":"/etc","type":"directory"}]`,
	} {
		_, err := source.NewStatic("c", nil, map[string]map[string]json.RawMessage{"/d": {"puppet:///modules/m/d": json.RawMessage(list)}})
		assert.Error(t, err, name)
	}
}
