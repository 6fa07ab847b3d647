package sourcetest

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier/source"
)

// FileServer is a fake Puppet Server's file serving (the v3 API's
// file_metadata, file_metadatas and file_content) over directories on
// disk, one per mount: puppet:///MOUNT/PATH is Mounts[MOUNT]/PATH. It
// answers as Puppet Server does: checksum_type, links (manage or follow),
// source_permissions (ignore: the server's own ids and mode 0644),
// recurse with ignore patterns, a directory's checksum its ctime (a
// file's its digest, or its mtime or ctime when asked), a
// missing path a JSON 404. It counts requests by endpoint and keeps every
// request's path and query.
type FileServer struct {
	// Mounts maps a mount's name to its directory.
	Mounts map[string]string

	mu       sync.Mutex
	count    map[string]int
	requests []string
}

// NewFileServer returns a FileServer over mounts.
func NewFileServer(mounts map[string]string) *FileServer {
	return &FileServer{Mounts: mounts, count: map[string]int{}}
}

// Count is the number of requests made to endpoint (file_metadata,
// file_metadatas or file_content).
func (s *FileServer) Count(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[endpoint]
}

// Requests are the request URIs (path and query) received so far.
func (s *FileServer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Reset forgets the counts and requests.
func (s *FileServer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count, s.requests = map[string]int{}, nil
}

type fakeMeta struct {
	Path         string  `json:"path"`
	RelativePath *string `json:"relative_path"`
	Links        string  `json:"links"`
	Owner        int     `json:"owner"`
	Group        int     `json:"group"`
	Mode         int     `json:"mode"`
	Checksum     struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"checksum"`
	Type        string  `json:"type"`
	Destination *string `json:"destination"`
}

func (s *FileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/puppet/v3/"), "/")
	s.mu.Lock()
	s.count[endpoint]++
	s.requests = append(s.requests, r.URL.RequestURI())
	s.mu.Unlock()
	mount, rel, _ := strings.Cut(rest, "/")
	dir, ok := s.Mounts[mount]
	notFound := func() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"Not Found: Could not find %s %s","issue_kind":"RESOURCE_NOT_FOUND"}`, endpoint, rest)
	}
	if !ok || strings.Contains("/"+rel+"/", "/../") {
		notFound()
		return
	}
	full := filepath.Join(dir, filepath.FromSlash(rel))
	q := r.URL.Query()
	follow := q.Get("links") == "follow"
	switch endpoint {
	case "file_content":
		f, err := os.Open(full)
		if err != nil {
			notFound()
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.Copy(w, f)
	case "file_metadata":
		m, err := s.meta(full, nil, q, follow)
		if err != nil {
			notFound()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m)
	case "file_metadatas":
		var list []*fakeMeta
		ignore := q["ignore"]
		err := s.walk(full, ".", q, follow, ignore, func(m *fakeMeta) { list = append(list, m) })
		if err != nil {
			notFound()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	default:
		http.NotFound(w, r)
	}
}

func (s *FileServer) walk(full, rel string, q map[string][]string, follow bool, ignore []string, add func(*fakeMeta)) error {
	r := rel
	m, err := s.meta(full, &r, q, follow)
	if err != nil {
		return err
	}
	add(m)
	if m.Type != source.TypeDirectory || (q["recurse"] == nil || q["recurse"][0] != "true") {
		return nil
	}
	ents, err := os.ReadDir(full)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if source.Ignored(e.Name(), ignore) {
			continue
		}
		if err := s.walk(filepath.Join(full, e.Name()), path.Join(rel, e.Name()), q, follow, ignore, add); err != nil {
			return err
		}
	}
	return nil
}

func (s *FileServer) meta(full string, rel *string, q map[string][]string, follow bool) (*fakeMeta, error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(full)
	if err != nil {
		return nil, err
	}
	st := fi.Sys().(*syscall.Stat_t)
	m := &fakeMeta{Path: full, RelativePath: rel, Links: "manage", Owner: int(st.Uid), Group: int(st.Gid), Mode: int(st.Mode & 0o7777)}
	if follow {
		m.Links = "follow"
	}
	if sp := first(q["source_permissions"]); sp == "" || sp == "ignore" {
		m.Owner, m.Group, m.Mode = os.Geteuid(), os.Getegid(), 0o644
	}
	kind := first(q["checksum_type"])
	if kind == "" {
		kind = source.SHA256
	}
	switch {
	case fi.Mode().IsRegular():
		m.Type = source.TypeFile
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		m.Checksum.Type, m.Checksum.Value = kind, "{"+kind+"}"+source.SumString(kind, string(b))
		switch kind {
		case source.MTime:
			m.Checksum.Value = "{mtime}" + fi.ModTime().Format("2006-01-02 15:04:05 -0700")
		case source.CTime:
			m.Checksum.Value = "{ctime}" + time.Unix(st.Ctim.Sec, st.Ctim.Nsec).Format("2006-01-02 15:04:05 -0700")
		}
	case fi.IsDir():
		m.Type = source.TypeDirectory
		ctime := time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
		m.Checksum.Type, m.Checksum.Value = "ctime", "{ctime}"+ctime.Format("2006-01-02 15:04:05 -0700")
	case fi.Mode()&fs.ModeSymlink != 0:
		m.Type = source.TypeLink
		t, err := os.Readlink(full)
		if err != nil {
			return nil, err
		}
		m.Destination = &t
		m.Checksum.Type = kind
		if b, err := os.ReadFile(full); err == nil {
			m.Checksum.Value = "{" + kind + "}" + source.SumString(kind, string(b))
		}
	default:
		return nil, fmt.Errorf("%s: cannot serve a %s", full, fi.Mode().Type())
	}
	return m, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
